# script-version: 2
# octoflow Catalyst script for the phase-field dendrite: renders channel "surface" (the phi = 0.5
# surface octoflow extracts where the solver runs, triangles with normals) from a camera that turns
# a little at each step it runs, so the frames circle the crystal. It is made for a case whose
# nucleus sits in the box's corner at the origin (data/cases/dendrite3d.toml): the box is then one
# octant of the crystal (its no-flux faces are mirrors), and the surface is reflected across the
# planes x = 0, y = 0 and z = 0 to show the whole crystal. Writes
# <output directory>/catalyst/dendrite_<step>.png.
import math
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, render_view

SURFACE_CHANNEL = "surface"    # octoflow's channel names (adaptors/Channels.hpp)
GRID_CHANNEL = "grid"
NORMALS_ARRAY = "Normals"
DEGREES_PER_FRAME = 6.0

surface = TrivialProducer(registrationName=SURFACE_CHANNEL)
grid = TrivialProducer(registrationName=GRID_CHANNEL)  # its extent only: no field is copied
bounds = grid_bounds(grid)

# Mirror across x = 0, y = 0, z = 0 (the corner of the box that holds the nucleus).
whole = surface
for plane in ("X", "Y", "Z"):
    whole = Reflect(registrationName="mirror_" + plane.lower(), Input=whole)
    whole.Plane = plane
    whole.Center = 0.0
    whole.CopyInput = 1

view = render_view([0.16, 0.18, 0.22])
display = Show(whole, view)
display.Representation = "Surface"
display.ColorArrayName = ["POINTS", ""]  # solid colour, shaded with the normals octoflow sends
display.DiffuseColor = [0.86, 0.76, 0.52]
display.Specular = 0.4

frames = [0]


def place_camera():
    # Around the crystal's centre (the box's corner), at a distance that keeps the mirrored box in view.
    size = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4], 1.0)
    angle = math.radians(35.0 + DEGREES_PER_FRAME * frames[0])
    radius = 3.4 * size
    view.CameraFocalPoint = [0.0, 0.0, 0.0]
    view.CameraPosition = [radius * math.cos(angle), radius * math.sin(angle), 0.55 * radius]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    view.CameraViewAngle = 30.0


place_camera()

png = CreateExtractor("PNG", view, registrationName="dendrite_png")
png.Writer.FileName = "dendrite_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # The surface with its normals; of the grid only its extent (no field crosses to the host).
    surface_description = datadescription.GetInputDescriptionByName(SURFACE_CHANNEL)
    if surface_description is not None:
        surface_description.AddField(NORMALS_ARRAY, 0)  # 0 = vtkDataObject.POINT
        surface_description.GenerateMeshOn()
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    if grid_description is not None:
        grid_description.GenerateMeshOn()


def catalyst_execute(info):
    place_camera()
    frames[0] += 1
