# Debian's ParaView 5.11: a bare find_package(ParaView) wants every Qt module (and Qt5Svg is not
# packaged), and the Catalyst components alone leave the VTK link closure's imported targets
# (MPI::MPI_C, Boost::boost, Freetype, X11, GLEW, LibXml2, HDF5, NetCDF) undefined. Looking for
# MPI and Boost first and asking for RemotingViews / VTKExtensionsIOGeneral makes ParaView's
# config find the rest itself.
find_package(MPI REQUIRED COMPONENTS C)
find_package(Boost REQUIRED)
find_package(ParaView 5.11 REQUIRED COMPONENTS
  Catalyst PythonCatalyst RemotingCore RemotingClientServerStream RemotingServerManager RemotingViews
  VTKExtensionsIOGeneral)
find_program(OCTOFLOW_PVPYTHON pvpython REQUIRED)
find_program(OCTOFLOW_PVBATCH pvbatch REQUIRED)
find_program(OCTOFLOW_XVFB Xvfb REQUIRED)  # the tests' virtual X server (Debian: xvfb)
message(STATUS "ParaView ${ParaView_VERSION}: ${ParaView_DIR}")
