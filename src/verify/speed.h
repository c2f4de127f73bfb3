#pragma once
// The speed of a candidate on its task, for judging a repair against the near-miss it
// repaired: a "repair" that makes the kernel much slower (a tiled kernel replaced by a naive
// loop) is correct and still not what the user asked for.
//
// Design note:
//  - One figure per candidate: the median time of a call, with p10, p90 and the count, on one
//    case (among SpeedOptions::cases when given). On a GPU, the task's first bench case timed
//    by the GPU runner's loop (CUDA events on the given stream, L2 flushed, the engine's go;
//    kforge bench's loop). On the CPU, the task's largest full case (bench shapes are sized
//    for a GPU) timed by the CPU time the candidate's processes used in each call (or its wall
//    time where smaller: a kernel's threads add up their CPU time), which the engine reads
//    from the kernel's per-process clocks (outside the candidate's reach; the
//    engine's wall clock where they cannot be read), less the harness's own work per call (a
//    no-op kernel's median on the same case: the control socket, the runner's checks of the
//    arena, which dominate a small kernel's call). The figure names its clock. CPU time, not
//    wall time: on a busy machine (CI running tests two at a time) a call's wall time grows
//    with the time it waits for a CPU, by more than half at times, and a repair that does the
//    near-miss's work was judged twice as slow; the CPU time of the same calls does not wait.
//  - A difference smaller than the clock's resolution or than the harness's own time per
//    call is not a difference of speed: a small case's figures are mostly noise.
//  - Figures are compared only when they were taken together: a repair is timed alongside
//    the near-miss it repairs (MeasureSpeeds), not against a figure from minutes before.
//  - Speed is a value taken from the world: the repair loop stores it in the verdict it
//    records (Verdict::speed), so a replay reads it back instead of timing again.
//  - A candidate that cannot be timed (it does not build, crashes, times out) has no speed;
//    a comparison with it is "unknown", never a guess. A CPU kernel faster than the harness's
//    own noise is measured at 1 ns: fast, whatever its exact figure.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend_kind.h"
#include "core/task.h"
#include "exec/sandbox.h"

namespace kforge {

class Machine;
class CancellationToken;

enum class SpeedClock {
  kNone,     ///< not measured
  kCpuWall,  ///< the engine's wall clock around each call on the CPU
  kCpuTime,  ///< per call, the CPU time of the candidate's processes (read by the engine) or the wall time, the smaller
  kCudaEvents,  ///< the GPU runner's CUDA events around each call
};
std::string_view SpeedClockName(SpeedClock c);

/// Why a timing stopped: every candidate's figure was as precise as asked (SpeedOptions::
/// target_rse), the time cap passed, or the most calls allowed were made.
enum class SpeedStop { kReps, kPrecise, kTimeCap };
std::string_view SpeedStopName(SpeedStop s);

/// Standard deviation over sqrt(n) times the mean of `samples`: how precisely their mean is
/// known, relative to it. Infinite for fewer than two samples or a mean of 0.
double RelativeStandardError(const std::vector<double>& samples);

struct Speed {
  SpeedClock clock = SpeedClock::kNone;
  std::string case_name;
  int reps = 0;
  double median_ns = 0, p10_ns = 0, p90_ns = 0;
  /// The relative standard error of the mean of its timed calls, each net of the harness's
  /// call of the same round (standard deviation over sqrt(reps) times the mean); on a GPU, of
  /// its batches' medians. 0: not computed.
  double rse = 0;
  SpeedStop stopped = SpeedStop::kReps;  ///< why the timing stopped where it did
  /// On the CPU: the harness's own time per call (a no-op kernel's median), taken off the figures.
  double harness_ns = 0;
  std::string problem;  ///< why it was not measured ("" when it was)
  /// Not measured because of what the candidate did (it crashed, failed, modified an input or
  /// left threads while timed), not because of a limit of the measurement.
  bool fault = false;
  bool measured() const { return clock != SpeedClock::kNone && median_ns > 0; }
  nlohmann::json ToJson() const;
  /// Null or malformed JSON is a speed not measured.
  static Speed FromJson(const nlohmann::json& j);
};

struct SpeedOptions {
  int warmup = 2;
  /// Timed calls: at least `reps`, then more until every candidate's relative standard error
  /// is at most `target_rse`, `time_cap_ms` of timing have passed, or `max_reps` were made (on
  /// a GPU: batches of `reps` calls, the error that of the batches' medians).
  int reps = 11;
  int max_reps = 201;
  double target_rse = 0.001;
  int64_t time_cap_ms = 2000;
  int64_t call_timeout_ms = 30000;
  uint64_t seed = 0;      ///< draws the inputs
  std::string cache_dir;  ///< compile cache; empty for the machine's
  SandboxLimits limits;
  const CancellationToken* cancel = nullptr;
  /// When not empty, the names of the cases a speed may be measured on (the repair loop: the
  /// cases whose trials the near-miss passed, where it does all the work a correct kernel
  /// does — a near-miss that skips the tail of a tiled loop is fast only where it is wrong).
  std::set<std::string> cases;
  /// The sources (by index) whose timed outputs need only be written, not right: the near-miss
  /// a repair is timed beside, wrong somewhere by definition - on a fresh input of the timed
  /// case it may be, and a near-miss left unmeasured would leave the repair unjudged.
  std::set<size_t> written_only;
};

/// The case a speed is measured on: the first bench case on a GPU (else the largest full
/// case, as on the CPU), among `allowed` when it is not empty; null when none is.
const Case* SpeedCase(const Task& task, BackendKind backend, const std::set<std::string>& allowed = {});

/// Builds each of `sources` for `backend` and times them on one case and one set of inputs;
/// on the CPU their calls alternate (with the harness's no-op kernel's), so that a change
/// in the machine's load reaches them alike. Whatever a candidate does is a Speed (not
/// measured, with the reason); a missing toolchain is an EnvironmentError.
std::vector<Speed> MeasureSpeeds(Machine& machine, const Task& task, BackendKind backend,
                                 const std::vector<std::string>& sources, const SpeedOptions& options);

/// How fast `after` is relative to `before`: before's median over after's (0.5: half as
/// fast). 0 when either was not measured or their clocks differ.
double SpeedRatio(const Speed& before, const Speed& after);

/// The smallest difference between two figures of `clock` that is a difference of speed and
/// not of the calls around it (ns).
double ResolutionNs(SpeedClock clock);

/// Whether `after` runs at less than `fraction` of `before`'s speed beyond the timing's noise:
/// by the medians, and also comparing before's slowest decile (p90) with after's fastest
/// (p10), and by more than the clock's resolution and the harness's own time per call. A
/// loaded machine moves both figures; a repair that only looks slower because the machine was
/// busy while it was timed, or whose case is too small to tell, is not judged slower. False
/// when either is unmeasured.
bool SlowerBeyondNoise(const Speed& before, const Speed& after, double fraction);

}  // namespace kforge
