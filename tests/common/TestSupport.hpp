#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "exec/Backend.hpp"

namespace octoflow::testing {

// True when a CUDA device is usable. Without one a GPU test skips with the reason, unless
// OCTOFLOW_REQUIRE_GPU=1 says this machine must have one: then it fails, so that nothing
// passes on a GPU machine by running nothing.
inline bool gpuRequired() {
  const char* value = std::getenv("OCTOFLOW_REQUIRE_GPU");
  return value && std::string(value) == "1";
}

}  // namespace octoflow::testing

#define OCTO_SKIP_WITHOUT_GPU()                                                               \
  do {                                                                                        \
    std::string octoWhyNoGpu;                                                                 \
    if (::octoflow::exec::cudaDevices(&octoWhyNoGpu).empty()) {                               \
      if (::octoflow::testing::gpuRequired())                                                 \
        FAIL() << "OCTOFLOW_REQUIRE_GPU=1 but no usable CUDA device: " << octoWhyNoGpu;       \
      else                                                                                    \
        GTEST_SKIP() << "no CUDA device (" << octoWhyNoGpu << "); set OCTOFLOW_REQUIRE_GPU=1 to fail instead"; \
    }                                                                                         \
  } while (0)
