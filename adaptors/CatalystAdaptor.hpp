#pragma once
// ParaView Catalyst (legacy vtkCPProcessor API of ParaView 5.11) for a uniform grid: channel
// "grid", host arrays wrapped without copying, and only the fields the loaded scripts ask for.
#include <memory>
#include <string>
#include <vector>

#include "common/Extent.hpp"

namespace octoflow::adaptors {

class CatalystAdaptor {
public:
  // Loads every script (v2 scripts, first line "# script-version: 2"); extracts (PNG, data)
  // go under `extractsDirectory`. A script that cannot be loaded raises InputError naming it.
  CatalystAdaptor(const std::vector<std::string>& scripts, const std::string& extractsDirectory);
  ~CatalystAdaptor();
  CatalystAdaptor(const CatalystAdaptor&) = delete;
  CatalystAdaptor& operator=(const CatalystAdaptor&) = delete;

  struct FieldRequest {
    bool any = false;  // some pipeline runs on this step
    bool density = false;
    bool velocity = false;
  };
  // Asks the pipelines whether they run on this step and which fields they need.
  FieldRequest request(Index step, double time);
  // Hands the grid to the pipelines (after request() said so, with the fields it asked for).
  void execute(Index step, double time, const Extent& extent, const float* density, const float* velocity);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace octoflow::adaptors
