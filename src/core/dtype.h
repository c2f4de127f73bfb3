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

/// Reads element i of a buffer of type t as a double (fp16/bf16 decoded exactly).
double LoadAsDouble(const void* data, DType t, size_t i);
/// Stores v into element i, rounding to the type (round-to-nearest-even for fp16/bf16).
void StoreFromDouble(void* data, DType t, size_t i, double v);
/// Rounds a double to the nearest value representable in t, returned as a double.
double RoundToDType(double v, DType t);

}  // namespace kforge
