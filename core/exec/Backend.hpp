#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace octoflow::exec {

// Where the solver runs. The CPU backend is the reference every CUDA path is checked against.
enum class Backend { Cpu, Cuda };
enum class BackendChoice { Auto, Cpu, Cuda };

// Threads a block of the CUDA executor's 3D launches (parallelFor3): a kernel that keeps a column
// of shared memory a thread sizes it by this.
constexpr int kThreadsPerBlock3 = 256;

const char* backendName(Backend backend);

// Parses "auto" | "cpu" | "cuda"; `source` names the flag or key for the error message.
BackendChoice parseBackendChoice(const std::string& text, const std::string& source);

// auto -> CUDA when a device is usable, else CPU. Asking for CUDA where there is none is an
// InputError that says why (not compiled in, or the driver's own reason).
Backend resolveBackend(BackendChoice choice, const std::string& source = "--backend");

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  std::size_t totalBytes = 0;
  std::size_t freeBytes = 0;
  int multiprocessors = 0;
  int clockKilohertz = 0;  // the SM clock (peak rates)
};

// True when this build has the CUDA backend compiled in.
bool cudaCompiled();
// The current CUDA device's multiprocessors, asked once a device and thread (launch shapes that
// spread work over all of them); 0 without a usable device.
int currentDeviceMultiprocessors();
// The usable CUDA devices; empty with `whyNone` filled when there are none. Any CUDA error counts
// as "no device" (without a GPU the runtime reports an insufficient driver, not zero devices).
// `withFreeMemory` also reads each device's free memory, which creates a context on every device
// (hundreds of MB each): only `octoflow info` asks for it, never the ranks of a run.
std::vector<CudaDeviceInfo> cudaDevices(std::string* whyNone = nullptr, bool withFreeMemory = false);
// The device this thread's CUDA calls go to (0 without CUDA).
int currentCudaDevice();
// The host's cores this process may run on (its CPU affinity: one when mpirun bound the rank to a
// core, as Open MPI does by default when it starts one or two ranks) and the host's cores online.
struct HostCores {
  int usable = 1;
  int online = 1;
};
HostCores hostCores();

// Makes device `index` modulo the device count current for this thread (one per MPI rank on a
// node with several GPUs); no effect without CUDA devices.
void useCudaDevice(int index);

}  // namespace octoflow::exec
