"""pvpython test of the "octoflow Checkpoint" reader: checkpoints written by `octoflow run` read back
as the fields the run wrote at the same steps, bit for bit (the .vti/.vthb/.vtp files are the
reference), with their times as time steps (a group of files, and the .ckpt.series manifest), the
tracers on port 1, arrays selectable, a checkpoint of two MPI ranks as one grid, the octree as a
non-overlapping AMR dataset.

Arguments: plugin library, octoflow program, mpiexec ("" without MPI), a scratch folder."""
import glob
import os
import sys

import numpy as np
from paraview.simple import LoadPlugin
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPolyDataReader

from plugin_support import (CHANNEL, DENDRITE, OCTREE, arrays_of, check, finish, output_at, read_xml, run_case,
                            same_arrays, same_blocks, step_file)

plugin_path, program, mpiexec, scratch = sys.argv[1:5]
LoadPlugin(plugin_path, ns=globals())
CHECKPOINTS = "[checkpoint]\nevery = %d\nkeep = 10\n"

# 1. A 2D channel with a cylinder and tracers, one rank: every checkpoint against the run's files.
# A file in the checkpoint folder under a checkpoint's name that is none: the run goes on, the
# manifest leaves it out.
channel = run_case(program, mpiexec, scratch, "channel", CHANNEL + CHECKPOINTS % 40,
                   files={"checkpoints/channel_00000999.ckpt": "not a checkpoint\n"})
checkpoints = sorted(path for path in glob.glob(os.path.join(channel, "checkpoints", "channel_*.ckpt"))
                     if not path.endswith("999.ckpt"))
check(len(checkpoints) == 3, "three checkpoints, found %s" % checkpoints)
reader = octoflowCheckpoint(registrationName="channel", FileNames=checkpoints)  # noqa: F821 (from the plugin)
check(list(reader.TimestepValues) == [40.0, 80.0, 120.0], "time steps %s" % list(reader.TimestepValues))
check(sorted(reader.PointArrays.Available) == ["density", "velocity"], "arrays %s" % reader.PointArrays.Available)
for step in (40, 80, 120):
    image = output_at(reader, float(step))
    written = read_xml(vtkXMLImageDataReader, step_file(channel, "channel", step, "vti"))
    check(image.GetExtent() == written.GetExtent() == (0, 47, 0, 25, 0, 0), "extent at %d: %s" % (step, image.GetExtent()))
    same_arrays("channel step %d" % step, arrays_of(image.GetPointData()), arrays_of(written.GetPointData()))
    same_arrays("channel step %d (field data)" % step, arrays_of(image.GetFieldData()), arrays_of(written.GetFieldData()))
    tracers = reader.GetClientSideObject().GetOutputDataObject(1)
    tracers_written = read_xml(vtkXMLPolyDataReader, step_file(channel, "tracers", step, "vtp"))
    check(tracers.GetNumberOfPoints() == tracers_written.GetNumberOfPoints() > 0,
          "tracers at %d: %d, the run wrote %d" % (step, tracers.GetNumberOfPoints(), tracers_written.GetNumberOfPoints()))
    check(np.array_equal(vtk_to_numpy(tracers.GetPoints().GetData()), vtk_to_numpy(tracers_written.GetPoints().GetData())),
          "tracer positions at %d differ from the run's" % step)
    same_arrays("tracers step %d" % step, arrays_of(tracers.GetPointData()), arrays_of(tracers_written.GetPointData()))

# The manifest the run keeps beside the checkpoints: the same time steps, the same fields.
manifest = os.path.join(channel, "checkpoints", "channel.ckpt.series")
series = octoflowCheckpoint(registrationName="manifest", FileNames=[manifest])  # noqa: F821
check(list(series.TimestepValues) == [40.0, 80.0, 120.0], "manifest time steps %s" % list(series.TimestepValues))
# The tracers port has the series' time steps too.
series.UpdatePipelineInformation()
tracer_times = series.GetClientSideObject().GetOutputInformation(1).Get(vtkStreamingDemandDrivenPipeline.TIME_STEPS())
check(tracer_times is not None and list(tracer_times) == [40.0, 80.0, 120.0], "tracers port time steps %s" % (tracer_times,))
same_arrays("manifest step 80", arrays_of(output_at(series, 80.0).GetPointData()),
            arrays_of(read_xml(vtkXMLImageDataReader, step_file(channel, "channel", 80, "vti")).GetPointData()))

# Arrays are selectable: density alone leaves out velocity and the arrays made from it.
reader.PointArrays = ["density"]
names = sorted(arrays_of(output_at(reader, 120.0).GetPointData()))
check("density" in names and "velocity" not in names and "velocity_si" not in names, "density alone gave %s" % names)
reader.PointArrays = ["density", "velocity"]

# 2. The same run on two MPI ranks: pieces of one checkpoint read as one grid, the one-rank bits.
if mpiexec:
    split = run_case(program, mpiexec, scratch, "channel2", CHANNEL + CHECKPOINTS % 40, ranks=2)
    check(len(glob.glob(os.path.join(split, "checkpoints", "channel_00000120.rank*of0002.piece"))) == 2,
          "two piece files of step 120")
    pieces = octoflowCheckpoint(registrationName="pieces",  # noqa: F821
                                FileNames=[os.path.join(split, "checkpoints", "channel_00000120.ckpt")])
    image = output_at(pieces, 120.0)
    check(image.GetExtent() == (0, 47, 0, 25, 0, 0), "two ranks' extent %s" % (image.GetExtent(),))
    same_arrays("two ranks, step 120", arrays_of(image.GetPointData()),
                arrays_of(read_xml(vtkXMLImageDataReader, step_file(channel, "channel", 120, "vti")).GetPointData()))

# 3. The phase-field solver: phi and the temperature of each checkpoint.
crystal = run_case(program, mpiexec, scratch, "crystal", DENDRITE + CHECKPOINTS % 30)
field = octoflowCheckpoint(registrationName="crystal",  # noqa: F821
                           FileNames=sorted(glob.glob(os.path.join(crystal, "checkpoints", "crystal_*.ckpt"))))
check(len(field.TimestepValues) == 2, "phase-field time steps %s" % list(field.TimestepValues))
for time, step in zip(field.TimestepValues, (30, 60)):
    same_arrays("crystal step %d" % step, arrays_of(output_at(field, time).GetPointData()),
                arrays_of(read_xml(vtkXMLImageDataReader, step_file(crystal, "crystal", step, "vti")).GetPointData()))

# 4. The octree: a non-overlapping AMR dataset, block for block the run's .vthb (whose blocks, listed
# by level, are .vti files).
octree = run_case(program, mpiexec, scratch, "octree", OCTREE + CHECKPOINTS % 4)
blocks = octoflowCheckpoint(registrationName="octree",  # noqa: F821
                            FileNames=[os.path.join(octree, "checkpoints", "octree_00000008.ckpt")])
check(list(blocks.TimestepValues) == [8.0], "octree time steps %s" % list(blocks.TimestepValues))
amr = output_at(blocks, 8.0)
same_blocks("octree step 8", amr, octree, step_file(octree, "octree_amr", 8, "vthb"))

# Interface Metrics over a series with a damaged checkpoint in the middle: an error, no hang; a
# series of good ones afterwards measures every time step.
broken = os.path.join(channel, "checkpoints", "broken.ckpt.series")
with open(broken, "w") as listing:
    listing.write('{"file-series-version": "1.0", "files": [{"name": "channel_00000040.ckpt", "time": 40},'
                  ' {"name": "channel_00000999.ckpt", "time": 50}, {"name": "channel_00000120.ckpt", "time": 120}]}')
damaged = octoflowCheckpoint(registrationName="broken", FileNames=[broken])  # noqa: F821
metrics = InterfaceMetrics(registrationName="broken_metrics", Input=damaged, Scalar=["POINTS", "density"],  # noqa: F821
                           IsoValue=1.0)
metrics.UpdatePipeline()  # returns (the error is reported), never loops
good = InterfaceMetrics(registrationName="good_metrics", Input=reader, Scalar=["POINTS", "density"], IsoValue=1.0)  # noqa: F821
good.UpdatePipeline()
rows = good.GetClientSideObject().GetOutputDataObject(0).GetNumberOfRows()
check(rows == 3, "Interface Metrics over the three checkpoints: %d rows" % rows)

# 5. Not a checkpoint: an error, no output, no crash.
bogus = os.path.join(scratch, "bogus.ckpt")
with open(bogus, "w") as text:
    text.write("not a checkpoint\n")
bad = octoflowCheckpoint(registrationName="bad", FileNames=[bogus])  # noqa: F821
bad.UpdatePipeline()
output = bad.GetClientSideObject().GetOutputDataObject(0)
check(output is None or output.GetNumberOfPoints() == 0, "a file that is no checkpoint produced data")

finish()
