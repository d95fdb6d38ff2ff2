"""pvpython: checks the tracer and surface series an `octoflow run` wrote, with ParaView's readers.

  run_extracts.py tracers <folder> <g> <x0>
      tracers.pvd of a fully periodic box accelerated along x by a body force <g> from rest
      (u = g t everywhere, exactly), released on a line at x = <x0>: at every step ids are unique
      and ascending, ages are whole steps, and a tracer released at t0 is at
      x0 + g (t^2 - t0^2) / 2 at t; ParaView's TemporalParticlesToPathlines joins the series into
      one straight pathline per tracer seen twice or more.
  run_extracts.py surface <folder> <case name> <level>
      each surface_<step>.vtp against ParaView's own Contour of |velocity| at <level> on the
      <case name>_<step>.vti of the same step: the same number of points, the same area.
"""
import sys

from paraview import servermanager
from paraview.simple import Calculator, Contour, IntegrateVariables, PVDReader, TemporalParticlesToPathlines
from paraview.simple import XMLImageDataReader, XMLPolyDataReader
from vtkmodules.util.numpy_support import vtk_to_numpy


def check_tracers(folder, g, x0):
    reader = PVDReader(FileName=folder + "/tracers.pvd")
    times = reader.TimestepValues
    assert len(times) >= 3, "only %d tracer steps" % len(times)
    seen = {}
    checked = 0
    for time in times:
        reader.UpdatePipeline(time)
        data = servermanager.Fetch(reader)
        ids = vtk_to_numpy(data.GetPointData().GetArray("id"))
        ages = vtk_to_numpy(data.GetPointData().GetArray("age"))
        points = vtk_to_numpy(data.GetPoints().GetData()) if data.GetNumberOfPoints() else []
        assert data.GetNumberOfCells() == data.GetNumberOfPoints(), "one vertex cell a tracer"
        assert all(ids[n] < ids[n + 1] for n in range(len(ids) - 1)), "ids not unique and ascending at %g" % time
        for n in range(len(ids)):
            released = time - ages[n]
            assert abs(released - round(released)) < 1e-4, "age %g at %g is not whole steps" % (ages[n], time)
            seen.setdefault(int(ids[n]), []).append(time)
            expected = x0 + 0.5 * g * (time * time - released * released)
            assert abs(points[n][0] - expected) <= 1e-3, \
                "tracer %d at x = %g at step %g, expected %g (released at %g)" % (ids[n], points[n][0], time, expected,
                                                                              released)
            checked += 1
    paths = TemporalParticlesToPathlines(Input=reader)
    paths.IdChannelArray = "id"
    paths.MaskPoints = 1
    paths.MaxTrackLength = 1000
    paths.MaxStepDistance = [1000.0, 1000.0, 1000.0]
    for time in times:
        paths.UpdatePipeline(time)
    lines = paths.GetClientSideObject().GetOutputDataObject(0)
    tracked = sum(1 for steps in seen.values() if len(steps) >= 2)
    assert lines.GetNumberOfCells() == tracked, "%d pathlines, %d tracers seen twice" % (lines.GetNumberOfCells(), tracked)
    for cell in range(lines.GetNumberOfCells()):
        ids = lines.GetCell(cell).GetPointIds()
        first = lines.GetPoint(ids.GetId(0))
        for n in range(ids.GetNumberOfIds()):
            x, y, z = lines.GetPoint(ids.GetId(n))
            assert abs(y - first[1]) < 1e-3 and x >= first[0], "pathline %d is not straight along +x" % cell
    print("tracers: %d steps, %d tracers, %d positions checked against x0 + g (t^2 - t0^2) / 2, %d pathlines" %
          (len(times), len(seen), checked, lines.GetNumberOfCells()))


def area_of(source):
    integrated = servermanager.Fetch(IntegrateVariables(Input=source))
    return integrated.GetCellData().GetArray("Area").GetValue(0)


def check_surface(folder, name, level):
    series = PVDReader(FileName=folder + "/surface.pvd")
    assert len(series.TimestepValues) >= 2, "only %d surface steps" % len(series.TimestepValues)
    drawn = 0
    for time in series.TimestepValues:
        step = int(round(time))
        ours = XMLPolyDataReader(FileName=["%s/surface_%08d.vtp" % (folder, step)])
        grid = XMLImageDataReader(FileName=["%s/%s_%08d.vti" % (folder, name, step)])
        speed = Calculator(Input=grid, ResultArrayName="speed", Function="mag(velocity)")
        theirs = Contour(Input=speed, ContourBy=["POINTS", "speed"], Isosurfaces=[level])
        theirs.ComputeNormals = 0
        ours_data, theirs_data = servermanager.Fetch(ours), servermanager.Fetch(theirs)
        if theirs_data.GetNumberOfPoints() == 0:
            # The fluid at rest at step 0: no speed reaches the level yet, on either side.
            assert ours_data.GetNumberOfPoints() == 0, "step %d: %d points where ParaView's contour is empty" % (
                step, ours_data.GetNumberOfPoints())
            print("surface step %d: empty, as ParaView's contour" % step)
            continue
        drawn += 1
        assert ours_data.GetPointData().GetArray("Normals") is not None, "no normals at step %d" % step
        assert ours_data.GetNumberOfPoints() == theirs_data.GetNumberOfPoints(), \
            "step %d: %d points, ParaView's contour %d" % (step, ours_data.GetNumberOfPoints(),
                                                           theirs_data.GetNumberOfPoints())
        assert ours_data.GetNumberOfCells() == theirs_data.GetNumberOfCells(), "step %d: triangle counts differ" % step
        a, b = area_of(ours), area_of(theirs)
        assert abs(a - b) <= 1e-4 * b, "step %d: area %g, ParaView's contour %g" % (step, a, b)
        print("surface step %d: %d points, area %.6g (ParaView %.6g)" % (step, ours_data.GetNumberOfPoints(), a, b))
    assert drawn >= 2, "only %d non-empty surface steps" % drawn


if sys.argv[1] == "tracers":
    check_tracers(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
else:
    check_surface(sys.argv[2], sys.argv[3], float(sys.argv[4]))
