#include "service/experiment/device_pool.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace kforge {
namespace {

TEST(DevicePoolTest, LeasesEachDeviceOnceAndTheLowestFreeFirst) {
  DevicePool pool({"0", "1", "2"});
  EXPECT_EQ(*pool.Lease(), "0");
  EXPECT_EQ(*pool.Lease(), "1");
  EXPECT_EQ(*pool.Lease(), "2");
  EXPECT_FALSE(pool.Lease());
  pool.Return("1");
  pool.Return("0");
  EXPECT_EQ(pool.free(), 2);
  EXPECT_EQ(*pool.Lease(), "0");
  EXPECT_EQ(*pool.Lease(), "1");
  EXPECT_DEATH(pool.Return("7"), "");
}

TEST(DevicePoolTest, DeviceListsAreCheckedAndParsed) {
  EXPECT_EQ(ParseDeviceList("0,1,3"), (std::vector<std::string>{"0", "1", "3"}));
  EXPECT_EQ(ParseDeviceList("gpu-a"), (std::vector<std::string>{"gpu-a"}));
  EXPECT_THROW(ParseDeviceList("0,,1"), UsageError);
  EXPECT_THROW(ParseDeviceList(""), UsageError);
  EXPECT_THROW(DevicePool({"0", "0"}), UsageError);
  EXPECT_THROW(DevicePool({}), UsageError);
}

}  // namespace
}  // namespace kforge
