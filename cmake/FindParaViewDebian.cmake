# Debian's ParaView 5.11 config names imported targets of packages it does not look for itself
# (Freetype, X11, GLEW, LibXml2, NetCDF, HDF5, Boost): find those first, with VTK's own find
# modules, then ParaView with the Catalyst components.
find_path(octoflow_paraview_cmake_dir vtk/FindNetCDF.cmake
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/paraview-5.11 NO_DEFAULT_PATH)
if(octoflow_paraview_cmake_dir)
  list(APPEND CMAKE_MODULE_PATH "${octoflow_paraview_cmake_dir}/vtk")
endif()
find_package(HDF5 REQUIRED COMPONENTS C HL)
find_package(Freetype REQUIRED)
find_package(X11 REQUIRED)
find_package(GLEW REQUIRED)
find_package(LibXml2 REQUIRED)
find_package(NetCDF REQUIRED)
find_package(Boost REQUIRED)
find_package(ParaView REQUIRED COMPONENTS Catalyst PythonCatalyst)
find_program(OCTOFLOW_PVPYTHON pvpython REQUIRED)
find_program(OCTOFLOW_PVBATCH pvbatch REQUIRED)
message(STATUS "ParaView ${ParaView_VERSION}: ${ParaView_DIR}")
