#pragma once
// GPU runner only: the `device` mode's description of the GPU (name, UUID, architecture,
// memory, L2, driver and runtime versions), one JSON object on stdout.

namespace kforge {

/// Prints the description of device 0; returns the exit status. Call after the device is
/// initialised.
int PrintDeviceDescription();

}  // namespace kforge
