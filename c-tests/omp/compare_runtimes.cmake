# cmake -DPROGRAM=exe -DOURS=dir -DLLVM=dir [-DLABEL="LLVM 22's"] -P compare_runtimes.cmake
# Runs PROGRAM with our libomptarget and with LLVM's (the one in LLVM); their stdout and
# exit status must be the same, and the run on ours must show liboffload launching a
# kernel.
foreach(var PROGRAM OURS LLVM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
if(NOT DEFINED LABEL)
  set(LABEL "LLVM's")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${LLVM}" "${PROGRAM}"
                OUTPUT_VARIABLE llvm_out ERROR_VARIABLE llvm_err RESULT_VARIABLE llvm_rc
                TIMEOUT 60)
execute_process(COMMAND ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${OURS}" OFFLOAD_TRACE=1
                        "${PROGRAM}"
                OUTPUT_VARIABLE ours_out ERROR_VARIABLE ours_err RESULT_VARIABLE ours_rc
                TIMEOUT 60)
message(STATUS "output with ours:\n${ours_out}")
if(NOT llvm_rc STREQUAL ours_rc)
  message(FATAL_ERROR "exit status: ${LABEL} ${llvm_rc}, ours ${ours_rc}\nstderr (ours):\n${ours_err}")
endif()
if(NOT llvm_out STREQUAL ours_out)
  message(FATAL_ERROR "outputs differ.\n${LABEL}:\n${llvm_out}\nours:\n${ours_out}\nstderr (ours):\n${ours_err}")
endif()
if(NOT ours_err MATCHES "olLaunchKernel\\([^\n]*-> OL_SUCCESS")
  message(FATAL_ERROR "our run shows no successful olLaunchKernel: was our libomptarget used?\n${ours_err}")
endif()
if(ours_err MATCHES "not implemented yet|panicked")
  message(FATAL_ERROR "our run reported a problem:\n${ours_err}")
endif()
