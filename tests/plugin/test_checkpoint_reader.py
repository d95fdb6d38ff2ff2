"""pvpython test of the "octoflow Checkpoint" reader: checkpoints written by `octoflow run` read back
as the fields the run wrote at the same steps, bit for bit (the .vti/.vthb/.vtp files are the
reference), with their times as time steps (a group of files, and the .ckpt.series manifest), the
tracers on port 1, arrays selectable, a checkpoint of two MPI ranks as one grid, the octree as a
non-overlapping AMR dataset.

Arguments: plugin library, octoflow program, mpiexec ("" without MPI), a scratch folder."""
import glob
import os
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
from paraview.simple import LoadPlugin
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPolyDataReader

plugin_path, program, mpiexec, scratch = sys.argv[1:5]
LoadPlugin(plugin_path, ns=globals())
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


CHANNEL = """[case]
name = "channel"
steps = 120
[lbm]
lattice = "D2Q9"
collision = "trt"
tau = 0.7
[units]
length = 0.001
velocity = 1.0
[domain]
size = [48, 26]
[[boundary]]
faces = ["x-"]
type = "velocity"
velocity = [0.05, 0.0]
profile = "parabolic"
[[boundary]]
faces = ["x+"]
type = "outflow"
[[obstacle]]
shape = "cylinder"
center = [23.6, 12.7]
radius = 4.0
[output]
every = 40
[tracers]
[[tracers.source]]
type = "line"
from = [2.0, 3.0]
to = [2.0, 22.0]
count = 12
release_every = 20
[checkpoint]
every = 40
keep = 10
"""

DENDRITE = """[case]
name = "crystal"
solver = "phasefield"
steps = 60
[domain]
size = [40, 40]
[phasefield]
nucleus_radius = 5.0
[output]
every = 30
[checkpoint]
every = 30
"""

OCTREE = """[case]
name = "octree"
solver = "lbm-amr"
steps = 8
[domain]
size = [32, 32, 32]
periodic = [true, true, true]
[lbm]
lattice = "D3Q19"
tau = 0.6
body_force = [2.0e-6, 0.0, 0.0]
[[obstacle]]
shape = "sphere"
center = [12.0, 16.0, 16.0]
radius = 3.0
[amr]
max_level = 1
[output]
every = 4
[checkpoint]
every = 4
"""


def run_case(name, text, ranks=1):
    """Runs the case in scratch/<name>/ (ranks > 1: under mpiexec); returns its output folder."""
    folder = os.path.join(scratch, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "case.toml"), "w") as case:
        case.write(text.replace("[output]\n", '[output]\ndirectory = "out"\n'))
    command = [program, "run", "case.toml", "--backend", "cpu", "--quiet"]
    if ranks > 1:
        command = [mpiexec, "--oversubscribe", "-np", str(ranks), "-x", "OMP_NUM_THREADS=1"] + command
    # pvpython is an MPI process itself (a singleton): its Open MPI variables must not reach mpiexec.
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    result = subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr)
        sys.exit("FAILED: octoflow run of %s exited with %d" % (name, result.returncode))
    return os.path.join(folder, "out")


def arrays_of(attributes):
    """Every array of point or field data, by name, as numpy arrays."""
    return {attributes.GetArrayName(n): vtk_to_numpy(attributes.GetAbstractArray(n)) for n in range(attributes.GetNumberOfArrays())}


def same_arrays(label, got, expected):
    check(len(expected) > 0, "%s: the run's file holds no arrays to compare" % label)
    check(sorted(got) == sorted(expected), "%s: arrays %s, the run wrote %s" % (label, sorted(got), sorted(expected)))
    for name in expected:
        if name in got:
            check(got[name].dtype == expected[name].dtype and np.array_equal(got[name], expected[name]),
                  "%s: array %s differs from the run's file" % (label, name))


def read_xml(reader_class, path):
    reader = reader_class()
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutputDataObject(0)


def output_at(reader, time, port=0):
    reader.UpdatePipeline(time)
    return reader.GetClientSideObject().GetOutputDataObject(port)


def step_file(folder, name, step, extension):
    return os.path.join(folder, "%s_%08d.%s" % (name, step, extension))


# 1. A 2D channel with a cylinder and tracers, one rank: every checkpoint against the run's files.
channel = run_case("channel", CHANNEL)
checkpoints = sorted(glob.glob(os.path.join(channel, "checkpoints", "channel_*.ckpt")))
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
same_arrays("manifest step 80", arrays_of(output_at(series, 80.0).GetPointData()),
            arrays_of(read_xml(vtkXMLImageDataReader, step_file(channel, "channel", 80, "vti")).GetPointData()))

# Arrays are selectable: density alone leaves out velocity and the arrays made from it.
reader.PointArrays = ["density"]
names = sorted(arrays_of(output_at(reader, 120.0).GetPointData()))
check("density" in names and "velocity" not in names and "velocity_si" not in names, "density alone gave %s" % names)
reader.PointArrays = ["density", "velocity"]

# 2. The same run on two MPI ranks: pieces of one checkpoint read as one grid, the one-rank bits.
if mpiexec:
    split = run_case("channel2", CHANNEL, ranks=2)
    check(len(glob.glob(os.path.join(split, "checkpoints", "channel_00000120.rank*of0002.piece"))) == 2,
          "two piece files of step 120")
    pieces = octoflowCheckpoint(registrationName="pieces",  # noqa: F821
                                FileNames=[os.path.join(split, "checkpoints", "channel_00000120.ckpt")])
    image = output_at(pieces, 120.0)
    check(image.GetExtent() == (0, 47, 0, 25, 0, 0), "two ranks' extent %s" % (image.GetExtent(),))
    same_arrays("two ranks, step 120", arrays_of(image.GetPointData()),
                arrays_of(read_xml(vtkXMLImageDataReader, step_file(channel, "channel", 120, "vti")).GetPointData()))

# 3. The phase-field solver: phi and the temperature of each checkpoint.
crystal = run_case("crystal", DENDRITE)
field = octoflowCheckpoint(registrationName="crystal",  # noqa: F821
                           FileNames=sorted(glob.glob(os.path.join(crystal, "checkpoints", "crystal_*.ckpt"))))
check(len(field.TimestepValues) == 2, "phase-field time steps %s" % list(field.TimestepValues))
for time, step in zip(field.TimestepValues, (30, 60)):
    same_arrays("crystal step %d" % step, arrays_of(output_at(field, time).GetPointData()),
                arrays_of(read_xml(vtkXMLImageDataReader, step_file(crystal, "crystal", step, "vti")).GetPointData()))

# 4. The octree: a non-overlapping AMR dataset, block for block the run's .vthb (whose blocks, listed
# by level, are .vti files).
octree = run_case("octree", OCTREE)
blocks = octoflowCheckpoint(registrationName="octree",  # noqa: F821
                            FileNames=[os.path.join(octree, "checkpoints", "octree_00000008.ckpt")])
check(list(blocks.TimestepValues) == [8.0], "octree time steps %s" % list(blocks.TimestepValues))
amr = output_at(blocks, 8.0)
check(amr.IsA("vtkNonOverlappingAMR"), "the octree reads as %s" % amr.GetClassName())
listed = ElementTree.parse(step_file(octree, "octree_amr", 8, "vthb")).getroot().find("vtkNonOverlappingAMR")
levels = listed.findall("Block")
check(amr.GetNumberOfLevels() == len(levels) == 2, "levels %d, the run wrote %d" % (amr.GetNumberOfLevels(), len(levels)))
compared = 0
for level, entry in enumerate(levels[: amr.GetNumberOfLevels()]):
    files = entry.findall("DataSet")
    check(amr.GetNumberOfDataSets(level) == len(files),
          "blocks of level %d: %d, the run wrote %d" % (level, amr.GetNumberOfDataSets(level), len(files)))
    for index, dataset in enumerate(files[: amr.GetNumberOfDataSets(level)]):
        block = amr.GetDataSet(level, index)
        expected = read_xml(vtkXMLImageDataReader, os.path.join(octree, dataset.get("file")))
        check(block.GetExtent() == expected.GetExtent() and block.GetOrigin() == expected.GetOrigin()
              and block.GetSpacing() == expected.GetSpacing(), "block %d/%d placement" % (level, index))
        # Values at the blocks' points are the cells of a grid around them (AmrBuilder.hpp).
        same_arrays("block %d/%d" % (level, index), arrays_of(block.GetCellData()), arrays_of(expected.GetCellData()))
        compared += 1
check(compared > 0, "no octree block compared")

# 5. Not a checkpoint: an error, no output, no crash.
bogus = os.path.join(scratch, "bogus.ckpt")
with open(bogus, "w") as text:
    text.write("not a checkpoint\n")
bad = octoflowCheckpoint(registrationName="bad", FileNames=[bogus])  # noqa: F821
bad.UpdatePipeline()
output = bad.GetClientSideObject().GetOutputDataObject(0)
check(output is None or output.GetNumberOfPoints() == 0, "a file that is no checkpoint produced data")

if failures:
    sys.exit("%d check(s) failed" % len(failures))
print("passed")
