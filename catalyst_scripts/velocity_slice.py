# script-version: 2
# octoflow Catalyst script: velocity magnitude of channel "grid" as a PNG each time octoflow
# runs the pipelines ([insitu] every = N steps). A 2D grid is shown whole; a 3D grid is cut
# by the z = middle plane. PNGs land in <output directory>/catalyst/velocity_<step>.png.
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, range_over_ranks

GRID_CHANNEL = "grid"          # octoflow's channel name (adaptors/Channels.hpp)
VELOCITY_ARRAY = "velocity"

grid = TrivialProducer(registrationName=GRID_CHANNEL)
bounds = grid_bounds(grid)  # the whole grid, also under MPI (each rank holds a piece)
center = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
is_3d = bounds[5] > bounds[4]

shown = grid
if is_3d:
    shown = Slice(registrationName="z_slice", Input=grid)
    shown.SliceType = "Plane"
    shown.SliceType.Origin = center
    shown.SliceType.Normal = [0.0, 0.0, 1.0]

view = CreateView("RenderView")
view.ViewSize = [1024, 768]
view.OrientationAxesVisibility = 0
view.Background = [0.1, 0.1, 0.12]
try:  # ParaView 5.11 keeps the background in a palette unless told otherwise
    view.UseColorPaletteForBackground = 0
except AttributeError:
    pass

display = Show(shown, view)
display.Representation = "Surface"
ColorBy(display, ("POINTS", VELOCITY_ARRAY, "Magnitude"))
lut = GetColorTransferFunction(VELOCITY_ARRAY)
lut.ApplyPreset("Turbo", True)
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "|velocity|"
bar.ComponentTitle = "(lattice units)"

# Look straight down z, the domain filling the frame (parallel projection, 5 % margin).
width, height = max(bounds[1] - bounds[0], 1.0), max(bounds[3] - bounds[2], 1.0)
view.InteractionMode = "2D"
view.CameraParallelProjection = 1
view.CameraFocalPoint = center
view.CameraPosition = [center[0], center[1], center[2] + 4.0 * max(width, height)]
view.CameraViewUp = [0.0, 1.0, 0.0]
view.CameraParallelScale = 0.525 * max(height, width * view.ViewSize[1] / view.ViewSize[0])

png = CreateExtractor("PNG", view, registrationName="velocity_png")
png.Writer.FileName = "velocity_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # Only the velocity crosses to ParaView: octoflow copies no other field for this script.
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    grid_description.AddField(VELOCITY_ARRAY, 0)  # 0 = vtkDataObject.POINT
    grid_description.GenerateMeshOn()


def catalyst_execute(info):
    # The flow speeds up (or decays): follow its range so each frame uses the full colour map
    # (the same range on every rank: their pieces make one image).
    grid.UpdatePipeline(info.time)
    low, high = range_over_ranks(grid, VELOCITY_ARRAY)
    lut.RescaleTransferFunction(low, max(high, low + 1e-12))
