# Included by ctest after test discovery: every adaptor test that may start an X server holds
# one lock, so parallel ctest runs never race for a display number.
get_property(octoflow_adaptor_tests DIRECTORY PROPERTY TESTS)
foreach(test IN LISTS octoflow_adaptor_tests)
  if(test MATCHES "^Catalyst\\.")
    set_tests_properties("${test}" PROPERTIES RESOURCE_LOCK xvfb)
  endif()
endforeach()
