# Profile-guided optimisation of the simulation core (BLKMQLAB_PGO, on in the release-pgo preset;
# docs/performance.md, "Profile-guided optimisation", measures it against the release preset
# side by side: 5-6% less CPU time on single-core-null, nvme-2s64-mq and restart-128x64, none on
# wagner-nvmefc-4s80 and default; every fingerprint unchanged).
#
# Three steps, all inside one build:
#  1. pgo_instrumented: this same source tree built once more in <build>/pgo/build, without the GUI
#     and the tests, with -fprofile-generate (an ExternalProject, so that its objects are
#     instrumented and ours are not);
#  2. the training: its blkmqlab-cli runs a few presets that, together, walk every family's hot
#     path, writing <build>/pgo/profile/*.gcda;
#  3. every core library compiles with -fprofile-use on that profile. -fprofile-prefix-path strips
#     each build folder from the profile's file names, so that core/sim/...Engine.cpp.o of one
#     build finds the counts of the other's. A core object depends on the training's stamp, so an
#     edited source rebuilds the instrumented twin, retrains and recompiles the core (about two
#     minutes on two cores; the dev preset has no PGO): a profile never lags its source.
# Code that the training did not run is optimised as usual (-fprofile-partial-training), not for
# size. The instrumented twin runs single-threaded (-fprofile-update=single).

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "BLKMQLAB_PGO needs GCC (-fprofile-prefix-path); configure with -DBLKMQLAB_PGO=OFF")
endif()

include(ExternalProject)
set(pgo_dir ${CMAKE_BINARY_DIR}/pgo)
set(pgo_profile ${pgo_dir}/profile)
set(pgo_cli ${pgo_dir}/build/app/cli/blkmqlab-cli)
set(pgo_stamp ${pgo_dir}/trained.stamp)

ExternalProject_Add(pgo_instrumented
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${pgo_dir}/build
    PREFIX ${pgo_dir}
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_ARGS -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
               -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
               "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
               -DBLKMQLAB_PGO=OFF -DBLKMQLAB_BUILD_GUI=OFF -DBLKMQLAB_BUILD_TESTS=OFF -DBLKMQLAB_WERROR=OFF
               "-DCMAKE_CXX_FLAGS=-fprofile-generate=${pgo_profile} -fprofile-prefix-path=${pgo_dir}/build -fprofile-update=single"
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target blkmqlab-cli
    BUILD_ALWAYS ON # its own build decides what changed; the training reruns only if the binary did
    BUILD_BYPRODUCTS ${pgo_cli}
    INSTALL_COMMAND ""
    USES_TERMINAL_BUILD ON)

# The training: the completion family (one CPU, many CPUs, many hctxs), the restart walk, the
# tag allocators (bitmap and percpu_ida), and the default scenario; 20 simulated ms each.
set(pgo_training single-core-null nvme-2s64-mq wagner-nvmefc-4s80 threadirqs-rt restart-128x64
    shared-hctx-stall-random axboe-4s64-far-high overstreet-full-tagspace default)
set(pgo_runs "")
foreach(preset IN LISTS pgo_training)
    list(APPEND pgo_runs COMMAND ${pgo_cli} run --preset ${preset} --set duration=20ms --quiet)
endforeach()
add_custom_command(OUTPUT ${pgo_stamp}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${pgo_profile}
    ${pgo_runs}
    COMMAND ${CMAKE_COMMAND} -E touch ${pgo_stamp}
    DEPENDS pgo_instrumented ${pgo_cli}
    COMMENT "PGO: training the instrumented core on ${pgo_training}"
    VERBATIM)
add_custom_target(pgo_profile DEPENDS ${pgo_stamp})

# Compiles a core library's sources with the profile; their objects wait for the training. Sources
# generated into the build folder (the embedded presets and lessons, cold tables read once) are
# left out: GCC's checksum of a function includes its file's path, which differs between the twin
# (<build>/pgo/build/resources/Preset.cpp) and this build, so their counts would never match.
function(blkmqlab_pgo_use target)
    get_target_property(sources ${target} SOURCES)
    list(FILTER sources EXCLUDE REGEX "^${CMAKE_BINARY_DIR}/")
    set_property(SOURCE ${sources} APPEND PROPERTY COMPILE_OPTIONS -fprofile-use=${pgo_profile}
                 -fprofile-prefix-path=${CMAKE_BINARY_DIR} -fprofile-partial-training)
    set_property(SOURCE ${sources} APPEND PROPERTY OBJECT_DEPENDS ${pgo_stamp})
    add_dependencies(${target} pgo_profile)
endfunction()
