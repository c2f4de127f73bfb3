#include "service/experiment/device_pool.h"

#include <algorithm>
#include <set>

#include "core/check.h"
#include "core/error.h"

namespace kforge {

DevicePool::DevicePool(std::vector<std::string> devices) : all_(std::move(devices)) {
  if (all_.empty()) throw UsageError("the device pool is empty; give --devices 0,1,... or --jobs N");
  if (std::set<std::string>(all_.begin(), all_.end()).size() != all_.size())
    throw UsageError("--devices lists a device twice; each device runs one cell at a time");
  free_ = all_;
}

std::optional<std::string> DevicePool::Lease() {
  if (free_.empty()) return std::nullopt;
  std::string d = free_.front();
  free_.erase(free_.begin());
  return d;
}

void DevicePool::Return(const std::string& device) {
  KF_CHECK(std::find(all_.begin(), all_.end(), device) != all_.end());
  KF_CHECK(std::find(free_.begin(), free_.end(), device) == free_.end());
  // Back in the pool's order, so the lowest free device is leased next.
  free_.push_back(device);
  std::sort(free_.begin(), free_.end(), [&](const std::string& a, const std::string& b) {
    return std::find(all_.begin(), all_.end(), a) < std::find(all_.begin(), all_.end(), b);
  });
}

std::vector<std::string> ParseDeviceList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError("--devices '" + list + "' has an empty item; write it as 0,1,2");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace kforge
