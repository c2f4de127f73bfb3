#include "record/run_files.h"

#include "core/fs.h"

namespace kforge {

bool RunFiles::HoldsRun() const { return FileExists(events()); }

}  // namespace kforge
