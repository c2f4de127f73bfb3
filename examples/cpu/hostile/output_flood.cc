#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdio>

// Writes to stdout without bound.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  static char line[4096];
  for (auto& c : line) c = 'x';
  for (;;) std::fwrite(line, 1, sizeof line, stdout);
  return 0;
}
