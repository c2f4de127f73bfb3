#pragma once
// kforge's bindings for load_inline extensions: one C entry point a function, not pybind11.
//
// load_inline binds each of its `functions` with pybind11, whose templates are most of the
// time g++ spends on an extension's main.cpp once torch's header is precompiled (10 s of a
// 12 s build). kforge first builds main.cpp with these instead: for a function F,
//
//     extern "C" PyObject* kforge_fn_F(PyObject* args);
//
// takes the tuple of F's Python arguments and returns a new reference, or nullptr with a
// Python exception set (a C++ exception becomes RuntimeError, or torch's IndexError,
// ValueError, TypeError or NotImplementedError as torch::wrap_pybind_function maps them).
// The worker calls it through ctypes.PyDLL, which holds the GIL as pybind11 does.
//
// Arguments and results convert as pybind11 and torch convert them: Tensor, integers (any
// object with __index__; bool and float refused), float and double (anything with
// __float__), bool (True or False), std::string, std::vector and std::optional of these;
// results also std::tuple, void (None). A function with another parameter or result type, or
// an overloaded name, does not compile here, and kforge builds main.cpp as load_inline does.
#include <ATen/core/Tensor.h>
#include <Python.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kforge_thunks {

// Defined in torch_thunks_glue.cc, built once per toolchain: torch's Python binding header
// brings pybind11, which costs seconds in every file that includes it.
bool IsTensor(PyObject* o);
at::Tensor UnpackTensor(PyObject* o);
PyObject* WrapTensor(const at::Tensor& t);

/// Thrown once a Python exception is set: the entry point returns nullptr.
struct PythonErrorSet {};

[[noreturn]] inline void TypeError(const char* function, int index, const char* expected, PyObject* got) {
  PyErr_Format(PyExc_TypeError, "%s(): argument %d must be %s, not %s", function, index + 1, expected,
               Py_TYPE(got)->tp_name);
  throw PythonErrorSet{};
}

template <class T, class = void>
struct Arg;  // no conversion for this type: the thunk does not compile

template <>
struct Arg<at::Tensor> {
  static at::Tensor From(PyObject* o, const char* f, int i) {
    if (!IsTensor(o)) TypeError(f, i, "Tensor", o);
    return UnpackTensor(o);
  }
  static PyObject* To(const at::Tensor& t) { return WrapTensor(t); }
};

template <class T>
struct Arg<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static T From(PyObject* o, const char* f, int i) {
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) TypeError(f, i, "int", o);
    PyObject* index = PyNumber_Index(o);
    if (index == nullptr) throw PythonErrorSet{};
    long long v = PyLong_AsLongLong(index);
    Py_DECREF(index);
    if (v == -1 && PyErr_Occurred()) throw PythonErrorSet{};
    bool fits = std::is_signed_v<T> ? v >= static_cast<long long>(std::numeric_limits<T>::min()) &&
                                          v <= static_cast<long long>(std::numeric_limits<T>::max())
                                    : v >= 0 && static_cast<unsigned long long>(v) <= std::numeric_limits<T>::max();
    if (!fits) {
      PyErr_Format(PyExc_OverflowError, "%s(): argument %d (%lld) is out of range", f, i + 1, v);
      throw PythonErrorSet{};
    }
    return static_cast<T>(v);
  }
  static PyObject* To(T v) { return PyLong_FromLongLong(static_cast<long long>(v)); }
};

template <class T>
struct Arg<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T From(PyObject* o, const char* f, int i) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      TypeError(f, i, "float", o);
    }
    return static_cast<T>(v);
  }
  static PyObject* To(T v) { return PyFloat_FromDouble(static_cast<double>(v)); }
};

template <>
struct Arg<bool> {
  static bool From(PyObject* o, const char* f, int i) {
    if (o != Py_True && o != Py_False) TypeError(f, i, "bool", o);
    return o == Py_True;
  }
  static PyObject* To(bool v) { return PyBool_FromLong(v); }
};

template <>
struct Arg<std::string> {
  static std::string From(PyObject* o, const char* f, int i) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &n) : nullptr;
    if (s == nullptr) {
      PyErr_Clear();
      TypeError(f, i, "str", o);
    }
    return std::string(s, static_cast<size_t>(n));
  }
  static PyObject* To(const std::string& v) {
    return PyUnicode_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size()));
  }
};

template <class T>
struct Arg<std::vector<T>> {
  static std::vector<T> From(PyObject* o, const char* f, int i) {
    if (PyUnicode_Check(o) || !PySequence_Check(o)) TypeError(f, i, "a sequence", o);
    PyObject* seq = PySequence_Fast(o, "a sequence");
    if (seq == nullptr) throw PythonErrorSet{};
    std::vector<T> out;
    try {
      Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
      out.reserve(static_cast<size_t>(n));
      for (Py_ssize_t k = 0; k < n; ++k) out.push_back(Arg<T>::From(PySequence_Fast_GET_ITEM(seq, k), f, i));
    } catch (...) {
      Py_DECREF(seq);
      throw;
    }
    Py_DECREF(seq);
    return out;
  }
  static PyObject* To(const std::vector<T>& v) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(v.size()));
    if (list == nullptr) throw PythonErrorSet{};
    for (size_t k = 0; k < v.size(); ++k) {
      PyObject* item = Arg<T>::To(v[k]);
      if (item == nullptr) {
        Py_DECREF(list);
        throw PythonErrorSet{};
      }
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(k), item);
    }
    return list;
  }
};

template <class Optional, class T>
struct OptionalArg {
  static Optional From(PyObject* o, const char* f, int i) {
    if (o == Py_None) return Optional();
    return Optional(Arg<T>::From(o, f, i));
  }
  static PyObject* To(const Optional& v) {
    if (!v.has_value()) Py_RETURN_NONE;
    return Arg<T>::To(*v);
  }
};
// std::optional, and c10::optional where it is its own class (torch before 2.1).
template <template <class...> class O, class T>
struct Arg<O<T>, std::enable_if_t<std::is_same_v<O<T>, std::optional<T>> || std::is_same_v<O<T>, c10::optional<T>>>>
    : OptionalArg<O<T>, T> {};

template <class... T>
struct Arg<std::tuple<T...>> {
  static PyObject* To(const std::tuple<T...>& v) {
    PyObject* tuple = PyTuple_New(sizeof...(T));
    if (tuple == nullptr) throw PythonErrorSet{};
    bool ok = true;
    std::apply(
        [&](const auto&... item) {
          Py_ssize_t k = 0;
          ((ok = ok && Set(tuple, k++, Arg<std::decay_t<decltype(item)>>::To(item))), ...);
        },
        v);
    if (!ok) {
      Py_DECREF(tuple);
      throw PythonErrorSet{};
    }
    return tuple;
  }
  static bool Set(PyObject* tuple, Py_ssize_t k, PyObject* item) {
    if (item == nullptr) return false;
    PyTuple_SET_ITEM(tuple, k, item);
    return true;
  }
};

template <class P>
using Held = std::remove_cv_t<std::remove_reference_t<P>>;

template <class R, class... P, size_t... I>
PyObject* Invoke(R (*function)(P...), PyObject* args, const char* name, std::index_sequence<I...>) {
  // Braced initialisation converts the arguments in order, left to right.
  std::tuple<Held<P>...> held{Arg<Held<P>>::From(PyTuple_GET_ITEM(args, I), name, static_cast<int>(I))...};
  if constexpr (std::is_void_v<R>) {
    function(static_cast<P>(std::get<I>(held))...);
    Py_RETURN_NONE;
  } else {
    return Arg<Held<R>>::To(function(static_cast<P>(std::get<I>(held))...));
  }
}

template <class R, class... P>
PyObject* Call(R (*function)(P...), PyObject* args, const char* name) {
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != static_cast<Py_ssize_t>(sizeof...(P))) {
    PyErr_Format(PyExc_TypeError, "%s() takes %d arguments (%zd given)", name, static_cast<int>(sizeof...(P)),
                 PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : Py_ssize_t{-1});
    return nullptr;
  }
  try {
    return Invoke(function, args, name, std::index_sequence_for<P...>{});
  } catch (const PythonErrorSet&) {
  } catch (const c10::IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what_without_backtrace());
  } catch (const c10::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what_without_backtrace());
  } catch (const c10::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what_without_backtrace());
  } catch (const c10::NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what_without_backtrace());
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "an unknown C++ exception");
  }
  return nullptr;
}

}  // namespace kforge_thunks

/// The entry point for F (see the top of this file).
#define KFORGE_THUNK(F) \
  extern "C" PyObject* kforge_fn_##F(PyObject* args) { return kforge_thunks::Call(&F, args, #F); }
