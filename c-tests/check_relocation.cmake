# cmake -DPREFIX=<installed prefix> -DWORK=<dir> -DSOURCE=<consumer.c> -P check_relocation.cmake
# Copies the installed package elsewhere, removes nothing from the original, and builds
# and runs consumers against the copy through find_package and pkg-config.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(COPY "${PREFIX}/" DESTINATION "${WORK}/moved-prefix")
set(moved "${WORK}/moved-prefix")

execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/relocation"
                        -B "${WORK}/build" "-DCMAKE_PREFIX_PATH=${moved}"
                        "-DEXPECTED_PREFIX=${moved}" "-DCONSUMER_SOURCE=${SOURCE}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring against the relocated package failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building against the relocated package failed")
endif()
foreach(app relocated_consumer relocated_consumer_static)
  execute_process(COMMAND "${WORK}/build/${app}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${app} failed (${rc})")
  endif()
endforeach()

# pkg-config paths follow the .pc file.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${moved}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --variable=libdir liboffload
                OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
get_filename_component(libdir "${libdir}" REALPATH)
get_filename_component(want "${moved}/lib" REALPATH)
if(NOT rc EQUAL 0 OR NOT libdir STREQUAL want)
  message(FATAL_ERROR "pkg-config's libdir is '${libdir}', expected ${want}")
endif()
message("relocation: ok (${moved})")
