#pragma once
// Numbers in messages and one-line descriptions: four significant digits.
#include <cstdio>
#include <string>

namespace octoflow {

inline std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

}  // namespace octoflow
