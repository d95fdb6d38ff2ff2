"""pvbatch test (under Xvfb): the "octoflow Checkpoint" reader's last checkpoint of a 3D crystal,
contoured at phi = 0.5 and rendered with a fixed camera, matches the committed baseline image.

Tolerance (software OpenGL differs a little between machines, never in what is drawn): at most 1 %
of the pixels may differ by more than 16 of 255 in a channel, and the mean absolute difference must
stay under 2 of 255. OCTOFLOW_WRITE_BASELINES=1 writes the baseline instead (review it, commit it).

Arguments: plugin library, octoflow program, baseline PNG, a scratch folder."""
import os
import shutil
import sys

from paraview.simple import ColorBy, Contour, CreateView, LoadPlugin, Render, SaveScreenshot, Show

from plugin_support import CRYSTAL3D, check, finish, image_difference, read_png, run_case

plugin_path, program, baseline, scratch = sys.argv[1:5]
LoadPlugin(plugin_path, ns=globals())
folder = run_case(program, "", scratch, "crystal3d", CRYSTAL3D)
reader = octoflowCheckpoint(FileNames=[os.path.join(folder, "checkpoints", "crystal.ckpt.series")])  # noqa: F821
check(list(reader.TimestepValues) == [100.0, 200.0, 300.0, 400.0], "time steps %s" % list(reader.TimestepValues))
surface = Contour(Input=reader, ContourBy=["POINTS", "phi"], Isosurfaces=[0.5])
view = CreateView("RenderView")
view.ViewSize = [480, 360]
view.ViewTime = 400.0
view.OrientationAxesVisibility = 0
view.UseColorPaletteForBackground = 0
view.Background = [0.32, 0.34, 0.43]
view.CameraPosition = [120.0, 90.0, 140.0]
view.CameraFocalPoint = [23.5, 23.5, 23.5]
view.CameraViewUp = [0.0, 1.0, 0.0]
view.CameraViewAngle = 30.0
display = Show(surface, view)
display.DiffuseColor = [0.9, 0.75, 0.3]
display.AmbientColor = [0.9, 0.75, 0.3]
ColorBy(display, None)
Render(view)
shot = os.path.join(scratch, "crystal_contour.png")
SaveScreenshot(shot, view, ImageResolution=[480, 360])
if os.environ.get("OCTOFLOW_WRITE_BASELINES") == "1":
    shutil.copyfile(shot, baseline)
    print("wrote the baseline " + baseline)
got, expected = read_png(shot), read_png(baseline)
check(got.shape == expected.shape, "image %s, baseline %s" % (got.shape, expected.shape))
if got.shape == expected.shape:
    differing, mean = image_difference(got, expected)
    print("against the baseline: %.3f %% of the pixels differ, mean absolute difference %.3f" % (100 * differing, mean))
    check(differing <= 0.01 and mean < 2.0, "the rendering differs from %s: %.3f %% of the pixels, mean %.3f"
          % (baseline, 100 * differing, mean))
    check(float(got[..., :3].std()) > 10.0, "the image is blank")
finish()
