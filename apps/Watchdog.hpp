#pragma once
// A run stopped by the watchdog (sim/FieldCheck.hpp: fields not finite or out of their sane
// range): the CLI prints the message and exits with code 3.
#include "common/Error.hpp"

namespace octoflow::app {

class DivergenceError : public Error {
public:
  using Error::Error;
};

}  // namespace octoflow::app
