#include "core/dtype.h"

#include <cmath>
#include <cstring>

#include "core/check.h"

namespace kforge {
namespace {

uint16_t FloatToHalfBits(float f) {
  _Float16 h = static_cast<_Float16>(f);  // GCC implements IEEE binary16, round-to-nearest-even.
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

float HalfBitsToFloat(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

uint16_t FloatToBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep it a quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float Bf16BitsToFloat(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
  }
  return "?";
}

bool TryParseDType(std::string_view name, DType* out) {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64}) {
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
    case DType::kBFloat16: return 2;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kFloat64:
    case DType::kInt64: return 8;
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
    case DType::kFloat16: d.code = kDLFloat; break;
    case DType::kBFloat16: d.code = kDLBfloat; break;
    case DType::kInt32:
    case DType::kInt64: d.code = kDLInt; break;
  }
  return d;
}

double LoadAsDouble(const void* data, DType t, size_t i) {
  switch (t) {
    case DType::kFloat32: return static_cast<const float*>(data)[i];
    case DType::kFloat64: return static_cast<const double*>(data)[i];
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::kBFloat16: return Bf16BitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
  }
  KF_CHECK(false);
  return 0;
}

void StoreFromDouble(void* data, DType t, size_t i, double v) {
  switch (t) {
    case DType::kFloat32: static_cast<float*>(data)[i] = static_cast<float>(v); return;
    case DType::kFloat64: static_cast<double*>(data)[i] = v; return;
    case DType::kFloat16:
      static_cast<uint16_t*>(data)[i] = FloatToHalfBits(static_cast<float>(v));
      return;
    case DType::kBFloat16:
      static_cast<uint16_t*>(data)[i] = FloatToBf16Bits(static_cast<float>(v));
      return;
    case DType::kInt32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v); return;
    case DType::kInt64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); return;
  }
  KF_CHECK(false);
}

double RoundToDType(double v, DType t) {
  unsigned char buf[8];
  StoreFromDouble(buf, t, 0, v);
  return LoadAsDouble(buf, t, 0);
}

}  // namespace kforge
