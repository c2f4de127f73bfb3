#pragma once
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kforge {

/// Element types a task may declare. Kept small on purpose; each one needs a DLPack code,
/// a poison pattern and a tolerance.
enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64 };

std::string_view DTypeName(DType t);
/// Parses "float32" etc.; returns false for an unknown name.
bool TryParseDType(std::string_view name, DType* out);
size_t DTypeSize(DType t);
bool IsFloat(DType t);
DLDataType ToDLDataType(DType t);

/// An fp16 or bf16 bit pattern decoded exactly (every value of both is a float).
float HalfBitsToFloat(uint16_t bits);
float Bf16BitsToFloat(uint16_t bits);

/// A dtype as a type, for loops specialised per element type: WithDType(t, fn) calls
/// fn(DTypeTag<t>{}), and LoadAs<D> reads an element without a switch per element.
template <DType D>
struct DTypeTag {
  static constexpr DType value = D;
};

template <typename Fn>
decltype(auto) WithDType(DType t, Fn&& fn) {
  switch (t) {
    case DType::kFloat64:
      return fn(DTypeTag<DType::kFloat64>{});
    case DType::kFloat16:
      return fn(DTypeTag<DType::kFloat16>{});
    case DType::kBFloat16:
      return fn(DTypeTag<DType::kBFloat16>{});
    case DType::kInt32:
      return fn(DTypeTag<DType::kInt32>{});
    case DType::kInt64:
      return fn(DTypeTag<DType::kInt64>{});
    case DType::kFloat32:
      break;
  }
  return fn(DTypeTag<DType::kFloat32>{});
}

/// Element i of a buffer of type D as a double (fp16/bf16 decoded exactly).
template <DType D>
inline double LoadAs(const void* data, size_t i) {
  if constexpr (D == DType::kFloat32) return static_cast<const float*>(data)[i];
  if constexpr (D == DType::kFloat64) return static_cast<const double*>(data)[i];
  if constexpr (D == DType::kFloat16) return HalfBitsToFloat(static_cast<const uint16_t*>(data)[i]);
  if constexpr (D == DType::kBFloat16) return Bf16BitsToFloat(static_cast<const uint16_t*>(data)[i]);
  if constexpr (D == DType::kInt32) return static_cast<const int32_t*>(data)[i];
  if constexpr (D == DType::kInt64) return static_cast<double>(static_cast<const int64_t*>(data)[i]);
}

/// Reads element i of a buffer of type t as a double (fp16/bf16 decoded exactly).
inline double LoadAsDouble(const void* data, DType t, size_t i) {
  return WithDType(t, [&](auto d) { return LoadAs<decltype(d)::value>(data, i); });
}
/// Stores v into element i, rounding to the type (round-to-nearest-even for fp16/bf16).
void StoreFromDouble(void* data, DType t, size_t i, double v);
/// Rounds a double to the nearest value representable in t, returned as a double.
double RoundToDType(double v, DType t);
/// RoundToDType for a type known at compile time (float32 and float64 inline).
template <DType D>
inline double RoundTo(double v) {
  if constexpr (D == DType::kFloat32) return static_cast<float>(v);
  if constexpr (D == DType::kFloat64) return v;
  return RoundToDType(v, D);
}

}  // namespace kforge
