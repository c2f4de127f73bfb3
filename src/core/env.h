#pragma once
// The environment a run sees, injected. Every source of nondeterminism (time, entropy,
// child processes, HTTP) and every setting that comes from outside the command line
// (variables such as KFORGE_CACHE_DIR, read once into Config) sits behind this one object.
// app/ builds the live one (LiveEnv) and passes it down; nothing below app/ reads a global
// clock, a random device or getenv, or starts a process any other way. Tests pass fakes
// (testing/fakes.h); a replay passes objects that answer from a record.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/http.h"
#include "core/subprocess.h"

namespace kforge {

/// Settings from the process environment, read once. Each field names its variable.
struct Config {
  std::string cache_dir = "/tmp/kforge-cache";  ///< KFORGE_CACHE_DIR, $XDG_CACHE_HOME/kforge, ~/.cache/kforge
  std::string kb_state_dir = "/tmp/kforge-kb";  ///< KFORGE_KB_STATE, $XDG_DATA_HOME/kforge/kb, ~/.local/share/kforge/kb
  /// Where --db records when given no path: KFORGE_DB, $XDG_DATA_HOME/kforge/kernels.db,
  /// ~/.local/share/kforge/kernels.db.
  std::string kernel_db = "/tmp/kforge-kernels.db";
  std::string temp_dir = "/tmp";       ///< TMPDIR
  std::string path = "/usr/bin:/bin";  ///< PATH, to find programs
  std::string cxx = "g++";             ///< CXX
  std::string sandbox = "bwrap";       ///< KFORGE_SANDBOX: "bwrap" or "none"
  /// KFORGE_CANDIDATE_UID: without bubblewrap, a root engine runs each candidate process as
  /// a user of its own, leased from [candidate_uid, candidate_uid + candidate_uids) (no
  /// capabilities, its own RLIMIT_NPROC count; exec/candidate_uid.h). Debian reserves
  /// 65000-65533 and gives them to no one; uids the user database knows are skipped anyway.
  /// 0: run them as the engine's user.
  unsigned candidate_uid = 65100;
  unsigned candidate_uids = 64;  ///< KFORGE_CANDIDATE_UIDS: how many uids to lease from
  /// KFORGE_CANDIDATE_UID_LOCKS: lock files of the leased uids, one directory for every
  /// kforge process on the machine.
  std::string candidate_uid_locks = "/tmp/kforge-candidate-uids";
  /// KFORGE_GPU_WORKER_WITHOUT: confinement layers ("landlock", "seccomp") a GPU PyTorch
  /// worker goes without, for a driver that needs more than the worker's rules allow.
  std::vector<std::string> gpu_worker_without;
  // Where kforge's own files are, when not found next to the binary or in the source tree.
  std::string include_dir;        ///< KFORGE_INCLUDE_DIR (include/kforge/probe.h)
  std::string tasks_dir;          ///< KFORGE_TASKS_DIR
  std::string kb_dir;             ///< KFORGE_KB_DIR
  std::string baselines_dir;      ///< KFORGE_BASELINES_DIR
  std::string runner;             ///< KFORGE_RUNNER
  std::string gpu_runner;         ///< KFORGE_GPU_RUNNER
  std::string dlpack_include;     ///< KFORGE_DLPACK_INCLUDE
  std::string nvcc;               ///< KFORGE_NVCC
  std::string compute_sanitizer;  ///< KFORGE_COMPUTE_SANITIZER
  std::string cublas;             ///< KFORGE_CUBLAS: libcublas for calibration
  std::string python;             ///< KFORGE_PYTHON: a Python with PyTorch (KernelBench tasks)
  /// CUDA_VISIBLE_DEVICES: the GPUs this process may use (an experiment's device pool)
  std::string cuda_visible_devices;
  // A model endpoint speaking the OpenAI chat-completions protocol (agent/chat_client.h).
  std::string llm_base_url;  ///< OPENAI_BASE_URL (e.g. https://api.openai.com/v1, http://localhost:8000/v1)
  std::string llm_api_key;   ///< OPENAI_API_KEY; never written to logs, events or messages
  std::string llm_model;     ///< KFORGE_MODEL
  std::string llm_config;    ///< KFORGE_LLM_CONFIG: a JSON file of endpoint settings and prices
  /// KFORGE_THREADS: how many threads judge a large output (outputs are split in fixed
  /// chunks, so the verdict is the same for every count); the machine's cores when unset.
  unsigned threads = 0;
  bool no_color = false;  ///< NO_COLOR (any value; no-color.org): no colour on the terminal
  /// KFORGE_TEST_KILL_AFTER_EVENT: tests of resume kill the engine (SIGKILL) right after it
  /// appends this event number. 0: off.
  int test_kill_after_event = 0;
  /// KFORGE_TEST_INTERRUPT_AFTER_EVENT: tests of cancellation send the engine SIGINT (as a
  /// Ctrl-C would) right after it appends this event number. 0: off.
  int test_interrupt_after_event = 0;

  /// Variables whose values could not be used, one sentence each; the field keeps its
  /// default. The CLI refuses to start while any is here: a mistyped sandbox setting must
  /// not quietly become a weaker sandbox.
  std::vector<std::string> problems;

  /// `lookup` answers a variable's value (nullopt when unset). Empty values count as unset.
  using Lookup = std::function<std::optional<std::string>(std::string_view)>;
  static Config FromLookup(const Lookup& lookup);
  /// From this process's environment: the only getenv in kforge.
  static Config FromProcess();
};

/// What code below app/ gets instead of globals. References, not owners: the creator keeps
/// the parts alive (LiveEnv, or a test's fakes).
class Env {
 public:
  Env(Clock& clock, Entropy& entropy, ProcessRunner& processes, HttpClient& http, Config config)
      : clock_(clock), entropy_(entropy), processes_(processes), http_(http), config_(std::move(config)) {}
  Clock& clock() const { return clock_; }
  Entropy& entropy() const { return entropy_; }
  ProcessRunner& processes() const { return processes_; }
  HttpClient& http() const { return http_; }
  const Config& config() const { return config_; }

 private:
  Clock& clock_;
  Entropy& entropy_;
  ProcessRunner& processes_;
  HttpClient& http_;
  Config config_;
};

/// The live environment: the system clock, OS entropy, real processes, libcurl and the
/// process's variables. Built once by app/.
class LiveEnv {
 public:
  explicit LiveEnv(Config config = Config::FromProcess());
  Env& env() { return env_; }

 private:
  LiveClock clock_;
  LiveEntropy entropy_;
  LiveProcessRunner processes_;
  CurlHttpClient http_;
  Env env_;
};

}  // namespace kforge
