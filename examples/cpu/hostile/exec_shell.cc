#include <dlpack/dlpack.h>
#include <cstdlib>

// Runs a shell command; the static checks name it before anything runs.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  return std::system("echo pwned > /tmp/kforge_pwned") == 0 ? 0 : 1;
}
