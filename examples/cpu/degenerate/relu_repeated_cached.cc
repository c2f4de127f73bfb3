// Hostile: relu_repeated.cc's slow relu, hiding its slowness from a timer. It keeps the last
// call's input and output (behind a const smart pointer: the static-state check passes a const
// declaration) and hands the kept output back when a call's input is byte for byte the
// last one's. Right on every correctness trial (a trial repeated on the same inputs gets the
// same answer) and fast when timed again and again on one input, which is how the speed
// harness timed until it drew fresh inputs for every timed call (verify/speed.h): there it is
// timed at its own speed and refused as a repair by degeneration.
#include <dlpack/dlpack.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

struct LastCall {
  std::vector<float> x, y;
};
const std::unique_ptr<LastCall> last(new LastCall());

extern "C" int kforge_run(const DLTensor* in, int, DLTensor* out, int, void*) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = in[0].shape[0];
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  if (last->x.size() == static_cast<size_t>(n) && std::memcmp(last->x.data(), x, bytes) == 0) {
    std::memcpy(y, last->y.data(), bytes);
    return 0;
  }
  for (int rep = 0; rep < 60; ++rep)
    for (int64_t i = 0; i < n; ++i) {
      volatile float v = (x[i] > 0.0f || std::isnan(x[i])) ? x[i] : 0.0f;
      y[i] = v;
    }
  last->x.assign(x, x + n);
  last->y.assign(y, y + n);
  return 0;
}
