#pragma once
// What the Catalyst tests share: a virtual X server for ParaView to render through, and a
// check that a rendered image is not blank.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPNGReader.h>
#include <vtkPointData.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <map>
#include <string>

namespace octoflow::testing {

// One virtual X server for this test process (ParaView renders through X). Xvfb picks a free
// display itself and writes its number to a pipe once it accepts connections (-displayfd), so
// parallel test processes never race for a display or connect too early, as `xvfb-run -a` can.
// -noreset: by default an X server resets when its last client disconnects and drops every
// connection still being set up; under MPI one rank's ParaView closes its capability-probe
// connection while another rank's is opening, and VTK aborts that rank ("bad X server connection").
class VirtualDisplay {
public:
  VirtualDisplay() {
    int ready[2];
    if (pipe(ready) != 0) return;
    server_ = fork();
    if (server_ == 0) {
      close(ready[0]);
      const std::string fd = std::to_string(ready[1]);
      execl(OCTOFLOW_XVFB, "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1280x1024x24", "-nolisten", "tcp",
            "-noreset", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(ready[1]);
    std::string number;
    pollfd wait{ready[0], POLLIN, 0};
    char c;
    while (poll(&wait, 1, 30000) > 0 && read(ready[0], &c, 1) == 1 && c != '\n') number += c;
    close(ready[0]);
    if (!number.empty()) display_ = ":" + number;
  }
  ~VirtualDisplay() {
    if (server_ > 0) {
      kill(server_, SIGTERM);
      waitpid(server_, nullptr, 0);
    }
  }
  const std::string& display() const { return display_; }

private:
  pid_t server_ = -1;
  std::string display_;
};

// Fraction of pixels whose colour differs from the most common one, and the number of distinct
// colours: a blank or single-colour frame has neither.
inline void pixelStatistics(const std::filesystem::path& png, double& nonBackgroundFraction, std::size_t& colours) {
  vtkNew<vtkPNGReader> reader;
  reader->SetFileName(png.c_str());
  reader->Update();
  vtkDataArray* pixels = reader->GetOutput()->GetPointData()->GetScalars();
  const vtkIdType count = pixels->GetNumberOfTuples();
  const int components = pixels->GetNumberOfComponents();
  std::map<long, long> histogram;
  for (vtkIdType p = 0; p < count; ++p) {
    long key = 0;
    for (int c = 0; c < std::min(components, 3); ++c) key = key * 256 + static_cast<long>(pixels->GetComponent(p, c));
    ++histogram[key];
  }
  long mostCommon = 0;
  for (const auto& [key, n] : histogram) mostCommon = std::max(mostCommon, n);
  nonBackgroundFraction = 1.0 - static_cast<double>(mostCommon) / count;
  colours = histogram.size();
}

// The share of pixels of two PNGs of one size whose colours differ by more than `levels` in any
// channel (1 when the sizes differ).
inline double differingPixels(const std::filesystem::path& a, const std::filesystem::path& b, int levels) {
  vtkNew<vtkPNGReader> first, second;
  first->SetFileName(a.c_str());
  second->SetFileName(b.c_str());
  first->Update();
  second->Update();
  vtkDataArray* p = first->GetOutput()->GetPointData()->GetScalars();
  vtkDataArray* q = second->GetOutput()->GetPointData()->GetScalars();
  if (!p || !q || p->GetNumberOfTuples() != q->GetNumberOfTuples() || p->GetNumberOfComponents() != q->GetNumberOfComponents())
    return 1.0;
  vtkIdType differing = 0;
  for (vtkIdType pixel = 0; pixel < p->GetNumberOfTuples(); ++pixel)
    for (int c = 0; c < std::min(p->GetNumberOfComponents(), 3); ++c)
      if (std::abs(p->GetComponent(pixel, c) - q->GetComponent(pixel, c)) > levels) {
        ++differing;
        break;
      }
  return static_cast<double>(differing) / static_cast<double>(p->GetNumberOfTuples());
}

}  // namespace octoflow::testing
