"""Run inside the ParaView GUI (`paraview --script=gui_script.py`, the plugin found through
PV_PLUGIN_PATH) by test_gui.py: opens the checkpoint manifest given in OCTOFLOW_GUI_SERIES as a
user would, contours phi = 0.5, steps the animation to the last time step, renders, and writes the
time reached to OCTOFLOW_GUI_READY for the test to grab the screen."""
import os

from paraview.simple import ColorBy, Contour, GetActiveViewOrCreate, GetAnimationScene, OpenDataFile, Render, ResetCamera, Show

reader = OpenDataFile(os.environ["OCTOFLOW_GUI_SERIES"])  # the reader registered for .ckpt.series
surface = Contour(Input=reader, ContourBy=["POINTS", "phi"], Isosurfaces=[0.5])
view = GetActiveViewOrCreate("RenderView")
view.UseColorPaletteForBackground = 0
view.Background = [0.2, 0.25, 0.35]  # a colour nothing else on the screen has: the test finds the view by it
view.OrientationAxesVisibility = 0
display = Show(surface, view)
ColorBy(display, None)
display.DiffuseColor = [0.9, 0.75, 0.3]
display.AmbientColor = [0.9, 0.75, 0.3]
scene = GetAnimationScene()
scene.UpdateAnimationUsingDataTimeSteps()
steps = list(reader.TimestepValues)
scene.GoToFirst()
for _ in steps[1:]:
    scene.GoToNext()
ResetCamera(view)
Render(view)
with open(os.environ["OCTOFLOW_GUI_READY"], "w") as ready:
    ready.write("%s %g %d\n" % (reader.GetXMLName(), scene.AnimationTime, len(steps)))
