"""pvpython: ParaView's TemporalParticlesToPathlines joins a tracer series (.pvd of .vtp written
by octoflow) into one pathline per tracer id. In the uniform flow of the test each pathline is a
straight segment along x. Arguments: the .pvd, the expected number of pathlines."""
import sys

from paraview.simple import PVDReader, TemporalParticlesToPathlines

series, expected = sys.argv[1], int(sys.argv[2])
reader = PVDReader(FileName=series)
paths = TemporalParticlesToPathlines(Input=reader)
paths.IdChannelArray = "id"
paths.MaskPoints = 1
paths.MaxTrackLength = 1000
paths.MaxStepDistance = [1000.0, 1000.0, 1000.0]
for time in reader.TimestepValues:  # the filter builds the tracks as time goes forward
    paths.UpdatePipeline(time)
lines = paths.GetClientSideObject().GetOutputDataObject(0)
count = lines.GetNumberOfCells()
assert count == expected, "%d pathlines, expected %d" % (count, expected)
for cell in range(count):
    ids = lines.GetCell(cell).GetPointIds()
    assert ids.GetNumberOfIds() >= 2, "pathline %d has %d points" % (cell, ids.GetNumberOfIds())
    first = lines.GetPoint(ids.GetId(0))
    for n in range(ids.GetNumberOfIds()):
        x, y, z = lines.GetPoint(ids.GetId(n))
        assert abs(y - first[1]) < 1e-5 and abs(z - first[2]) < 1e-5, "pathline %d bends" % cell
print("pathlines: %d, straight along x" % count)
