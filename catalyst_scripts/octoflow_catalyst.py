"""Helpers the octoflow Catalyst scripts share: the view they render into, the flow's middle
plane seen from above, and bounds and colour ranges over MPI ranks. Under MPI each rank's
pipeline sees its own piece of a channel (ParaView's data information is the local piece's),
while views must be set up the same on every rank (one image is composited from all). On one
rank the values are the plain ones. The scripts import this module from their own folder: a
copied script needs this file beside it."""
from paraview.simple import CreateView, Slice
from paraview.modules.vtkRemotingCore import vtkProcessModule
from vtkmodules.vtkCommonCore import vtkDoubleArray
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
from vtkmodules.vtkParallelCore import vtkCommunicator


def _largest_over_ranks(values):
    """Each value's maximum over all ranks."""
    controller = vtkProcessModule.GetProcessModule().GetGlobalController()
    if controller is None or controller.GetNumberOfProcesses() < 2:
        return list(values)
    local, result = vtkDoubleArray(), vtkDoubleArray()
    for value in values:
        local.InsertNextValue(value)
    result.SetNumberOfValues(len(values))
    controller.AllReduce(local, result, vtkCommunicator.MAX_OP)
    return [result.GetValue(n) for n in range(len(values))]


def grid_bounds(grid):
    """The whole grid's bounds (lattice units: node (i,j,k) at (i,j,k)) from its whole extent,
    which every rank's piece carries."""
    grid.UpdatePipelineInformation()
    information = grid.GetClientSideObject().GetOutputInformation(0)
    return [float(value) for value in information.Get(vtkStreamingDemandDrivenPipeline.WHOLE_EXTENT())]


def bounds_over_ranks(source):
    """The bounds of a source's data over all ranks (an empty piece counts for nothing); each low
    above its high when all are empty."""
    bounds = source.GetDataInformation().GetBounds()
    largest = _largest_over_ranks([-bounds[0], bounds[1], -bounds[2], bounds[3], -bounds[4], bounds[5]])
    return [-largest[0], largest[1], -largest[2], largest[3], -largest[4], largest[5]]


def range_over_ranks(source, array, component=-1):
    """The range of a point array over all ranks (component -1: the magnitude); (0, 0) when no
    rank has it."""
    low, high = float("inf"), float("-inf")
    if array in source.PointData.keys():
        low, high = source.PointData[array].GetRange(component)
    largest = _largest_over_ranks([-low, high])
    if largest[1] < -largest[0]:
        return 0.0, 0.0
    return -largest[0], largest[1]


def render_view(background):
    """A 1024 x 768 render view without orientation axes on a plain `background` (RGB 0-1)."""
    view = CreateView("RenderView")
    view.ViewSize = [1024, 768]
    view.OrientationAxesVisibility = 0
    view.Background = background
    try:  # ParaView 5.11 keeps the background in a palette unless told otherwise
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    return view


def middle_plane(grid, bounds):
    """What a top view shows of the grid: a 2D grid whole, a 3D grid's z = middle plane."""
    if bounds[5] <= bounds[4]:
        return grid
    plane = Slice(registrationName="z_slice", Input=grid)
    plane.SliceType = "Plane"
    plane.SliceType.Origin = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
    plane.SliceType.Normal = [0.0, 0.0, 1.0]
    return plane


def look_down_z(view, bounds):
    """Straight down z at the whole domain, filling the frame (parallel projection, 5 % margin)."""
    center = [0.5 * (bounds[0] + bounds[1]), 0.5 * (bounds[2] + bounds[3]), 0.5 * (bounds[4] + bounds[5])]
    width, height = max(bounds[1] - bounds[0], 1.0), max(bounds[3] - bounds[2], 1.0)
    view.InteractionMode = "2D"
    view.CameraParallelProjection = 1
    view.CameraFocalPoint = center
    view.CameraPosition = [center[0], center[1], center[2] + 4.0 * max(width, height)]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelScale = 0.525 * max(height, width * view.ViewSize[1] / view.ViewSize[0])
