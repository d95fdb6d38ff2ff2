#pragma once
// Conditions on the six faces of a uniform box, in a form the kernels can copy by value.
#include <cstdint>
#include <string>

#include "common/Macros.hpp"
#include "lbm/Collision.hpp"

namespace octoflow::lbm {

enum class FaceType : std::uint8_t { Periodic, Wall, MovingWall };

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

struct FaceBoundaries {
  FaceType type[kFaceCount] = {FaceType::Wall, FaceType::Wall, FaceType::Wall,
                               FaceType::Wall, FaceType::Wall, FaceType::Wall};
  Vector3 wallVelocity[kFaceCount];

  OCTO_HD bool periodic(int axis) const { return type[2 * axis] == FaceType::Periodic; }
};

}  // namespace octoflow::lbm
