#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdlib>

// Dies in a static initialiser, before kforge_run is ever called.
static const int boom = (std::abort(), 0);
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) { return boom; }
