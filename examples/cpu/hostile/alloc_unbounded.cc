#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>

// Allocates and touches memory until something gives.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  for (;;) {
    char* p = static_cast<char*>(std::malloc(64 << 20));
    std::memset(p, 1, 64 << 20);  // a null p crashes here: memory exhaustion
  }
  return 0;
}
