"""pvpython: the frames a ParaView GUI receives over Catalyst Live (docs/PERFORMANCE.md).

Stands in for the GUI's Catalyst > Connect (ParaView's paraview.live, as the GUI does), extracts
channel "grid" as a click on its icon does, and for <seconds> after the first frame fetches every
in-situ step the simulation sends. Prints the frames, frames per second and the mean time a frame
took to reach the client. Arguments: <port> <seconds>. Run it first, then the simulation with
OCTOFLOW_CATALYST_LIVE=localhost:<port> and catalyst_scripts/live.py among its scripts."""
import sys
import time

from paraview import live

port, seconds = int(sys.argv[1]), float(sys.argv[2])
link = live.ConnectToCatalyst("localhost", port)
print("listening on port %d" % port, flush=True)
offered = link.GetInsituProxyManager()
while offered.GetProxy("sources", "grid") is None:
    live.ProcessServerNotifications()
    time.sleep(0.01)
grid = live.ExtractCatalystData(link, "grid")
frames, fetch_seconds, last_step, start = 0, 0.0, None, None
while start is None or time.time() - start < seconds:
    live.ProcessServerNotifications()
    step = link.GetTimeStep()
    if step == last_step:
        time.sleep(0.001)
        continue
    fetch_start = time.time()
    grid.UpdatePipeline()
    points = grid.GetDataInformation().GetNumberOfPoints()
    if points == 0:
        continue
    if start is None:  # the clock starts with the first frame
        start = time.time()
    else:
        frames += 1
        fetch_seconds += time.time() - fetch_start
    last_step = step
elapsed = time.time() - start
print("frames %d in %.2f s: %.2f frames/s; %.1f ms a frame to fetch; grid of %d points, arrays %s"
      % (frames, elapsed, frames / elapsed, 1e3 * fetch_seconds / max(frames, 1), points,
         ",".join(sorted(grid.PointData.keys()))), flush=True)
