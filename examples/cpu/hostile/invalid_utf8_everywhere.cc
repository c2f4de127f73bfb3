#include <dlpack/dlpack.h>
#include <cstdio>

#warning "raw bytes in a compiler message: \xff\xfe\xc3 end"

// Invalid UTF-8 in every text the engine quotes: compiler output (the #warning above), the
// candidate's output tail, and a static-check quote cut at 80 bytes in the middle of a
// character. JSON cannot hold these bytes; they once aborted verify, repair and resume.
static const char* banner = "ééééééééééééééééééééééééééééééééééééééééééééééééééé\xff";

extern "C" int kforge_run(const DLTensor*, int, DLTensor*, int, void*) {
  std::fprintf(stderr, "%s \xc3\x28 \xa0\xa1 \xf0\x28\x8c\xbc\n", banner);
  return 3;
}
