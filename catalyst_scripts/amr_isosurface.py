# script-version: 2
# octoflow Catalyst script for solvers with levels (case.solver = "lbm-amr"): an isosurface of the
# flow's speed on channel "amr", the octree's blocks as a vtkNonOverlappingAMR (cell data, one
# ghost layer a block). ParaView's Contour runs vtkAMRDualContour there: the surface has no cracks
# where levels meet. The level is a fraction of the step's highest speed (SPEED_FRACTION). Writes
# <output directory>/catalyst/amr_speed_<step>.png (the surface in the domain's outline) and the
# surface as amr_speed_<step>.vtm.
import os
import sys

from paraview.simple import *
from paraview import catalyst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # octoflow_catalyst.py sits beside this script
from octoflow_catalyst import render_view

AMR_CHANNEL = "amr"  # octoflow's channel name (adaptors/Channels.hpp)
SPEED_FRACTION = 0.5

blocks = TrivialProducer(registrationName=AMR_CHANNEL)
speed = Calculator(registrationName="speed", Input=blocks)
speed.AttributeType = "Cell Data"
speed.ResultArrayName = "speed"
speed.Function = "mag(velocity)"
contour = Contour(registrationName="speed_contour", Input=speed)
contour.ContourBy = ["CELLS", "speed"]
contour.Isosurfaces = [0.0]
contour.ComputeScalars = 1

view = render_view([1.0, 1.0, 1.0])
surface_display = Show(contour, view)
surface_display.Representation = "Surface"
surface_display.DiffuseColor = [0.25, 0.45, 0.8]
outline_display = Show(Outline(registrationName="domain", Input=blocks), view)
outline_display.DiffuseColor = [0.2, 0.2, 0.2]
outline_display.AmbientColor = [0.2, 0.2, 0.2]

png = CreateExtractor("PNG", view, registrationName="amr_speed_png")
png.Writer.FileName = "amr_speed_{timestep:08d}.png"
png.Writer.ImageResolution = [1024, 768]
vtm = CreateExtractor("VTM", contour, registrationName="amr_speed_vtm")
vtm.Writer.FileName = "amr_speed_{timestep:08d}.vtm"

options = catalyst.Options()


def catalyst_execute(info):
    speed.UpdatePipeline(info.time)
    low, high = speed.CellData["speed"].GetRange() if "speed" in speed.CellData.keys() else (0.0, 0.0)
    contour.Isosurfaces = [SPEED_FRACTION * high]
    bounds = blocks.GetDataInformation().GetBounds()
    center = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
    size = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4], 1.0)
    view.CameraFocalPoint = center
    view.CameraPosition = [center[0] + 1.2 * size, center[1] - 1.5 * size, center[2] + 1.0 * size]
    view.CameraViewUp = [0.0, 0.0, 1.0]
