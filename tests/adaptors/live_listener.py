"""pvpython: stands in for the ParaView GUI's Catalyst > Connect (ParaView's own paraview.live
module, the client side of Catalyst Live). Listens on <port>, prints "listening", waits up to
<seconds> for a simulation to offer channel "grid", extracts it as the GUI does when its icon is
clicked, and prints the first grid that arrives: its points, arrays and extent.
Arguments: <port> <seconds>."""
import sys
import time

from paraview import live

port, seconds = int(sys.argv[1]), float(sys.argv[2])
link = live.ConnectToCatalyst("localhost", port)
print("listening", flush=True)
deadline = time.time() + seconds
offered = link.GetInsituProxyManager()
while time.time() < deadline and offered.GetProxy("sources", "grid") is None:
    live.ProcessServerNotifications()
    time.sleep(0.05)
if offered.GetProxy("sources", "grid") is None:
    sys.exit("no simulation offered channel grid within %g s" % seconds)
grid = live.ExtractCatalystData(link, "grid")
while time.time() < deadline:
    live.ProcessServerNotifications()
    grid.UpdatePipeline()
    information = grid.GetDataInformation()
    if information.GetNumberOfPoints() > 0:
        print("grid: %d points, arrays %s, extent %s" % (information.GetNumberOfPoints(),
                                                         ",".join(sorted(grid.PointData.keys())),
                                                         list(information.GetExtent())), flush=True)
        sys.exit(0)
    time.sleep(0.05)
sys.exit("the grid's data did not arrive within %g s" % seconds)
