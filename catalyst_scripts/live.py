# script-version: 2
# octoflow Catalyst script: Catalyst Live. Each time octoflow runs the pipelines ([insitu]
# every = N steps) the simulation offers its channel "grid" (density and velocity) to a ParaView
# GUI listening on localhost:22222 (OCTOFLOW_CATALYST_LIVE=host:port chooses another). In the
# GUI: Catalyst > Connect... (port 22222) before or while the run goes; the grid appears in the
# Pipeline Browser under catalyst: click its icon to extract it, then filter and colour it as any
# source. Catalyst > Pause Simulation holds the run at its next in-situ step until Continue.
# With no GUI listening the run goes on: ParaView tries to connect at each in-situ step and
# gives up at once (docs/PERFORMANCE.md gives what that costs). Writes no files.
import os

from paraview.simple import *
from paraview import catalyst

GRID_CHANNEL = "grid"          # octoflow's channel name (adaptors/Channels.hpp)
FIELDS = ("density", "velocity")

grid = TrivialProducer(registrationName=GRID_CHANNEL)

options = catalyst.Options()
options.EnableCatalystLive = 1
options.CatalystLiveURL = os.environ.get("OCTOFLOW_CATALYST_LIVE", "localhost:22222")


def RequestDataDescription(datadescription):
    # The GUI may show any field: both are copied from the GPU at each in-situ step.
    grid_description = datadescription.GetInputDescriptionByName(GRID_CHANNEL)
    for name in FIELDS:
        grid_description.AddField(name, 0)  # 0 = vtkDataObject.POINT
    grid_description.GenerateMeshOn()


def catalyst_execute(info):
    pass
