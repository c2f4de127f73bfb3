// libFuzzer target for the engine's side of the export socket (verify/gpu_judge.h): any bytes
// a worker can write on it, then its close. Build with -DKFORGE_FUZZ=ON (clang).
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "core/clock.h"
#include "core/frames.h"
#include "verify/gpu_judge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 60000) return 0;  // what one write leaves in the socket's buffer
  kforge::ScopedFd worker, engine;
  kforge::StreamSocketPair(&worker, &engine);
  if (::write(worker.get(), data, size) != static_cast<ssize_t>(size)) return 0;
  worker.Reset();
  kforge::LiveClock clock;
  kforge::ExportInbox inbox(std::move(engine), clock);
  for (int64_t trial = 0; trial < 3; ++trial)
    for (int64_t output = 0; output < 2; ++output)
      for (auto form : {kforge::ExportForm::kOutput, kforge::ExportForm::kReference64})
        (void)inbox.Take(trial, output, form, 1000);
  inbox.Judged(2);
  return 0;
}
