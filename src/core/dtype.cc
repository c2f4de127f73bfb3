#include "core/dtype.h"

#include <cmath>
#include <cstring>

#include "core/check.h"

namespace kforge {
namespace {

// IEEE binary16 conversions by bit manipulation (portable across compilers; clang on x86
// lacks _Float16 before version 15). Round to nearest, ties to even; NaN stays NaN.
uint16_t FloatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs > 0x7F800000) return static_cast<uint16_t>(sign | 0x7E00);   // NaN
  if (abs >= 0x477FF000) return static_cast<uint16_t>(sign | 0x7C00);  // overflow (after rounding) -> Inf
  if (abs < 0x38800000) {                                      // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000) return static_cast<uint16_t>(sign);  // rounds to zero
    uint32_t mant = (abs & 0x7FFFFF) | 0x800000;
    int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));  // rebias exponent 127 -> 15
  uint32_t rem = abs & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

uint16_t FloatToBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep it a quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);                                      // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal
    uint32_t bits;
    std::memcpy(&bits, &out, 4);
    bits |= sign;
    std::memcpy(&out, &bits, 4);
    return out;
  }
  uint32_t bits = exp == 0x1F ? (sign | 0x7F800000 | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  std::memcpy(&out, &bits, 4);
  return out;
}

float Bf16BitsToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
  }
  return "?";
}

bool TryParseDType(std::string_view name, DType* out) {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64}) {
    if (DTypeName(t) == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
  }
  return 0;
}

bool IsFloat(DType t) { return t != DType::kInt32 && t != DType::kInt64; }

DLDataType ToDLDataType(DType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(DTypeSize(t) * 8);
  switch (t) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kFloat16:
      d.code = kDLFloat;
      break;
    case DType::kBFloat16:
      d.code = kDLBfloat;
      break;
    case DType::kInt32:
    case DType::kInt64:
      d.code = kDLInt;
      break;
  }
  return d;
}

void StoreFromDouble(void* data, DType t, size_t i, double v) {
  switch (t) {
    case DType::kFloat32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      return;
    case DType::kFloat64:
      static_cast<double*>(data)[i] = v;
      return;
    case DType::kFloat16:
      static_cast<uint16_t*>(data)[i] = FloatToHalfBits(static_cast<float>(v));
      return;
    case DType::kBFloat16:
      static_cast<uint16_t*>(data)[i] = FloatToBf16Bits(static_cast<float>(v));
      return;
    case DType::kInt32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v);
      return;
    case DType::kInt64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v);
      return;
  }
  KF_CHECK(false);
}

double RoundToDType(double v, DType t) {
  unsigned char buf[8];
  StoreFromDouble(buf, t, 0, v);
  return LoadAsDouble(buf, t, 0);
}

}  // namespace kforge
