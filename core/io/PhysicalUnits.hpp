#pragma once
// Physical units of a case: the one place lattice quantities become SI. Solvers work in lattice
// units (spacing dx = 1, step dt = 1, reference density 1); [units] gives dx in metres, the
// velocity scale dx/dt in m/s, the fluid's kinematic viscosity and density, and outputs carry
// SI values beside the lattice ones.
namespace octoflow::io {

struct PhysicalUnits {
  bool given = false;
  double length = 1.0;    // dx: metres per lattice spacing
  double velocity = 1.0;  // dx/dt: metres per second per lattice velocity unit
  double density = 1.0;   // kg/m^3 of the lattice reference density 1
  double viscosity = 0.0; // m^2/s (0: not given; the case's tau or viscosity then stands)

  double timeStep() const { return length / velocity; }  // dt, seconds
  double toSiVelocity(double latticeVelocity) const { return latticeVelocity * velocity; }
  // Gauge pressure from a lattice density: p = cs^2 (rho - 1), cs^2 = 1/3, scaled by rho dx^2/dt^2.
  double toSiPressure(double latticeDensity) const { return (latticeDensity - 1.0) / 3.0 * density * velocity * velocity; }
  // Force: lattice mass dx^3 rho, length dx, time dt; in 2D the force is per unit depth (N/m).
  double toSiForce(double latticeForce, int dimensions) const {
    const double perUnitDepth = density * velocity * velocity * length;  // rho dx^4/dt^2 / dx
    return latticeForce * perUnitDepth * (dimensions == 3 ? length : 1.0);
  }
  // The lattice viscosity of the physical one: nu_lattice = nu dt / dx^2.
  double latticeViscosity() const { return viscosity / (length * velocity); }
};

}  // namespace octoflow::io
