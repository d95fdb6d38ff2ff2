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

// Copies a buffer of `bytes` `repetitions` times and reports the best rate. On the host the copies
// stop once three are done and they took a quarter of a second (a server copies 256 MiB in tens
// of ms; under the sanitizers' instrumentation one copy takes a second).
CopyBandwidth measureCopyBandwidth(Backend backend, std::size_t bytes, int repetitions = 20);

namespace detail {
CopyBandwidth measureCopyBandwidthCuda(std::size_t bytes, int repetitions);
}

}  // namespace octoflow::exec
