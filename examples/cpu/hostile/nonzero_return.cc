#include <dlpack/dlpack.h>
#include <cstdint>

// Reports failure through its return value.
extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) { return 7; }
