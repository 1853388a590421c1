# cmake -DPROGRAM=exe -DOURS=dir -DLLVM=dir -DOUT=dir -DTAG=name -P check_profile.cmake
# Runs PROGRAM with LIBOMPTARGET_PROFILE on LLVM's libomptarget and on ours (every scope
# kept: granularity 0). Ours must write a Chrome trace that parses, and every
# construct-level scope LLVM's trace has ("Runtime: target exe", "Runtime: Data Copy",
# "Kernel Target", "HostToDev", "DevToHost") must be in ours too.
cmake_minimum_required(VERSION 3.19)  # string(JSON), IN_LIST
foreach(var PROGRAM OURS LLVM OUT TAG)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
set(scopes "Runtime: target exe" "Runtime: Data Copy" "Kernel Target" "HostToDev" "DevToHost")

function(names_in file out)
  file(READ "${file}" json)
  string(JSON count ERROR_VARIABLE err LENGTH "${json}" traceEvents)
  if(err)
    message(FATAL_ERROR "${file} is not a Chrome trace: ${err}")
  endif()
  set(names "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON name ERROR_VARIABLE err GET "${json}" traceEvents ${i} name)
      if(NOT err)
        list(APPEND names "${name}")
      endif()
    endforeach()
  endif()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

foreach(who LLVM OURS)
  set(file "${OUT}/${TAG}_${who}.json")
  file(REMOVE "${file}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${${who}}"
                          "LIBOMPTARGET_PROFILE=${file}" LIBOMPTARGET_PROFILE_GRANULARITY=0
                          "${PROGRAM}"
                  OUTPUT_QUIET RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${file}")
    message(FATAL_ERROR "${who}: exit status ${rc}, trace written: no")
  endif()
  names_in("${file}" names_${who})
endforeach()
foreach(scope IN LISTS scopes)
  if(scope IN_LIST names_LLVM AND NOT scope IN_LIST names_OURS)
    message(FATAL_ERROR "LLVM's trace has '${scope}', ours does not")
  endif()
endforeach()
list(LENGTH names_OURS n)
message(STATUS "our trace: ${n} events")
