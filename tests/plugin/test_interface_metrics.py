"""pvpython test of the "Interface Metrics" filter: on an analytic sphere (and a disk in 2D) of a
phi field its area and volume are 4 pi r^2 and 4/3 pi r^3 (2 pi r and pi r^2) within 1 %, its tip is
at the centre plus r, on image data and on a two-level AMR dataset; on a growing crystal run by `octoflow run`, over the time steps of its .pvd
series, the tip velocity along x is the one dendrite.csv reports, within 2 %.

Arguments: plugin library, octoflow program, a scratch folder."""
import csv
import math
import os
import sys

import numpy as np
from paraview.simple import LoadPlugin, PVDReader, TrivialProducer
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkDataSetAttributes, vtkImageData, vtkNonOverlappingAMR, vtkUniformGrid

from plugin_support import GROWING_CRYSTAL, check, finish, run_case

plugin_path, program, scratch = sys.argv[1:4]
LoadPlugin(plugin_path, ns=globals())


def table_of(metrics):
    metrics.UpdatePipeline()
    table = metrics.GetClientSideObject().GetOutputDataObject(0)
    return {table.GetColumnName(c): [table.GetColumn(c).GetValue(r) for r in range(table.GetNumberOfRows())]
            for c in range(table.GetNumberOfColumns())}


def ball(n, dimensions, centre, radius):
    """phi = 1 inside, 0 outside, a linear ramp 4 nodes wide across |x - centre| = radius."""
    image = vtkImageData()
    image.SetDimensions(n, n, n if dimensions == 3 else 1)
    axes = np.meshgrid(*[np.arange(n, dtype=float)] * dimensions, indexing="ij")
    distance = np.sqrt(sum((axis - centre) ** 2 for axis in axes))
    phi = np.clip(0.5 - (distance - radius) / 4.0, 0.0, 1.0)
    array = numpy_to_vtk(np.ascontiguousarray(phi.transpose()).ravel().astype(np.float32), deep=1)
    array.SetName("phi")
    image.GetPointData().SetScalars(array)
    return image


# 1. Analytic shapes: a sphere of radius 20 in a 64^3 grid, a disk of radius 30 in 96^2.
for dimensions, n, centre, radius in ((3, 64, 31.5, 20.0), (2, 96, 47.5, 30.0)):
    producer = TrivialProducer(registrationName="ball%d" % dimensions)
    producer.GetClientSideObject().SetOutput(ball(n, dimensions, centre, radius))
    table = table_of(InterfaceMetrics(registrationName="metrics%d" % dimensions, Input=producer))  # noqa: F821
    area = 4.0 * math.pi * radius ** 2 if dimensions == 3 else 2.0 * math.pi * radius
    volume = 4.0 / 3.0 * math.pi * radius ** 3 if dimensions == 3 else math.pi * radius ** 2
    print("%dD ball r = %g: area %.2f (exact %.2f), volume %.2f (exact %.2f), tip x %.3f"
          % (dimensions, radius, table["area"][0], area, table["volume"][0], volume, table["tip_x"][0]))
    check(len(table["time"]) == 1, "one row for data without time: %s" % table["time"])
    check(abs(table["area"][0] / area - 1.0) < 0.01, "%dD area %.3f, exact %.3f" % (dimensions, table["area"][0], area))
    check(abs(table["volume"][0] / volume - 1.0) < 0.01, "%dD volume %.3f, exact %.3f" % (dimensions, table["volume"][0], volume))
    check(abs(table["fraction"][0] - table["volume"][0] / (n - 1) ** dimensions) < 1e-12, "%dD fraction" % dimensions)
    check(abs(table["tip_x"][0] - (centre + radius)) < 0.05, "%dD tip x %.3f, exact %.3f" % (dimensions, table["tip_x"][0], centre + radius))

# 2. The same sphere on a two-level non-overlapping AMR dataset, as octoflow writes the octree
# (blocks of 16^3 cells with a layer of ghost cells, values in cell data): level 0 covers 64^3 with
# blocks of spacing 1, the central 32^3 (which the sphere's surface crosses) is level 1, spacing 1/2.
def amr_ball(centre, radius):
    cells = 16
    level0 = [(i, j, k) for i in range(4) for j in range(4) for k in range(4) if not all(1 <= n <= 2 for n in (i, j, k))]
    level1 = [(2 * i + a, 2 * j + b, 2 * k + c) for i in (1, 2) for j in (1, 2) for k in (1, 2)
              for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    amr = vtkNonOverlappingAMR()
    amr.Initialize(2, [len(level0), len(level1)])
    for level, blocks in enumerate((level0, level1)):
        spacing = 0.5 ** level
        for index, block in enumerate(blocks):
            grid = vtkUniformGrid()
            grid.SetDimensions(cells + 3, cells + 3, cells + 3)
            grid.SetSpacing(spacing, spacing, spacing)
            origin = [(b * cells - 1) * spacing for b in block]
            grid.SetOrigin(origin)
            centres = [origin[a] + (np.arange(cells + 2) + 0.5) * spacing for a in range(3)]
            x, y, z = np.meshgrid(*centres, indexing="ij")
            distance = np.sqrt((x - centre) ** 2 + (y - centre) ** 2 + (z - centre) ** 2)
            phi = np.clip(0.5 - (distance - radius) / 4.0, 0.0, 1.0).transpose().ravel().astype(np.float32)
            values = numpy_to_vtk(np.ascontiguousarray(phi), deep=1)
            values.SetName("phi")
            grid.GetCellData().SetScalars(values)
            ghost = np.ones((cells + 2,) * 3, dtype=np.uint8) * vtkDataSetAttributes.DUPLICATECELL
            ghost[1:-1, 1:-1, 1:-1] = 0
            ghosts = numpy_to_vtk(np.ascontiguousarray(ghost.ravel()), deep=1)
            ghosts.SetName(vtkDataSetAttributes.GhostArrayName())
            grid.GetCellData().AddArray(ghosts)
            amr.SetDataSet(level, index, grid)
    return amr


producer = TrivialProducer(registrationName="amr_ball")
producer.GetClientSideObject().SetOutput(amr_ball(32.0, 20.0))
table = table_of(InterfaceMetrics(registrationName="amr_metrics", Input=producer, Scalar=["CELLS", "phi"]))  # noqa: F821
area, volume = 4.0 * math.pi * 20.0 ** 2, 4.0 / 3.0 * math.pi * 20.0 ** 3
print("AMR sphere r = 20 across two levels: area %.2f (exact %.2f), volume %.2f (exact %.2f), tip x %.3f, fraction %.5f"
      % (table["area"][0], area, table["volume"][0], volume, table["tip_x"][0], table["fraction"][0]))
check(abs(table["area"][0] / area - 1.0) < 0.01, "AMR area %.3f, exact %.3f" % (table["area"][0], area))
check(abs(table["volume"][0] / volume - 1.0) < 0.01, "AMR volume %.3f, exact %.3f" % (table["volume"][0], volume))
check(abs(table["fraction"][0] - table["volume"][0] / 64.0 ** 3) < 1e-9, "AMR fraction of the 64^3 domain")
check(abs(table["tip_x"][0] - 52.0) < 0.1, "AMR tip x %.3f, exact 52" % table["tip_x"][0])

# 3. A growing crystal: the tip velocity over the run's series against its dendrite.csv.
folder = run_case(program, "", scratch, "crystal", GROWING_CRYSTAL)
series = PVDReader(registrationName="crystal", FileName=os.path.join(folder, "crystal.pvd"))
table = table_of(InterfaceMetrics(registrationName="crystal_metrics", Input=series, Scalar=["POINTS", "phi"]))  # noqa: F821
check(table["time"] == [0.0, 300.0, 600.0, 900.0, 1200.0], "the rows' times %s" % table["time"])
first = series.GetClientSideObject().GetOutputDataObject(0).GetFieldData()
dx, dt = first.GetArray("dx_m").GetValue(0), first.GetArray("dt_s").GetValue(0)
with open(os.path.join(folder, "dendrite.csv")) as rows:
    reported = {int(row["step"]): float(row["tip_velocity_x"]) for row in csv.DictReader(rows)}
compared = 0
for time, velocity in zip(table["time"], table["tip_velocity_x"]):
    step = int(time)
    if step in reported and not math.isnan(reported[step]) and not math.isnan(velocity):
        measured = velocity * dx / dt  # nodes a step -> m/s
        print("step %d: tip velocity %.4e m/s, dendrite.csv %.4e" % (step, measured, reported[step]))
        check(abs(measured / reported[step] - 1.0) < 0.02,
              "tip velocity at step %d: %.4e m/s, dendrite.csv %.4e" % (step, measured, reported[step]))
        compared += 1
check(compared == 3, "tip velocities compared: %d" % compared)
finish()
