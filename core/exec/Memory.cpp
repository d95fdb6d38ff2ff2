#include "exec/Memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <new>

#include "common/Error.hpp"

#if OCTOFLOW_HAVE_CUDA
#include <cuda_runtime.h>

#include "exec/cuda/CudaCheck.hpp"
#endif

namespace octoflow::exec {

namespace {

#if !OCTOFLOW_HAVE_CUDA
[[noreturn]] void noCuda(const char* what) {
  throw Error(std::string(what) + " needs the CUDA backend, which this build does not have");
}
#endif

}  // namespace

const char* memorySpaceName(MemorySpace space) {
  switch (space) {
    case MemorySpace::Host: return "host";
    case MemorySpace::Pinned: return "pinned host";
    case MemorySpace::Device: return "GPU";
  }
  return "?";
}

void* allocateBytes(MemorySpace space, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (space == MemorySpace::Host) {
    // 64-byte alignment: whole cache lines and AVX-512 vectors for the OpenMP loops. An array of
    // several MiB (a solver's state, a staging copy) starts on a 2 MiB boundary and asks for
    // transparent huge pages: a 2 MiB page faulted in at its first touch instead of 512 of 4 KiB
    // (most of the time of a fresh array's first pass), fewer TLB misses in the steps after.
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    const bool huge = bytes >= 2 * kHugePage;
    const std::size_t alignment = huge ? kHugePage : 64;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* pointer = std::aligned_alloc(alignment, rounded);
    if (!pointer) throw OutOfMemoryError(memorySpaceName(space), bytes, static_cast<std::size_t>(availableHostBytes()));
#ifdef MADV_HUGEPAGE
    if (huge) madvise(pointer, rounded, MADV_HUGEPAGE);  // a hint: without it (or refused) 4 KiB pages
#endif
    return pointer;
  }
#if OCTOFLOW_HAVE_CUDA
  void* pointer = nullptr;
  if (space == MemorySpace::Pinned) {
    if (cudaMallocHost(&pointer, bytes) != cudaSuccess) {
      cudaGetLastError();
      throw OutOfMemoryError(memorySpaceName(space), bytes, static_cast<std::size_t>(availableHostBytes()));
    }
    return pointer;
  }
  if (cudaMalloc(&pointer, bytes) != cudaSuccess) {
    cudaGetLastError();
    std::size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    throw OutOfMemoryError(memorySpaceName(space), bytes, freeBytes);
  }
  return pointer;
#else
  noCuda(memorySpaceName(space));
#endif
}

void releaseBytes(MemorySpace space, void* pointer) noexcept {
  if (!pointer) return;
  if (space == MemorySpace::Host) {
    std::free(pointer);
    return;
  }
#if OCTOFLOW_HAVE_CUDA
  if (space == MemorySpace::Pinned)
    cudaFreeHost(pointer);
  else
    cudaFree(pointer);
#endif
}

void copyBytes(void* destination, const void* source, std::size_t bytes) {
  if (bytes == 0) return;
#if OCTOFLOW_HAVE_CUDA
  // With a device present, unified addressing lets cudaMemcpyDefault pick the direction.
  static const bool haveDevice = !cudaDevices().empty();
  if (haveDevice) {
    OCTO_CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
    return;
  }
#endif
  std::memcpy(destination, source, bytes);
}

void copyBytesOn(void* stream, void* destination, const void* source, std::size_t bytes) {
  if (bytes == 0) return;
#if OCTOFLOW_HAVE_CUDA
  static const bool haveDevice = !cudaDevices().empty();
  if (haveDevice) {
    OCTO_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
    return;
  }
#endif
  (void)stream;
  std::memcpy(destination, source, bytes);
}

void synchronizeStream(void* stream) {
#if OCTOFLOW_HAVE_CUDA
  static const bool haveDevice = !cudaDevices().empty();
  if (haveDevice) OCTO_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
#endif
  (void)stream;
}

void fillZero(MemorySpace space, void* pointer, std::size_t bytes) {
  if (bytes == 0) return;
  if (space != MemorySpace::Device) {
    std::memset(pointer, 0, bytes);
    return;
  }
#if OCTOFLOW_HAVE_CUDA
  OCTO_CUDA_CHECK(cudaMemset(pointer, 0, bytes));
#else
  noCuda("clearing GPU memory");
#endif
}

#if OCTOFLOW_HAVE_CUDA
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle), "CUDA IPC handles are 64 bytes");

IpcHandle exportDeviceMemory(void* pointer) {
  cudaIpcMemHandle_t handle;
  const cudaError_t status = cudaIpcGetMemHandle(&handle, pointer);
  if (status != cudaSuccess) {
    cudaGetLastError();  // this call's own error (no CUDA IPC here): the next launch must not see it
    throw Error(std::string("sharing GPU memory between processes (CUDA IPC): ") + cudaGetErrorString(status));
  }
  IpcHandle bytes;
  std::memcpy(bytes.data(), &handle, bytes.size());
  return bytes;
}

void* openPeerDeviceMemory(const IpcHandle& bytes) noexcept {
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, bytes.data(), bytes.size());
  void* pointer = nullptr;
  if (cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return pointer;
}

void closePeerDeviceMemory(void* pointer) noexcept {
  if (pointer) cudaIpcCloseMemHandle(pointer);
}

PciBusId currentDeviceBusId() {
  int current = 0;
  OCTO_CUDA_CHECK(cudaGetDevice(&current));
  PciBusId id{};
  OCTO_CUDA_CHECK(cudaDeviceGetPCIBusId(id.data(), static_cast<int>(id.size()), current));
  return id;
}

bool enablePeerAccess(const PciBusId& id) noexcept {
  PciBusId terminated = id;
  terminated.back() = '\0';
  int current = 0, device = 0, possible = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return false;
  if (terminated[0] == '\0' || cudaDeviceGetByPCIBusId(&device, terminated.data()) != cudaSuccess) {
    cudaGetLastError();  // this call's own error: the GPU is not visible here
    return false;
  }
  if (device == current) return true;
  if (cudaDeviceCanAccessPeer(&possible, current, device) != cudaSuccess || !possible) {
    cudaGetLastError();  // as above: a refusal here sends messages another way, it is no error
    return false;
  }
  const cudaError_t status = cudaDeviceEnablePeerAccess(device, 0);
  if (status != cudaSuccess) cudaGetLastError();
  return status == cudaSuccess || status == cudaErrorPeerAccessAlreadyEnabled;
}
#else
IpcHandle exportDeviceMemory(void*) { noCuda("sharing GPU memory between processes"); }
void* openPeerDeviceMemory(const IpcHandle&) noexcept { return nullptr; }
void closePeerDeviceMemory(void*) noexcept {}
PciBusId currentDeviceBusId() { noCuda("naming a GPU"); }
bool enablePeerAccess(const PciBusId&) noexcept { return false; }
#endif

double availableHostBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024.0;
    meminfo.ignore(256, '\n');
  }
  return 0.0;
}

}  // namespace octoflow::exec
