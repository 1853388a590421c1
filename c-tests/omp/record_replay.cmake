# Records PROGRAM's kernels on our libomptarget (LIBOMPTARGET_RECORD=1,
# LIBOMPTARGET_RR_SAVE_OUTPUT=1, in a fresh folder WORK), then has LLVM's TOOL
# (llvm-omp-kernel-replay 19 or 22) replay every recorded kernel on ours with --verify, as
# recorded and with other team and thread counts. Also: the program's output is the one
# it prints unrecorded; a `.globals` file is a chain of name, NUL, 4-byte size and bytes;
# an output changed after recording fails to verify (the check can fail); and without
# LIBOMPTARGET_RECORD nothing is written.
# With -DLAUNCHER=... (an MPI job with a device server, the program last) the program
# runs on the remote device (OFFLOAD_PLATFORMS=mpi) and the tool replays its recordings
# on the host device, and on a remote device (the tool in an MPI job: memory placed on
# the server at the recorded addresses).
# -DPROGRAM= -DOURS= (our library folder) -DTOOL= [-DLIBDIRS=more:folders] -DWORK= -DKERNELS=n
# [-DLAUNCHER=command;args]
set(path "${OURS}")
if(LIBDIRS)
  set(path "${OURS}:${LIBDIRS}")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(remote "")
if(LAUNCHER)
  set(remote OFFLOAD_PLATFORMS=mpi)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${path}" ${remote} ${LAUNCHER}
                        "${PROGRAM}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE plain
                ERROR_VARIABLE err)
file(GLOB written "${WORK}/*")
if(NOT rc EQUAL 0 OR written)
  message(FATAL_ERROR "unrecorded run: rc ${rc}, files ${written}\n${plain}${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${path}" ${remote}
                        LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1 ${LAUNCHER}
                        "${PROGRAM}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out STREQUAL plain OR err)
  message(FATAL_ERROR "recorded run: rc ${rc}\n${out}${err}\nunrecorded it printed:\n${plain}")
endif()
file(GLOB descriptions "${WORK}/*.json")
list(LENGTH descriptions count)
if(NOT count EQUAL KERNELS)
  message(FATAL_ERROR "${count} kernels recorded, ${KERNELS} expected: ${descriptions}")
endif()

foreach(json IN LISTS descriptions)
  get_filename_component(name "${json}" NAME_WE)
  foreach(suffix image memory globals original.output)
    if(NOT EXISTS "${WORK}/${name}.${suffix}")
      message(FATAL_ERROR "no ${name}.${suffix}")
    endif()
  endforeach()
  foreach(options IN ITEMS "--verify" "--verify;--num-teams=2;--num-threads=3")
    file(REMOVE "${WORK}/${name}.replay.output")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${path}" "${TOOL}"
                            ${options} "${json}"
                    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "Replay device memory verified!")
      message(FATAL_ERROR "${TOOL} ${options} ${name}.json: rc ${rc}\n${out}${err}")
    endif()
  endforeach()
  message(STATUS "${name}: verified, also with --num-teams=2 --num-threads=3")
  if(LAUNCHER)
    # And on the remote device itself: the tool is the MPI job's application.
    file(REMOVE "${WORK}/${name}.replay.output")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${path}" ${remote}
                            ${LAUNCHER} "${TOOL}" --verify "${json}"
                    WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "Replay device memory verified!")
      message(FATAL_ERROR "${TOOL} on the remote device, ${name}.json: rc ${rc}\n${out}${err}")
    endif()
    message(STATUS "${name}: verified on the remote device too")
  endif()

  # .globals: name, NUL, 4-byte little-endian size, bytes; to the file's end exactly.
  file(READ "${WORK}/${name}.globals" hex HEX)
  string(LENGTH "${hex}" left)
  set(at 0)
  set(globals "")
  while(at LESS left)
    # The first NUL at an even (byte) position.
    set(pos 0)
    set(found -1)
    while(pos LESS left AND found EQUAL -1)
      string(SUBSTRING "${hex}" ${pos} 2 byte)
      if(byte STREQUAL "00")
        set(found ${pos})
      endif()
      math(EXPR pos "${pos} + 2")
    endwhile()
    if(found EQUAL -1)
      message(FATAL_ERROR "${name}.globals: a name without its NUL")
    endif()
    string(SUBSTRING "${hex}" 0 ${found} name_hex)
    list(APPEND globals "${name_hex}")
    math(EXPR size_at "${found} + 2")
    string(SUBSTRING "${hex}" ${size_at} 8 size_hex)
    string(LENGTH "${size_hex}" size_len)
    if(NOT size_len EQUAL 8)
      message(FATAL_ERROR "${name}.globals: a size cut short")
    endif()
    string(SUBSTRING "${size_hex}" 6 2 b3)
    string(SUBSTRING "${size_hex}" 4 2 b2)
    string(SUBSTRING "${size_hex}" 2 2 b1)
    string(SUBSTRING "${size_hex}" 0 2 b0)
    math(EXPR size "0x${b3}${b2}${b1}${b0}")
    math(EXPR next "${size_at} + 8 + 2 * ${size}")
    if(next GREATER left)
      message(FATAL_ERROR "${name}.globals: ${size} bytes announced past the file's end")
    endif()
    string(SUBSTRING "${hex}" ${next} -1 hex)
    math(EXPR left "${left} - ${next}")
  endwhile()
  list(LENGTH globals nglobals)
  if(nglobals EQUAL 0)
    message(FATAL_ERROR "${name}.globals: no global (the program has one)")
  endif()
endforeach()

# An output that differs must fail to verify.
list(GET descriptions 0 json)
get_filename_component(name "${json}" NAME_WE)
file(READ "${WORK}/${name}.original.output" hex HEX)
string(SUBSTRING "${hex}" 2 -1 rest)
string(SUBSTRING "${hex}" 0 2 first)
if(first STREQUAL "ff")
  set(first "00")
else()
  set(first "ff")
endif()
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${first}${rest}")
execute_process(COMMAND printf "${escaped}" OUTPUT_FILE "${WORK}/${name}.original.output")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${path}" "${TOOL}" --verify
                        "${json}"
                WORKING_DIRECTORY "${WORK}" OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "failed to verify")
  message(FATAL_ERROR "a changed output verified: ${out}${err}")
endif()
message(STATUS "${count} kernels recorded and verified; a changed output is caught")
