// The part of kforge's load_inline bindings (torch_thunks.h) that needs torch's Python
// binding header: built once per toolchain into libkforge_torch_glue.so, which every
// extension built with the thunks links.
#include <torch/csrc/autograd/python_variable.h>

#include "torch_thunks.h"

namespace kforge_thunks {

bool IsTensor(PyObject* o) { return THPVariable_Check(o); }

at::Tensor UnpackTensor(PyObject* o) { return THPVariable_Unpack(o); }

PyObject* WrapTensor(const at::Tensor& t) { return THPVariable_Wrap(t); }

}  // namespace kforge_thunks
