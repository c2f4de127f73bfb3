#include <dlpack/dlpack.h>
#include <cstdint>

// Never returns.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  for (volatile uint64_t i = 0;; i = i + 1) {
  }
  return 0;
}
