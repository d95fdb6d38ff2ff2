# script-version: 2
# octoflow Catalyst script: velocity magnitude of channel "grid" as a PNG each time octoflow
# runs the pipelines ([insitu] every = N steps). A 2D grid is shown whole; a 3D grid is cut
# by the z = middle plane. PNGs land in <output directory>/catalyst/velocity_<step>.png.
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, look_down_z, middle_plane, range_over_ranks, render_view

GRID_CHANNEL = "grid"          # octoflow's channel name (adaptors/Channels.hpp)
VELOCITY_ARRAY = "velocity"

grid = TrivialProducer(registrationName=GRID_CHANNEL)
bounds = grid_bounds(grid)  # the whole grid, also under MPI (each rank holds a piece)
shown = middle_plane(grid, bounds)
view = render_view([0.1, 0.1, 0.12])

display = Show(shown, view)
display.Representation = "Surface"
ColorBy(display, ("POINTS", VELOCITY_ARRAY, "Magnitude"))
lut = GetColorTransferFunction(VELOCITY_ARRAY)
lut.ApplyPreset("Turbo", True)
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "|velocity|"
bar.ComponentTitle = "(lattice units)"

look_down_z(view, bounds)

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
