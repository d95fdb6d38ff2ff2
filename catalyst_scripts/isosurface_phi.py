# script-version: 2
# octoflow Catalyst script: the phi = 0.5 contour of channel "grid" (array "phi", the phase
# field), computed by ParaView from the grid each time octoflow runs the pipelines. Writes
# <output directory>/catalyst/phi_<step>.png and the contour as phi_contour_<step>.pvtp (each
# rank's piece under phi_contour_<step>/). To contour on the GPU instead and hand over only the
# triangles, use surface_phi.py (channel "surface").
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import grid_bounds, render_view

GRID_CHANNEL = "grid"          # octoflow's channel name (adaptors/Channels.hpp)
PHI_ARRAY = "phi"
LEVEL = 0.5

grid = TrivialProducer(registrationName=GRID_CHANNEL)
contour = Contour(registrationName="phi_contour", Input=grid)
contour.ContourBy = ["POINTS", PHI_ARRAY]
contour.Isosurfaces = [LEVEL]
contour.ComputeNormals = 1
contour.ComputeScalars = 0

view = render_view([1.0, 1.0, 1.0])

surface_display = Show(contour, view)
surface_display.Representation = "Surface"
surface_display.ColorArrayName = ["POINTS", ""]  # solid colour
surface_display.DiffuseColor = [0.85, 0.55, 0.25]
outline_display = Show(Outline(registrationName="domain", Input=grid), view)
outline_display.DiffuseColor = [0.2, 0.2, 0.2]
outline_display.AmbientColor = [0.2, 0.2, 0.2]

# An oblique view of the whole domain (its outline fixes the frame, whatever the surface does).
bounds = grid_bounds(grid)  # the whole grid, also under MPI (each rank holds a piece)
center = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
size = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4], 1.0)
view.CameraFocalPoint = center
view.CameraPosition = [center[0] + 1.6 * size, center[1] - 1.9 * size, center[2] + 1.3 * size]
view.CameraViewUp = [0.0, 0.0, 1.0]

png = CreateExtractor("PNG", view, registrationName="phi_png")
png.Writer.FileName = "phi_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]
vtp = CreateExtractor("VTP", contour, registrationName="phi_vtp")
vtp.Writer.FileName = "phi_contour_{timestep:08d}.pvtp"

options = catalyst.Options()


def RequestDataDescription(datadescription):
    # Only phi crosses to ParaView: octoflow copies no other field for this script.
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    grid_description.AddField(PHI_ARRAY, 0)  # 0 = vtkDataObject.POINT
    grid_description.GenerateMeshOn()


def catalyst_execute(info):
    pass
