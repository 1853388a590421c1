# cmake -DPROGRAM=exe -DOURS=dir -DLLVM=dir [-DLABEL="LLVM 22's"] [-DARGS=a;b]
#       [-DSTDERR=1] [-DENV=VAR=value] [-DANYWHERE=1] [-DQUEUED=1] -P compare_runtimes.cmake
# Runs PROGRAM (with ARGS, and ENV set) with our libomptarget and with LLVM's (the one in
# LLVM); their stdout and exit status must be the same, and the run on ours must show
# liboffload launching a kernel. With STDERR=1 (programs that must fail, or that print
# LIBOMPTARGET_INFO) their stderr must be the same too, addresses aside. With ANYWHERE=1
# (a GPU program, which falls back to the host where there is no GPU) no launch is
# required. With QUEUED=1 some kernel must have been launched on a queue (asynchronous
# `nowait` regions). With LAUNCHER (a command and its arguments) our run is LAUNCHER
# PROGRAM ARGS: with REMOTE=1 the launcher is an MPI job with a device server, and the
# run must show that the remote device was the one used.
foreach(var PROGRAM OURS LLVM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
if(NOT DEFINED LABEL)
  set(LABEL "LLVM's")
endif()
if(NOT DEFINED ARGS)
  set(ARGS "")
endif()
if(NOT DEFINED ENV)
  set(ENV "")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${LLVM}" ${ENV}
                        "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE llvm_out ERROR_VARIABLE llvm_err RESULT_VARIABLE llvm_rc
                TIMEOUT 60)
set(ours_env "")
if(REMOTE)
  set(ours_env OFFLOAD_PLATFORMS=mpi)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${OURS}" OFFLOAD_TRACE=1
                        ${ours_env} ${ENV} ${LAUNCHER} "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE ours_out ERROR_VARIABLE ours_err RESULT_VARIABLE ours_rc
                TIMEOUT 60)
message(STATUS "output with ours:\n${ours_out}")
if(NOT llvm_rc STREQUAL ours_rc)
  message(FATAL_ERROR "exit status: ${LABEL} ${llvm_rc}, ours ${ours_rc}\nstderr (ours):\n${ours_err}")
endif()
if(NOT llvm_out STREQUAL ours_out)
  message(FATAL_ERROR "outputs differ.\n${LABEL}:\n${llvm_out}\nours:\n${ours_out}\nstderr (ours):\n${ours_err}")
endif()
if(NOT ours_err MATCHES "---> olInit\\(\\) -> OL_SUCCESS")
  message(FATAL_ERROR "our run shows no olInit: was our libomptarget used?\n${ours_err}")
endif()
if(STDERR)
  # liboffload's own trace lines are not part of the comparison.
  string(REGEX REPLACE "\n(---> |offload: )[^\n]*" "" ours_untraced "\n${ours_err}")
  string(REGEX REPLACE "^\n" "" ours_untraced "${ours_untraced}")
  string(REGEX REPLACE "0x[0-9a-f]+" "0xADDR" llvm_masked "${llvm_err}")
  string(REGEX REPLACE "0x[0-9a-f]+" "0xADDR" ours_masked "${ours_untraced}")
  if(NOT llvm_masked STREQUAL ours_masked)
    message(FATAL_ERROR "stderr differs.\n${LABEL}:\n${llvm_err}\nours:\n${ours_untraced}")
  endif()
elseif(NOT ANYWHERE AND NOT ours_err MATCHES "olLaunchKernel\\([^\n]*-> OL_SUCCESS")
  message(FATAL_ERROR "our run shows no successful olLaunchKernel: was our libomptarget used?\n${ours_err}")
endif()
if(REMOTE AND NOT ours_err MATCHES "MPI: [1-9][0-9]* device")
  message(FATAL_ERROR "our run found no remote device:\n${ours_err}")
endif()
if(QUEUED AND NOT ours_err MATCHES "olLaunchKernel\\(Queue=0x[1-9a-f][^\n]*-> OL_SUCCESS")
  message(FATAL_ERROR "our run launched no kernel on a queue: were the nowait regions asynchronous?\n${ours_err}")
endif()
if(ours_err MATCHES "not implemented yet|panicked")
  message(FATAL_ERROR "our run reported a problem:\n${ours_err}")
endif()
