"""pvpython test of "octoflow Case", the source that runs a case as time goes on: the plugin loads,
its time steps are the run's steps every StepsPerUpdate, each update advances the solver and equals
the `octoflow run` files of that step bit for bit (LBM with physical units, phase-field, octree),
going back in time runs the case again, Reset restarts it, the Poiseuille profile matches the
analytic parabola, and a bad backend is an error with no data.

Arguments: plugin library, octoflow program, data/cases folder, a scratch folder."""
import math
import os
import sys

from paraview.simple import LoadPlugin
from vtkmodules.vtkIOXML import vtkXMLImageDataReader

from plugin_support import (CHANNEL, DENDRITE, OCTREE, arrays_of, check, finish, output_at, read_xml, run_case,
                            same_arrays, same_blocks, step_file)

plugin_path, program, cases, scratch = sys.argv[1:5]
LoadPlugin(plugin_path, ns=globals())


def same_as_run(label, source, folder, name, step):
    image = output_at(source, float(step))
    written = read_xml(vtkXMLImageDataReader, step_file(folder, name, step, "vti"))
    check(image.GetExtent() == written.GetExtent(), "%s: extent %s" % (label, image.GetExtent()))
    same_arrays(label, arrays_of(image.GetPointData()), arrays_of(written.GetPointData()))
    same_arrays(label + " (field data)", arrays_of(image.GetFieldData()), arrays_of(written.GetFieldData()))


# 1. The channel: K updates of 40 steps are the run's files at step 40 K; back in time, again.
channel = run_case(program, "", scratch, "channel", CHANNEL)
case = os.path.join(scratch, "channel", "case.toml")
source = octoflowCase(registrationName="channel", CaseFile=case, Backend="cpu", StepsPerUpdate=40)  # noqa: F821
check(source.GetProperty("Backend").Available == ["auto", "cpu", "cuda"], "backends %s" % source.GetProperty("Backend").Available)
check(list(source.TimestepValues) == [0.0, 40.0, 80.0, 120.0], "time steps %s" % list(source.TimestepValues))
for step in (40, 80, 120):
    same_as_run("channel, update to %d" % step, source, channel, "channel", step)
    source.UpdatePropertyInformation()
    current = source.GetProperty("CurrentStep")[0]
    check(current == step, "the solver is at step %s, not %d" % (current, step))
same_as_run("channel, back to step 40", source, channel, "channel", 40)
# Reset drops the simulation; the next update runs the case from step 0 again.
source.Reset()
source.UpdatePropertyInformation()
check(source.GetProperty("CurrentStep")[0] == -1, "after Reset no simulation runs")
same_as_run("channel, step 80 after Reset", source, channel, "channel", 80)
# The fields are selectable.
source.PointArrays = ["velocity"]
names = sorted(arrays_of(output_at(source, 120.0).GetPointData()))
check("velocity" in names and "density" not in names, "velocity alone gave %s" % names)

# 2. Phase-field: the default StepsPerUpdate is the case's output.every.
crystal = run_case(program, "", scratch, "crystal", DENDRITE)
field = octoflowCase(registrationName="crystal", CaseFile=os.path.join(scratch, "crystal", "case.toml"),  # noqa: F821
                     Backend="cpu")
check(len(field.TimestepValues) == 3, "phase-field time steps %s" % list(field.TimestepValues))
for time, step in zip(field.TimestepValues[1:], (30, 60)):
    image = output_at(field, time)
    same_arrays("crystal step %d" % step, arrays_of(image.GetPointData()),
                arrays_of(read_xml(vtkXMLImageDataReader, step_file(crystal, "crystal", step, "vti")).GetPointData()))

# 3. The octree: its blocks at step 8, as the run's .vthb.
octree = run_case(program, "", scratch, "octree", OCTREE)
blocks = octoflowCase(registrationName="octree", CaseFile=os.path.join(scratch, "octree", "case.toml"),  # noqa: F821
                      Backend="cpu")
check(list(blocks.TimestepValues) == [0.0, 4.0, 8.0], "octree time steps %s" % list(blocks.TimestepValues))
same_blocks("octree step 8", output_at(blocks, 8.0), octree, step_file(octree, "octree_amr", 8, "vthb"))

# 4. Poiseuille to its steady state: the analytic parabola (as tests/validation/PoiseuilleTest.cpp).
poiseuille = octoflowCase(registrationName="poiseuille", CaseFile=os.path.join(cases, "poiseuille2d.toml"),  # noqa: F821
                          Backend="cpu")
check(list(poiseuille.TimestepValues) == [0.0, 5000.0, 10000.0, 15000.0, 20000.0], "poiseuille times %s" % list(poiseuille.TimestepValues))
image = output_at(poiseuille, 20000.0)
dimensions = image.GetDimensions()
check(dimensions == (64, 32, 1), "dimensions %s" % (dimensions,))
velocity = image.GetPointData().GetArray("velocity")
g, nu, width = 1e-6, (0.8 - 0.5) / 3.0, 32
error_squared = norm_squared = 0.0
for j in range(width):
    y = j + 0.5  # half-way walls at y = -1/2 and y = width - 1/2
    expected = g / (2.0 * nu) * y * (width - y)
    for i in range(dimensions[0]):
        ux, uy, _ = velocity.GetTuple3(i + dimensions[0] * j)
        error_squared += (ux - expected) ** 2 + uy ** 2
        norm_squared += expected ** 2
error = math.sqrt(error_squared / norm_squared)
print("octoflow Case poiseuille2d: relative L2 error of the velocity profile %.3e" % error)
check(error < 2e-3, "relative L2 error %.3e exceeds 2e-3" % error)

# 5. A bad backend is reported, not silently accepted.
bad = octoflowCase(registrationName="bad", CaseFile=case, Backend="gpu")  # noqa: F821
bad.UpdatePipeline()
output = bad.GetClientSideObject().GetOutputDataObject(0)
check(output is None or output.GetNumberOfPoints() == 0, "Backend='gpu' produced data")

finish()
