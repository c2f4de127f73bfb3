#pragma once
// The local device pool: a running cell holds one device, never two cells one GPU, and the
// device comes back when the cell ends, however it ends.
#include <optional>
#include <string>
#include <vector>

namespace kforge {

class DevicePool {
 public:
  /// `devices`: what each running cell may hold ("0", "1": CUDA device numbers; any names
  /// for CPU slots). Throws UsageError when empty or when one is listed twice.
  explicit DevicePool(std::vector<std::string> devices);
  /// The first free device, or none while all are held.
  std::optional<std::string> Lease();
  /// Gives `device` back. Giving back one that is not held is a programming error.
  void Return(const std::string& device);
  int free() const { return static_cast<int>(free_.size()); }
  int size() const { return static_cast<int>(all_.size()); }
  const std::vector<std::string>& devices() const { return all_; }

 private:
  std::vector<std::string> all_, free_;
};

/// "0,1,3" -> {"0", "1", "3"}; throws UsageError on an empty item.
std::vector<std::string> ParseDeviceList(const std::string& list);

}  // namespace kforge
