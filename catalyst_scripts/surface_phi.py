# script-version: 2
# octoflow Catalyst script: renders channel "surface", the phi = 0.5 surface octoflow extracts
# where the field lives (on the GPU) and hands over as triangles with normals: no grid field is
# copied for it. Writes <output directory>/catalyst/surface_<step>.png and the surface as
# surface_<step>.pvtp (each rank's piece under surface_<step>/).
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import bounds_over_ranks, render_view

SURFACE_CHANNEL = "surface"    # octoflow's channel name (adaptors/Channels.hpp)
NORMALS_ARRAY = "Normals"

surface = TrivialProducer(registrationName=SURFACE_CHANNEL)

view = render_view([1.0, 1.0, 1.0])

display = Show(surface, view)
display.Representation = "Surface"
display.ColorArrayName = ["POINTS", ""]  # solid colour
display.DiffuseColor = [0.35, 0.55, 0.85]  # the point normals octoflow sends give smooth shading


def frame_surface(time=None):
    # An oblique view of the surface's bounds, refreshed each step as the surface moves.
    if time is not None:
        surface.UpdatePipeline(time)
    bounds = bounds_over_ranks(surface)  # the same camera on every rank
    if bounds[0] > bounds[1]:  # nothing extracted this step
        return
    center = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
    size = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4], 1.0)
    view.CameraFocalPoint = center
    view.CameraPosition = [center[0] + 1.6 * size, center[1] - 1.9 * size, center[2] + 1.3 * size]
    view.CameraViewUp = [0.0, 0.0, 1.0]


frame_surface()

png = CreateExtractor("PNG", view, registrationName="surface_png")
png.Writer.FileName = "surface_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]
vtp = CreateExtractor("VTP", surface, registrationName="surface_vtp")
vtp.Writer.FileName = "surface_{timestep:08d}.pvtp"

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # The surface only (the grid and its fields stay on the device for this script), with its
    # point normals: Catalyst passes on only the arrays a script asks for.
    surface_description = datadescription.GetInputDescriptionByName(SURFACE_CHANNEL)
    if surface_description is not None:
        surface_description.AddField(NORMALS_ARRAY, 0)  # 0 = vtkDataObject.POINT
        surface_description.GenerateMeshOn()


def catalyst_execute(info):
    frame_surface(info.time)
