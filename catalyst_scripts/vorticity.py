# script-version: 2
# octoflow Catalyst script: the vorticity (dv/dx - du/dy) of channel "grid" on a diverging colour
# map of fixed range, as a PNG each time octoflow runs the pipelines ([insitu] every = N steps):
# the frames of a Karman vortex street make a movie as they come. With Catalyst Live (live.py
# beside it, or --catalyst-live) the same view streams to a ParaView GUI while the GPU computes.
# PNGs land in <output directory>/catalyst/vorticity_<step>.png. Made for the 2D solvers' grids
# ("ns2d", D2Q9 "lbm"); a 3D grid is cut by its z = middle plane.
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, look_down_z, middle_plane, render_view

GRID_CHANNEL = "grid"          # octoflow's channel name (adaptors/Channels.hpp)
VORTICITY_ARRAY = "vorticity"
# Colours saturate at +-VORTICITY_RANGE (the field's units: "ns2d" velocity / length, in units of
# the inflow and the cylinder's diameter). A fixed range keeps the frames of a movie comparable.
VORTICITY_RANGE = float(os.environ.get("OCTOFLOW_VORTICITY_RANGE", "5.0"))

grid = TrivialProducer(registrationName=GRID_CHANNEL)
bounds = grid_bounds(grid)  # the whole grid, also under MPI (each rank holds a piece)
shown = middle_plane(grid, bounds)
view = render_view([1.0, 1.0, 1.0])
# The frame takes the domain's aspect (a 2:1 channel gives 1600 x 800).
width, height = max(bounds[1] - bounds[0], 1.0), max(bounds[3] - bounds[2], 1.0)
view.ViewSize = [1600, max(200, min(1600, int(round(1600 * height / width))))]

display = Show(shown, view)
display.Representation = "Surface"
display.Ambient = 1.0  # the map's own colours, unshaded (a flat 2D field)
display.Diffuse = 0.0
ColorBy(display, ("POINTS", VORTICITY_ARRAY))
lut = GetColorTransferFunction(VORTICITY_ARRAY)
lut.ApplyPreset("Cool to Warm", True)
lut.RescaleTransferFunction(-VORTICITY_RANGE, VORTICITY_RANGE)
lut.AutomaticRescaleRangeMode = "Never"
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "vorticity"
bar.ComponentTitle = ""
bar.TitleColor = [0.1, 0.1, 0.1]
bar.LabelColor = [0.1, 0.1, 0.1]

look_down_z(view, bounds)

png = CreateExtractor("PNG", view, registrationName="vorticity_png")
png.Writer.FileName = "vorticity_{timestep:08d}.png"
png.Writer.ImageResolution = list(view.ViewSize)

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # Only the vorticity crosses to ParaView: octoflow copies no other field for this script.
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    grid_description.AddField(VORTICITY_ARRAY, 0)  # 0 = vtkDataObject.POINT
    grid_description.GenerateMeshOn()


def catalyst_execute(info):
    grid.UpdatePipeline(info.time)
