#pragma once
// The run's event log.
//
// Design note (after ninja's deps_log.h and rr's TraceStream):
//  - A run is an append-only sequence of typed events in one SQLite database in WAL mode.
//    The WAL is the append-only part: each Append is one transaction, durable
//    (synchronous=FULL) before Append returns, so the engine can "persist first, then act".
//  - A SIGKILL or power cut mid-append loses at most that transaction; a WAL cut at an
//    arbitrary byte offset loses the frames after the last intact commit (SQLite checks the
//    frame checksums). Either way the log reads back as a prefix of what was appended, and
//    the run's state is a fold over that prefix.
//  - Damage SQLite cannot repair (a corrupted main file) is detected on open with
//    quick_check and reported; the log is never silently reinitialised.
//  - Every event has a stable type name, a layer tag (tensor, token, trace, control) for
//    selective replay, a wall-clock stamp (trace), and a JSON payload of named fields.
//  - The meta table holds kEventLogSchemaVersion. A log from a newer kforge is refused with
//    a message; older versions will be migrated when there are any.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace kforge {

class Clock;

inline constexpr int kEventLogSchemaVersion = 1;

enum class Layer { kTensor, kToken, kTrace, kControl };
std::string_view LayerName(Layer l);
bool TryParseLayer(std::string_view name, Layer* out);

struct Event {
  int64_t seq = 0;
  std::string type;
  Layer layer = Layer::kControl;
  int64_t wall_us = 0;
  nlohmann::json data;
  /// {"seq", "type", "layer", "wall_us", "data"}: one line of `kforge log --json`.
  nlohmann::json ToJson() const {
    return {{"seq", seq}, {"type", type}, {"layer", LayerName(layer)}, {"wall_us", wall_us}, {"data", data}};
  }
};

class EventLog {
 public:
  /// How an append reaches the disk. kDurable: synced before Append returns (a run that
  /// acts on what it appended). kRelaxed: synced at checkpoints only, for a log that can be
  /// made again from another (a replay's); a crash may lose its tail, never corrupt it.
  enum class Durability { kDurable, kRelaxed };
  /// Creates a new log at `path`; throws EnvironmentError if it exists or cannot be made.
  static std::unique_ptr<EventLog> Create(const std::string& path, Clock& clock,
                                          Durability durability = Durability::kDurable);
  /// Opens an existing log; throws UsageError when it is missing, damaged, or newer.
  static std::unique_ptr<EventLog> Open(const std::string& path, Clock& clock);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  /// Moves everything logged so far from the WAL into the main file (used once a run's
  /// header is written, so a damaged WAL can never lose the run's identity).
  void Checkpoint();
  /// Appends one event durably and returns it (with its sequence number).
  Event Append(std::string_view type, Layer layer, nlohmann::json data);
  std::vector<Event> ReadAll() const;
  /// Writes a consistent single-file copy of the log (WAL included) to `path`, which must
  /// not exist.
  void CopyTo(const std::string& path) const;
  const std::string& path() const { return path_; }

 private:
  EventLog(std::string path, Clock& clock) : path_(std::move(path)), clock_(clock) {}
  void Exec(const char* sql);

  std::string path_;
  Clock& clock_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
};

}  // namespace kforge
