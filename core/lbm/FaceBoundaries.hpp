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

// The velocity a face imposes at the boundary node at `position` (whole-grid node coordinates,
// integer or not: a finer grid's points lie between them) of a grid of extent `whole` whose axes
// with a bit in `periodicAxes` wrap. A parabolic profile is the product of 4 s (1 - s) over the
// face's non-periodic tangential axes, s = (x + 1/2) / n the position between the half-way walls
// at -1/2 and n - 1/2: the given velocity at the centre, zero at the edges.
template <class Position>
OCTO_HD inline Vector3 faceVelocity(const FaceCondition& condition, int faceIndex, const Extent& whole,
                                    unsigned periodicAxes, const Position (&position)[3]) {
  if (!condition.parabolic) return condition.velocity;
  float shape = 1.0f;
  for (int axis = 0; axis < 3; ++axis) {
    if (axis == faceAxis(faceIndex) || (periodicAxes & (1u << axis)) || whole.size(axis) == 1) continue;
    const float s = (static_cast<float>(position[axis]) + 0.5f) / static_cast<float>(whole.size(axis));
    shape *= 4.0f * s * (1.0f - s);
  }
  return Vector3{shape * condition.velocity.x, shape * condition.velocity.y, shape * condition.velocity.z};
}

// Density and velocity of a node (its previous step's, for the open-face rules).
struct NodeMoments {
  float rho = 1.0f;
  Vector3 u;
};

// The population q arriving at a node through the faces in `crossed` (a bit per face), given the
// node's own reflected f*_opposite(q) (populations stored as deviations from the weights). Walls
// of every kind reflect it half-way (Ladd 1994); moving walls and velocity inlets add
// 2 w_q rho_w (c_q . u_w) / cs^2 (Krueger et al., The Lattice Boltzmann Method (2017), eq. 5.27)
// with rho_w the node's density (an inlet: rho_0 = 1, a fixed mass flux), summed over every such
// face the link crosses: at a resting or tangentially moving wall these terms cancel over the
// links of each node, so walls keep the mass exactly. A pressure outlet applies anti-bounce-back,
// f_q = -f*_qbar + 2 w_q rho_out [1 + 4.5 (c_q.u)^2 - 1.5 u^2] (Krueger eq. 5.53) with u the
// node's velocity; an outflow face holds the reference density rho_0 = 1 with the velocity of the
// node one step inward (`inner`: zero normal gradient of the velocity at a fixed pressure, the
// usual outflow of incompressible solvers). Walls take precedence over open faces at edges and
// corners. `at`: the node's position in whole-grid node coordinates (parabolic inlets).
template <class L, class Position>
OCTO_HD OCTO_INLINE float incomingAcrossFaces(const FaceBoundaries& boundaries, const Extent& whole,
                                              unsigned periodicAxes, const Position (&at)[3], float reflected, int q,
                                              unsigned crossed, const NodeMoments& node, const NodeMoments& inner) {
  bool wall = false, moving = false, inlet = false;
  int openFace = -1;
  Vector3 wallVelocity;
  for (int face = 0; face < kFaceCount; ++face) {
    if (!(crossed & (1u << face))) continue;
    const FaceCondition& condition = boundaries.face[face];
    switch (condition.type) {
      case FaceType::MovingWall:
      case FaceType::Velocity: {
        const Vector3 v = faceVelocity(condition, face, whole, periodicAxes, at);
        wallVelocity = Vector3{wallVelocity.x + v.x, wallVelocity.y + v.y, wallVelocity.z + v.z};
        moving = true;
        wall = true;
        inlet = inlet || condition.type == FaceType::Velocity;
        break;
      }
      case FaceType::Pressure:
      case FaceType::Outflow: openFace = face; break;
      default: wall = true; break;
    }
  }
  if (wall || openFace < 0) {
    if (!moving) return reflected;
    // An inlet injects the reference density: its mass flux rho_0 u is fixed, so the density
    // in the domain cannot feed back into it (and grow) when the outlet is an outflow face.
    const float wallDensity = inlet ? 1.0f : node.rho;
    return reflected + 6.0f * L::w(q) * wallDensity * velocityDot<L>(q, wallVelocity);
  }
  const FaceCondition& open = boundaries.face[openFace];
  const Vector3 outletVelocity = open.type == FaceType::Outflow ? inner.u : node.u;
  const float cu = velocityDot<L>(q, outletVelocity);
  return -reflected +
         2.0f * L::w(q) * (open.density * (1.0f + 4.5f * cu * cu - 1.5f * dot(outletVelocity, outletVelocity)) - 1.0f);
}

}  // namespace octoflow::lbm
