#include "exec/Backend.hpp"

#include <sched.h>
#include <unistd.h>

#include "common/Error.hpp"

#if OCTOFLOW_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace octoflow::exec {

const char* backendName(Backend backend) { return backend == Backend::Cuda ? "cuda" : "cpu"; }

BackendChoice parseBackendChoice(const std::string& text, const std::string& source) {
  if (text == "auto") return BackendChoice::Auto;
  if (text == "cpu") return BackendChoice::Cpu;
  if (text == "cuda") return BackendChoice::Cuda;
  throw InputError(source, "", "expected auto, cpu or cuda, got '" + text + "'");
}

bool cudaCompiled() { return OCTOFLOW_HAVE_CUDA != 0; }

int currentDeviceMultiprocessors() {
#if OCTOFLOW_HAVE_CUDA
  thread_local int cachedDevice = -1, cachedCount = 0;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (device != cachedDevice) {
    int count = 0;
    if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    cachedDevice = device;
    cachedCount = count;
  }
  return cachedCount;
#else
  return 0;
#endif
}

void useCudaDevice(int index) {
#if OCTOFLOW_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return;
  cudaSetDevice(index % count);
#else
  (void)index;
#endif
}

int currentCudaDevice() {
  int device = 0;
#if OCTOFLOW_HAVE_CUDA
  if (cudaGetDevice(&device) != cudaSuccess) device = 0;
#endif
  return device;
}

std::vector<CudaDeviceInfo> cudaDevices(std::string* whyNone, bool withFreeMemory) {
  std::vector<CudaDeviceInfo> devices;
#if OCTOFLOW_HAVE_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (whyNone) *whyNone = std::string("CUDA reports ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return devices;
  }
  // Reading a device's free memory makes it current: the caller's device is restored afterwards
  // (an MPI rank bound to device 1 must stay there).
  int current = 0;
  cudaGetDevice(&current);
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) != cudaSuccess) continue;
    CudaDeviceInfo info;
    info.index = index;
    info.name = properties.name;
    info.computeMajor = properties.major;
    info.computeMinor = properties.minor;
    info.totalBytes = properties.totalGlobalMem;
    info.multiprocessors = properties.multiProcessorCount;
    cudaDeviceGetAttribute(&info.clockKilohertz, cudaDevAttrClockRate, index);
    if (withFreeMemory && cudaSetDevice(index) == cudaSuccess) {
      std::size_t freeBytes = 0, totalBytes = 0;
      if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess) info.freeBytes = freeBytes;
    }
    devices.push_back(info);
  }
  if (withFreeMemory && count > 0) cudaSetDevice(current);
  if (devices.empty() && whyNone) *whyNone = "no CUDA device found";
#else
  (void)withFreeMemory;
  if (whyNone) *whyNone = "this build has no CUDA backend (configure with OCTOFLOW_ENABLE_CUDA=ON)";
#endif
  return devices;
}

HostCores hostCores() {
  HostCores cores;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) cores.online = static_cast<int>(online);
  cpu_set_t mask;
  CPU_ZERO(&mask);
  cores.usable = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : cores.online;
  return cores;
}

Backend resolveBackend(BackendChoice choice, const std::string& source) {
  if (choice == BackendChoice::Cpu) return Backend::Cpu;
  std::string whyNone;
  const bool haveDevice = !cudaDevices(&whyNone).empty();
  if (choice == BackendChoice::Cuda && !haveDevice)
    throw InputError(source, "cuda", "CUDA backend requested but unavailable: " + whyNone);
  return haveDevice ? Backend::Cuda : Backend::Cpu;
}

}  // namespace octoflow::exec
