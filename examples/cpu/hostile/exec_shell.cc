#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdlib>

// Runs a shell command (system() forks and execs /bin/sh).
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  return std::system("echo pwned > /tmp/kforge_pwned") == 0 ? 0 : 1;
}
