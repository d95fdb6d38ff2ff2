#pragma once
#include <array>
#include <cstddef>
#include <utility>

#include "exec/Backend.hpp"

namespace octoflow::exec {

// Host: pageable heap memory. Pinned: page-locked host memory, the target of device->host copies
// handed to in-situ consumers. Device: CUDA global memory.
enum class MemorySpace { Host, Pinned, Device };

const char* memorySpaceName(MemorySpace space);

// Throws OutOfMemoryError with the requested and free bytes when an allocation fails.
void* allocateBytes(MemorySpace space, std::size_t bytes);
void releaseBytes(MemorySpace space, void* pointer) noexcept;
// Copies between any two spaces (unified addressing decides the direction on CUDA).
void copyBytes(void* destination, const void* source, std::size_t bytes);
// The same queued on a CUDA stream (a cudaStream_t; null: the default stream), in order with its
// kernels; without a device, a plain copy. synchronizeStream waits for a stream's work.
void copyBytesOn(void* stream, void* destination, const void* source, std::size_t bytes);
void synchronizeStream(void* stream);
void fillZero(MemorySpace space, void* pointer, std::size_t bytes);
// Host memory the system can give without swapping (MemAvailable), in bytes; 0 when unknown.
double availableHostBytes();

// Device memory that another process of the host opens (CUDA IPC), so that the two copy between
// their GPUs directly: the handle of an allocation of allocateBytes(Device) (at its start), and a
// mapping of such a handle in this process (null when it cannot be opened), to close before the
// owner frees the memory.
using IpcHandle = std::array<unsigned char, 64>;
IpcHandle exportDeviceMemory(void* pointer);
void* openPeerDeviceMemory(const IpcHandle& handle) noexcept;
void closePeerDeviceMemory(void* pointer) noexcept;
// A GPU's PCI bus id ("0000:41:00.0"): the same in every process of the host, whatever devices
// each one sees. Lets the current device read and write that GPU's memory directly (over NVLink
// or PCIe peer to peer), as copies into memory opened from another process need: true when it
// is the current device or access is on, false when the GPU is not visible here or has no path.
using PciBusId = std::array<char, 32>;
PciBusId currentDeviceBusId();
bool enablePeerAccess(const PciBusId& device) noexcept;

// Memory the solver's arrays live in for a backend, and the host memory results are staged in.
inline MemorySpace workingSpace(Backend backend) {
  return backend == Backend::Cuda ? MemorySpace::Device : MemorySpace::Host;
}
inline MemorySpace stagingSpace(Backend backend) {
  return backend == Backend::Cuda ? MemorySpace::Pinned : MemorySpace::Host;
}

// An owning, move-only array of T in one memory space.
template <class T>
class Buffer {
public:
  Buffer() = default;
  Buffer(MemorySpace space, std::size_t count) : space_(space), count_(count) {
    if (count_ > 0) data_ = static_cast<T*>(allocateBytes(space_, count_ * sizeof(T)));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~Buffer() {
    if (data_) releaseBytes(space_, data_);
  }

  void swap(Buffer& other) noexcept {
    std::swap(space_, other.space_);
    std::swap(count_, other.count_);
    std::swap(data_, other.data_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  MemorySpace space() const { return space_; }
  bool hostAccessible() const { return space_ != MemorySpace::Device; }

  void copyFrom(const T* source, std::size_t count) { copyBytes(data_, source, count * sizeof(T)); }
  void copyTo(T* destination, std::size_t count) const { copyBytes(destination, data_, count * sizeof(T)); }
  void setZero() { fillZero(space_, data_, bytes()); }

private:
  MemorySpace space_ = MemorySpace::Host;
  std::size_t count_ = 0;
  T* data_ = nullptr;
};

}  // namespace octoflow::exec
