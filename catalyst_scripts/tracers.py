# script-version: 2
# octoflow Catalyst script: the tracer particles of channel "tracers" coloured by their speed,
# over a slice of the flow's speed from channel "grid" (the z = middle plane; a 2D grid whole).
# Writes <output directory>/catalyst/tracers_<step>.png and the tracers as tracers_<step>.pvtp
# (each rank's piece under tracers_<step>/), which ParaView's TemporalParticlesToPathlines turns
# into pathlines (id array "id").
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, look_down_z, middle_plane, range_over_ranks, render_view

GRID_CHANNEL = "grid"          # octoflow's channel names (adaptors/Channels.hpp)
TRACERS_CHANNEL = "tracers"
VELOCITY_ARRAY = "velocity"
ID_ARRAY = "id"
AGE_ARRAY = "age"

grid = TrivialProducer(registrationName=GRID_CHANNEL)
tracers = TrivialProducer(registrationName=TRACERS_CHANNEL)
bounds = grid_bounds(grid)  # the whole grid, also under MPI (each rank holds a piece)
flow = middle_plane(grid, bounds)
view = render_view([0.1, 0.1, 0.12])

flow_display = Show(flow, view)
flow_display.Representation = "Surface"
ColorBy(flow_display, ("POINTS", VELOCITY_ARRAY, "Magnitude"))
# Colour maps of their own: a map named after the array would be shared with other scripts
# colouring by "velocity" in the same run.
flow_lut = GetColorTransferFunction("tracers_flow_speed")
flow_lut.VectorMode = "Magnitude"
flow_lut.ApplyPreset("Grayscale", True)
flow_display.LookupTable = flow_lut

tracer_display = Show(tracers, view)
tracer_display.Representation = "Points"
tracer_display.PointSize = 5.0
tracer_display.RenderPointsAsSpheres = 1
ColorBy(tracer_display, ("POINTS", VELOCITY_ARRAY, "Magnitude"))
tracer_lut = GetColorTransferFunction("tracer_speed")
tracer_lut.VectorMode = "Magnitude"
tracer_lut.ApplyPreset("Turbo", True)
tracer_display.LookupTable = tracer_lut
tracer_display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(tracer_lut, view)
bar.Title = "tracer speed"
bar.ComponentTitle = "(lattice units)"

look_down_z(view, bounds)

png = CreateExtractor("PNG", view, registrationName="tracers_png")
png.Writer.FileName = "tracers_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]
vtp = CreateExtractor("VTP", tracers, registrationName="tracers_vtp")
vtp.Writer.FileName = "tracers_{timestep:08d}.pvtp"

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # The flow's velocity for the slice; the tracers with their arrays (Catalyst passes on only
    # the arrays a script asks for).
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    grid_description.AddField(VELOCITY_ARRAY, 0)  # 0 = vtkDataObject.POINT
    grid_description.GenerateMeshOn()
    tracer_description = datadescription.GetInputDescriptionByName(TRACERS_CHANNEL)
    if tracer_description is not None:
        for name in (ID_ARRAY, VELOCITY_ARRAY, AGE_ARRAY):
            tracer_description.AddField(name, 0)
        tracer_description.GenerateMeshOn()


def catalyst_execute(info):
    # Each frame uses the full colour maps, the same ranges on every rank (their pieces make one
    # image): the flow's speed, and the tracers' own.
    for source, lut in ((grid, flow_lut), (tracers, tracer_lut)):
        source.UpdatePipeline(info.time)
        low, high = range_over_ranks(source, VELOCITY_ARRAY)
        lut.RescaleTransferFunction(low, max(high, low + 1e-12))
