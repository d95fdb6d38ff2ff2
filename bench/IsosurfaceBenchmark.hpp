#pragma once
// `octoflow bench isosurface`: the phi = 0.5 surface of a diffuse sphere extracted where the
// field lives, against copying the whole field to the host (the route without GPU extraction:
// copy, then contour on the CPU).
#include <string>

#include "exec/Backend.hpp"

namespace octoflow::bench {

struct IsosurfaceBenchmarkOptions {
  exec::Backend backend = exec::Backend::Cpu;
  long long size = 0;   // nodes per axis of the cubic field; 0 = 512 on CUDA, 64 on the CPU
  int repeats = 0;      // timed extractions; 0 = 20 on CUDA, 3 on the CPU
};

struct IsosurfaceBenchmarkResult {
  std::string backend;
  std::string device;
  long long size = 0;
  long long points = 0;
  long long triangles = 0;
  double bestSeconds = 0.0;        // fastest extraction, triangles on the host
  double medianSeconds = 0.0;
  double bestCopySeconds = 0.0;    // the device-to-host part of the fastest one
  double fieldBytes = 0.0;         // the FP32 field
  double fieldCopySeconds = 0.0;   // fastest copy of the whole field into pinned host memory (CUDA)
};

IsosurfaceBenchmarkResult runIsosurfaceBenchmark(const IsosurfaceBenchmarkOptions& options);
std::string formatText(const IsosurfaceBenchmarkResult& result);
std::string formatJson(const IsosurfaceBenchmarkResult& result);

}  // namespace octoflow::bench
