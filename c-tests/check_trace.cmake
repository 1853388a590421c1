# cmake -DPROBE=<trace_probe> -P check_trace.cmake
# Runs the probe with OFFLOAD_TRACE=1 and checks its stderr, then without it.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env OFFLOAD_TRACE=1 "${PROBE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("--- stderr with OFFLOAD_TRACE=1 ---\n${err}---")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the probe failed (${rc}): ${out}")
endif()
foreach(expected
    "---> olInit\\(\\) -> OL_SUCCESS"
    "---> olInitWithArgs\\(Args=0x[0-9a-f]+\\) -> OL_SUCCESS"
    "---> olMemAlloc\\(Device=0x[0-9a-f]+, Type=1, Size=1024, AllocationOut=0x[0-9a-f]+\\) -> OL_SUCCESS"
    "---> olMemAlloc\\([^\n]*Size=0[^\n]*\\) -> OL_ERRC_INVALID_SIZE \\([^\n]+\\)"
    "---> olMemAlloc\\([^\n]*\\) -> OL_SUCCESS at trace_probe.c:42:7 in main"
    "---> olMemFree\\(Address=0x[0-9a-f]+\\) -> OL_SUCCESS"
    "---> olShutDown\\(\\) -> OL_SUCCESS")
  if(NOT err MATCHES "${expected}")
    message(FATAL_ERROR "stderr has no line matching: ${expected}")
  endif()
endforeach()

execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=OFFLOAD_TRACE "${PROBE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the probe failed without tracing (${rc}): ${out}")
endif()
if(err MATCHES "--->")
  message(FATAL_ERROR "calls were traced without OFFLOAD_TRACE:\n${err}")
endif()
message("trace: ok")
