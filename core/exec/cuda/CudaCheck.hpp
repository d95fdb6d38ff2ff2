#pragma once
#include <cuda_runtime.h>

#include <string>

#include "common/Error.hpp"

namespace octoflow::exec {

[[noreturn]] inline void throwCudaError(cudaError_t status, const char* expression, const char* file, int line) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
              ") in " + expression + " at " + file + ":" + std::to_string(line));
}

}  // namespace octoflow::exec

#define OCTO_CUDA_CHECK(expression)                                                        \
  do {                                                                                     \
    const cudaError_t octoStatus = (expression);                                           \
    if (octoStatus != cudaSuccess) ::octoflow::exec::throwCudaError(octoStatus, #expression, __FILE__, __LINE__); \
  } while (0)
