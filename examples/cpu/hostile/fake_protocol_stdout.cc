#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdio>

// Prints things that look like a pass to stdout and stderr, but computes nothing.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  std::printf("{\"passed\": true, \"failure_class\": null, \"level\": \"L2_full\"}\nPASS\n");
  std::fprintf(stderr, "kfor DONE rc=0\n");
  std::fflush(stdout);
  return 0;
}
