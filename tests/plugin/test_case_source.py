"""pvpython test: the octoflow plugin loads, "octoflow Case" runs poiseuille2d.toml on the CPU
and its velocity profile matches the analytic parabola."""
import math
import sys

from paraview import servermanager
from paraview.simple import LoadPlugin

plugin_path, case_path = sys.argv[1], sys.argv[2]
LoadPlugin(plugin_path, ns=globals())

source = octoflowCase(registrationName="case", CaseFile=case_path, Backend="cpu")  # noqa: F821 (from the plugin)
assert source.GetProperty("Backend").Available == ["auto", "cpu", "cuda"], source.GetProperty("Backend").Available
image = servermanager.Fetch(source)
dimensions = image.GetDimensions()
assert dimensions == (64, 32, 1), dimensions
points = image.GetPointData()
assert points.GetArray("density") is not None, "no density array"
velocity = points.GetArray("velocity")
assert velocity is not None and velocity.GetNumberOfComponents() == 3, "no 3-component velocity array"

# Case values (data/cases/poiseuille2d.toml): g = 1e-6, tau = 0.8 -> nu = 0.1, width 32.
g, nu, width = 1e-6, (0.8 - 0.5) / 3.0, 32
nx = dimensions[0]
error_squared = norm_squared = 0.0
for j in range(width):
    y = j + 0.5  # half-way walls at y = -1/2 and y = width - 1/2
    expected = g / (2.0 * nu) * y * (width - y)
    for i in range(nx):
        ux, uy, _ = velocity.GetTuple3(i + nx * j)
        error_squared += (ux - expected) ** 2 + uy ** 2
        norm_squared += expected ** 2
error = math.sqrt(error_squared / norm_squared)
print("octoflow Case poiseuille2d: relative L2 error of the velocity profile %.3e" % error)
# Same bound as tests/validation/PoiseuilleTest.cpp: half-way wall slip and FP32 rounding.
if not error < 2e-3:
    print("FAILED: relative L2 error %.3e exceeds 2e-3" % error)
    sys.exit(1)

# A bad backend is reported, not silently accepted.
bad = octoflowCase(registrationName="bad", CaseFile=case_path, Backend="gpu")  # noqa: F821
bad.UpdatePipeline()
bad_image = servermanager.Fetch(bad)
if bad_image.GetNumberOfPoints() != 0:
    print("FAILED: Backend='gpu' produced data")
    sys.exit(1)
print("passed")
