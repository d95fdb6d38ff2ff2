#pragma once
// Conditions on the six faces of a uniform box, in a form the kernels copy by value.
#include <cstdint>
#include <string>

#include "common/Extent.hpp"
#include "common/Macros.hpp"
#include "lbm/Collision.hpp"

namespace octoflow::lbm {

enum class FaceType : std::uint8_t {
  Periodic,    // wraps to the opposite face
  Wall,        // resting wall, half-way bounce-back
  MovingWall,  // bounce-back plus the wall's (tangential) momentum
  Velocity,    // inlet: bounce-back with a prescribed velocity, uniform or parabolic
  Pressure,    // outlet: anti-bounce-back with a prescribed density
  Outflow      // zero normal velocity gradient at the reference density (pressure p0)
};

// Face index = 2 * axis + (1 on the + side): x- x+ y- y+ z- z+.
constexpr int kFaceCount = 6;
inline const char* faceName(int face) {
  constexpr const char* names[kFaceCount] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return names[face];
}
inline int faceFromName(const std::string& name) {
  for (int face = 0; face < kFaceCount; ++face)
    if (name == faceName(face)) return face;
  return -1;
}
OCTO_HD constexpr int faceAxis(int face) { return face / 2; }

struct FaceCondition {
  FaceType type = FaceType::Wall;
  Vector3 velocity;       // MovingWall, Velocity (the peak for a parabolic profile)
  bool parabolic = false; // Velocity: zero at the face's edges, `velocity` at its centre
  float density = 1.0f;   // Pressure
};

struct FaceBoundaries {
  FaceCondition face[kFaceCount];

  OCTO_HD bool periodic(int axis) const { return face[2 * axis].type == FaceType::Periodic; }
  unsigned periodicAxes() const { return (periodic(0) ? 1u : 0u) | (periodic(1) ? 2u : 0u) | (periodic(2) ? 4u : 0u); }
  void setType(int faceIndex, FaceType type) { face[faceIndex].type = type; }
  void setAxisPeriodic(int axis) {
    face[2 * axis].type = FaceType::Periodic;
    face[2 * axis + 1].type = FaceType::Periodic;
  }
};

// The velocity a face imposes at the boundary node at `position` (whole-grid coordinates) of a
// grid of extent `whole` whose axes with a bit in `periodicAxes` wrap. A parabolic profile is the
// product of 4 s (1 - s) over the face's non-periodic tangential axes, s = (x + 1/2) / n the
// position between the half-way walls at -1/2 and n - 1/2: the given velocity at the centre,
// zero at the edges.
OCTO_HD inline Vector3 faceVelocity(const FaceCondition& condition, int faceIndex, const Extent& whole,
                                    unsigned periodicAxes, const Index (&position)[3]) {
  if (!condition.parabolic) return condition.velocity;
  float shape = 1.0f;
  for (int axis = 0; axis < 3; ++axis) {
    if (axis == faceAxis(faceIndex) || (periodicAxes & (1u << axis)) || whole.size(axis) == 1) continue;
    const float s = (static_cast<float>(position[axis]) + 0.5f) / static_cast<float>(whole.size(axis));
    shape *= 4.0f * s * (1.0f - s);
  }
  return Vector3{shape * condition.velocity.x, shape * condition.velocity.y, shape * condition.velocity.z};
}

}  // namespace octoflow::lbm
