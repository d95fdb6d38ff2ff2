# Sanitizer and fuzzing builds of the CPU path (docs/RELIABILITY.md, preset `asan`).
#
# OCTOFLOW_SANITIZE: a list for -fsanitize= ("" = none; "address,undefined" in the asan preset),
# added to the compile and link flags of every target this project defines. UB is made fatal
# (-fno-sanitize-recover=undefined) so a test that triggers it fails instead of printing and
# passing.
# OCTOFLOW_ENABLE_FUZZING: libFuzzer targets under fuzz/ (clang only). The core library is then
# compiled with -fsanitize=fuzzer-no-link (coverage for the fuzzers; the sanitizer runtimes hold
# do-nothing hooks, so the tests and the CLI link as before).

set(OCTOFLOW_SANITIZE "" CACHE STRING
    "Sanitizers for every project target, as for -fsanitize= (e.g. address,undefined); empty: none")
option(OCTOFLOW_ENABLE_FUZZING "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

if(OCTOFLOW_ENABLE_FUZZING AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR
    "OCTOFLOW_ENABLE_FUZZING needs clang (libFuzzer); CMAKE_CXX_COMPILER is ${CMAKE_CXX_COMPILER_ID} "
    "${CMAKE_CXX_COMPILER}. Use the asan preset (cmake --preset asan: clang-16), or configure with "
    "-DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 (Debian 12: apt-get install clang-16 "
    "libclang-rt-16-dev libomp-16-dev).")
endif()
if(OCTOFLOW_SANITIZE AND OCTOFLOW_ENABLE_CUDA)
  message(FATAL_ERROR "OCTOFLOW_SANITIZE is for the CPU path: configure with -DOCTOFLOW_ENABLE_CUDA=OFF")
endif()

# Tests with a time limit of their own get it multiplied by this (tests/CMakeLists.txt): under
# ASan + UBSan (-O2) the solvers run 2-4 times slower than in a Release build, more when the
# machine is shared. Tests without a limit of their own get the asan test preset's 1800 s.
set(OCTOFLOW_TEST_TIMEOUT_SCALE 1)
if(OCTOFLOW_SANITIZE)
  set(OCTOFLOW_TEST_TIMEOUT_SCALE 6)
  string(REPLACE ";" "," octoflow_sanitize_list "${OCTOFLOW_SANITIZE}")
  set(OCTOFLOW_SANITIZE_COMPILE_FLAGS -fsanitize=${octoflow_sanitize_list} -fno-omit-frame-pointer)
  if(octoflow_sanitize_list MATCHES "undefined")
    list(APPEND OCTOFLOW_SANITIZE_COMPILE_FLAGS -fno-sanitize-recover=undefined)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      # Third-party code with known undefined behaviour of its own (the file says which and why).
      list(APPEND OCTOFLOW_SANITIZE_COMPILE_FLAGS
           -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/sanitizer_ignorelist.txt)
    endif()
  endif()
  set(OCTOFLOW_SANITIZE_LINK_FLAGS -fsanitize=${octoflow_sanitize_list})
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=${octoflow_sanitize_list}")
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=${octoflow_sanitize_list})
  check_cxx_source_compiles("int main() { return 0; }" OCTOFLOW_SANITIZERS_LINK)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT OCTOFLOW_SANITIZERS_LINK)
    message(FATAL_ERROR "-fsanitize=${octoflow_sanitize_list} does not link with ${CMAKE_CXX_COMPILER}: "
                        "the sanitizer runtimes are missing (Debian 12, clang 16: apt-get install libclang-rt-16-dev)")
  endif()
endif()

# Sources where every kernel of a lattice is inlined into a few huge functions (the LBM engine
# instances, the collision tests over all lattices): UBSan's pointer-overflow and object-size
# checks make clang 16 take 10x and 3x as long on them (the D3Q27 engine: over 15 min at -O1, 2 min
# without). Only those two checks are left out there: ASan still checks every access of those
# kernels, and every other source (the parsers above all) keeps every check.
set(OCTOFLOW_SANITIZE_LIGHT_SOURCES "(engines/UniformEngine[A-Za-z0-9]+|unit/CollisionTest)\\.cpp$")

# Adds the sanitizer flags to every target defined in `directory` and below (called once, at the
# end of the top-level CMakeLists.txt, so that no target is missed). C and C++ sources only.
function(octoflow_apply_sanitizers directory)
  if(NOT OCTOFLOW_SANITIZE)
    return()
  endif()
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      target_compile_options(${target} PRIVATE
        "$<$<COMPILE_LANGUAGE:C,CXX>:${OCTOFLOW_SANITIZE_COMPILE_FLAGS}>")
      if(NOT type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY)$")
        target_link_options(${target} PRIVATE ${OCTOFLOW_SANITIZE_LINK_FLAGS})
      endif()
      if(OCTOFLOW_SANITIZE MATCHES "undefined")
        get_target_property(sources ${target} SOURCES)
        get_target_property(source_dir ${target} SOURCE_DIR)
        list(FILTER sources INCLUDE REGEX "${OCTOFLOW_SANITIZE_LIGHT_SOURCES}")
        # Relative names are the target's folder's, not this one's.
        list(TRANSFORM sources PREPEND "${source_dir}/" REGEX "^[^/]")
        if(sources)
          set_property(SOURCE ${sources} TARGET_DIRECTORY ${target} APPEND PROPERTY
            COMPILE_OPTIONS -fno-sanitize=pointer-overflow,object-size)
        endif()
      endif()
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    octoflow_apply_sanitizers("${subdirectory}")
  endforeach()
endfunction()
