#pragma once
// Device (or host) memory copy bandwidth, measured in the process that runs a benchmark so
// that benchmark figures can be quoted as a fraction of it (a roofline for memory-bound code).
#include <cstddef>

#include "exec/Backend.hpp"

namespace octoflow::exec {

struct CopyBandwidth {
  double bytesPerSecond = 0.0;  // bytes read + bytes written, per second, best of the repetitions
  std::size_t bufferBytes = 0;
};

// Copies a buffer of `bytes` `repetitions` times and reports the best rate.
CopyBandwidth measureCopyBandwidth(Backend backend, std::size_t bytes, int repetitions = 20);

namespace detail {
CopyBandwidth measureCopyBandwidthCuda(std::size_t bytes, int repetitions);
}

}  // namespace octoflow::exec
