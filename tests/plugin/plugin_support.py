"""Helpers of the plugin's pvpython tests: small cases of every solver, `octoflow run` on them, and
comparisons of what the plugin outputs with the files the run wrote (bit for bit)."""
import os
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLImageDataReader

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


# A 2D channel past a cylinder with tracers (LBM, physical units), a 2D crystal (phase-field), a
# sphere on a two-level octree: outputs every 40, 30 and 4 steps.
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
"""

# A 2D crystal growing for 1,200 steps, its fields and dendrite.csv every 300 (Interface Metrics).
GROWING_CRYSTAL = """[case]
name = "crystal"
solver = "phasefield"
steps = 1200
[domain]
size = [120, 120]
[phasefield]
nucleus_radius = 6.0
[output]
every = 300
[diagnostics]
every = 300
"""

# A 3D crystal (the rendered and GUI tests: its phi = 0.5 surface), checkpoints every 100 steps.
CRYSTAL3D = """[case]
name = "crystal"
solver = "phasefield"
steps = 400
[domain]
size = [48, 48, 48]
[phasefield]
nucleus_radius = 6.0
[output]
every = 100
[checkpoint]
every = 100
keep = 10
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
"""


def run_case(program, mpiexec, scratch, name, text, ranks=1, files=None):
    """Runs the case in scratch/<name>/ (ranks > 1: under mpiexec), its output folder `out` holding
    `files` ({path in out: text}) beforehand; returns the output folder."""
    folder = os.path.join(scratch, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for path, content in (files or {}).items():
        os.makedirs(os.path.dirname(os.path.join(folder, "out", path)), exist_ok=True)
        with open(os.path.join(folder, "out", path), "w") as extra:
            extra.write(content)
    with open(os.path.join(folder, "case.toml"), "w") as case:
        case.write(text.replace("[output]\n", '[output]\ndirectory = "out"\n'))
    command = [program, "run", "case.toml", "--backend", "cpu", "--quiet"]
    if ranks > 1:
        command = [mpiexec, "--oversubscribe", "-np", str(ranks), "-x", "OMP_NUM_THREADS=1"] + command
    # pvpython is an MPI process itself (a singleton): its Open MPI variables must not reach mpiexec.
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    # HWLOC_COMPONENTS: hwloc's OpenGL component connects to every X display while mpiexec maps the
    # machine; another test's virtual display closing meanwhile would end it ("X connection to :0
    # broken").
    environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HWLOC_COMPONENTS="-gl")
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



def same_blocks(label, amr, folder, vthb):
    """The blocks of a non-overlapping AMR output against the run's .vthb (whose blocks, listed by
    level, are .vti files; values at the blocks' points are the cells of a grid around them)."""
    check(amr.IsA("vtkNonOverlappingAMR"), "%s: the octree reads as %s" % (label, amr.GetClassName()))
    levels = ElementTree.parse(vthb).getroot().find("vtkNonOverlappingAMR").findall("Block")
    check(amr.GetNumberOfLevels() == len(levels), "%s: %d levels, the run wrote %d" % (label, amr.GetNumberOfLevels(), len(levels)))
    compared = 0
    for level, entry in enumerate(levels[: amr.GetNumberOfLevels()]):
        files = entry.findall("DataSet")
        check(amr.GetNumberOfDataSets(level) == len(files),
              "%s: blocks of level %d: %d, the run wrote %d" % (label, level, amr.GetNumberOfDataSets(level), len(files)))
        for index, dataset in enumerate(files[: amr.GetNumberOfDataSets(level)]):
            block = amr.GetDataSet(level, index)
            expected = read_xml(vtkXMLImageDataReader, os.path.join(folder, dataset.get("file")))
            check(block.GetExtent() == expected.GetExtent() and block.GetOrigin() == expected.GetOrigin()
                  and block.GetSpacing() == expected.GetSpacing(), "%s: block %d/%d placement" % (label, level, index))
            same_arrays("%s: block %d/%d" % (label, level, index), arrays_of(block.GetCellData()),
                        arrays_of(expected.GetCellData()))
            compared += 1
    check(compared > 0, "%s: no block compared" % label)


def finish():
    if failures:
        sys.exit("%d check(s) failed" % len(failures))
    print("passed")


def image_difference(got, expected):
    """(fraction of pixels with a channel off by more than 16 of 255, mean absolute difference) of
    two images of the same size, as numpy arrays of RGB(A) bytes."""
    difference = np.abs(got[..., :3].astype(int) - expected[..., :3].astype(int))
    return float(np.mean(difference.max(axis=-1) > 16)), float(np.mean(difference))


def read_png(path):
    """A PNG as a numpy array (rows top to bottom) of RGB(A) bytes."""
    from vtkmodules.vtkIOImage import vtkPNGReader

    reader = vtkPNGReader()
    reader.SetFileName(path)
    reader.Update()
    image = reader.GetOutput()
    width, height, _ = image.GetDimensions()
    values = vtk_to_numpy(image.GetPointData().GetScalars())
    return values.reshape(height, width, -1)[::-1]


def write_png(path, pixels):
    """RGB bytes (numpy, rows top to bottom) as a PNG."""
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonDataModel import vtkImageData
    from vtkmodules.vtkIOImage import vtkPNGWriter

    height, width, channels = pixels.shape
    image = vtkImageData()
    image.SetDimensions(width, height, 1)
    array = numpy_to_vtk(np.ascontiguousarray(pixels[::-1]).reshape(-1, channels), deep=1)
    image.GetPointData().SetScalars(array)
    writer = vtkPNGWriter()
    writer.SetFileName(path)
    writer.SetInputData(image)
    writer.Write()
