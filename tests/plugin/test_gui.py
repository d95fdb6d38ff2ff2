"""The real ParaView GUI (run under xvfb-run): starts `paraview` with the plugin found through
PV_PLUGIN_PATH and gui_script.py, which opens a run's checkpoint manifest, contours phi = 0.5 and
steps time to the last checkpoint; then grabs the screen with `xwd`, finds the render view (by the
background colour the script gives it) and checks it is not blank: the surface covers part of it.
The screen is saved as a PNG (the README shows it).

Arguments: plugin folder, octoflow program, the PNG to write, a scratch folder."""
import os
import struct
import subprocess
import sys
import time

import numpy as np

from plugin_support import CRYSTAL3D, check, finish, run_case, write_png

plugin_folder, program, screenshot, scratch = sys.argv[1:5]
folder = run_case(program, "", scratch, "crystal3d", CRYSTAL3D)
ready = os.path.join(scratch, "gui_ready.txt")
if os.path.exists(ready):
    os.remove(ready)
environment = dict(os.environ, PV_PLUGIN_PATH=plugin_folder, OCTOFLOW_GUI_READY=ready,
                   OCTOFLOW_GUI_SERIES=os.path.join(folder, "checkpoints", "crystal.ckpt.series"))
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gui_script.py")
gui = subprocess.Popen(["paraview", "--dr", "--script=" + script], env=environment, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
try:
    deadline = time.time() + 180
    while not os.path.exists(ready) and gui.poll() is None and time.time() < deadline:
        time.sleep(0.5)
    check(os.path.exists(ready), "the GUI never finished its script (exit %s)" % gui.poll())
    time.sleep(3)  # the window paints the last render
    shot = os.path.join(scratch, "screen.xwd")
    subprocess.run(["xwd", "-root", "-silent", "-out", shot], check=True)
finally:
    gui.kill()
    output = gui.communicate()[0]
if not os.path.exists(ready):
    print(output[-4000:])
    finish()
with open(ready) as text:
    proxy, reached, steps = text.read().split()
print("GUI: %s, animation at time %s of %s time steps" % (proxy, reached, steps))
check(proxy == "OctoflowCheckpointReader", "the manifest opened with %s" % proxy)
check(float(reached) == 400.0 and int(steps) == 4, "time %s of %s steps, expected 400 of 4" % (reached, steps))

# The XWD file: a big-endian header of 25 32-bit fields, the window name, the colour map, pixels.
with open(shot, "rb") as xwd:
    data = xwd.read()
header = struct.unpack(">25I", data[:100])
header_size, depth, width, height, byte_order, bits_per_pixel, bytes_per_line, colours = (
    header[0], header[3], header[4], header[5], header[7], header[11], header[12], header[19])
check(depth == 24 and bits_per_pixel in (24, 32), "a 24-bit screen, got depth %d, %d bits a pixel" % (depth, bits_per_pixel))
start = header_size + 12 * colours
size = bits_per_pixel // 8
rows_bytes = np.frombuffer(data[start:start + height * bytes_per_line], dtype=np.uint8).reshape(height, bytes_per_line)
pixel_bytes = rows_bytes[:, :width * size].reshape(height, width, size).astype(np.uint32)
order = range(size) if byte_order == 0 else range(size - 1, -1, -1)  # 0: least significant byte first
words = sum(pixel_bytes[..., b] << np.uint32(8 * n) for n, b in enumerate(order))
masks = header[14:17]  # red, green, blue
pixels = np.stack([(words & np.uint32(mask)) >> np.uint32((mask & -mask).bit_length() - 1) for mask in masks],
                  axis=-1).astype(np.uint8)
write_png(screenshot, pixels)
print("screen %dx%d saved as %s" % (width, height, screenshot))
background = np.all(np.abs(pixels.astype(int) - [51, 64, 89]) <= 3, axis=-1)  # gui_script.py's (0.2, 0.25, 0.35)
rows, columns = np.nonzero(background)
check(rows.size > 20000, "no render view found on the screen (%d pixels of its background)" % rows.size)
if rows.size:
    view = background[rows.min():rows.max() + 1, columns.min():columns.max() + 1]
    drawn = 1.0 - view.mean()
    print("render view %dx%d at (%d, %d): %.1f %% of it drawn over" % (view.shape[1], view.shape[0], columns.min(),
                                                                      rows.min(), 100 * drawn))
    check(0.02 < drawn < 0.9, "the render view is blank or hidden: %.1f %% drawn" % (100 * drawn))
finish()
