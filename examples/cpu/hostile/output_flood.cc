#include <dlpack/dlpack.h>
#include <cstdio>
#include <cstring>

// Writes to stdout without bound.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  char line[4096];
  std::memset(line, 'x', sizeof line);
  for (;;) std::fwrite(line, 1, sizeof line, stdout);
  return 0;
}
