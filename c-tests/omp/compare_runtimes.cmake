# cmake -DPROGRAM=exe -DOURS=dir -DLLVM=dir [-DARGS=a;b] [-DSTDERR=1] -P compare_runtimes.cmake
# Runs PROGRAM (with ARGS) with our libomptarget and with LLVM 19's; their stdout and
# exit status must be the same, and the run on ours must show liboffload launching a
# kernel. With STDERR=1 (programs that must fail) their stderr must be the same too,
# addresses aside, and no launch is expected.
foreach(var PROGRAM OURS LLVM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()

if(NOT DEFINED ARGS)
  set(ARGS "")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${LLVM}" "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE llvm_out ERROR_VARIABLE llvm_err RESULT_VARIABLE llvm_rc
                TIMEOUT 60)
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${OURS}" OFFLOAD_TRACE=1
                        "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE ours_out ERROR_VARIABLE ours_err RESULT_VARIABLE ours_rc
                TIMEOUT 60)
message(STATUS "output with ours:\n${ours_out}")
if(NOT llvm_rc STREQUAL ours_rc)
  message(FATAL_ERROR "exit status: LLVM 19's ${llvm_rc}, ours ${ours_rc}\nstderr (ours):\n${ours_err}")
endif()
if(NOT llvm_out STREQUAL ours_out)
  message(FATAL_ERROR "outputs differ.\nLLVM 19's:\n${llvm_out}\nours:\n${ours_out}\nstderr (ours):\n${ours_err}")
endif()
if(STDERR)
  # liboffload's own trace lines (which prove ours ran) are not part of the comparison.
  if(NOT ours_err MATCHES "---> olInit\\(\\) -> OL_SUCCESS")
    message(FATAL_ERROR "our run shows no olInit: was our libomptarget used?\n${ours_err}")
  endif()
  string(REGEX REPLACE "\n(---> |offload: )[^\n]*" "" ours_untraced "\n${ours_err}")
  string(REGEX REPLACE "^\n" "" ours_untraced "${ours_untraced}")
  string(REGEX REPLACE "0x[0-9a-f]+" "0xADDR" llvm_masked "${llvm_err}")
  string(REGEX REPLACE "0x[0-9a-f]+" "0xADDR" ours_masked "${ours_untraced}")
  if(NOT llvm_masked STREQUAL ours_masked)
    message(FATAL_ERROR "stderr differs.\nLLVM 19's:\n${llvm_err}\nours:\n${ours_err}")
  endif()
elseif(NOT ours_err MATCHES "olLaunchKernel\\([^\n]*-> OL_SUCCESS")
  message(FATAL_ERROR "our run shows no successful olLaunchKernel: was our libomptarget used?\n${ours_err}")
endif()
if(ours_err MATCHES "not implemented yet|panicked")
  message(FATAL_ERROR "our run reported a problem:\n${ours_err}")
endif()
