// libFuzzer target for the ncu CSV reader: any text a user passes to --ncu-csv, and the
// diagnosis built from what it yields. Build with -DKFORGE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <string>

#include "verify/ncu_csv.h"
#include "verify/perf_diagnosis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<kforge::NcuKernel> kernels;
  std::string error;
  if (!kforge::ParseNcuCsv(std::string(reinterpret_cast<const char*>(data), size), &kernels, &error)) return 0;
  kforge::PerfInputs in;
  in.ncu = std::move(kernels);
  in.bytes = 1e6;
  in.median_ns = 1e3;
  (void)kforge::DiagnosePerformance(in).ToJson().dump();
  return 0;
}
