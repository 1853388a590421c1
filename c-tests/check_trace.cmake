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
    "---> olInitWithArgs\\(Args=\\{Size=[0-9]+, NumPlatforms=0, Platforms=0x0\\}\\) -> OL_SUCCESS"
    # Enumerators by name; an out-parameter with the handle written, once the call
    # succeeded; an error with its details.
    "---> olMemAlloc\\(Device=0x[0-9a-f]+, Type=OL_ALLOC_TYPE_DEVICE, Size=1024, AllocationOut=0x[0-9a-f]+ \\(0x[0-9a-f]+\\)\\) -> OL_SUCCESS"
    "---> olMemAlloc\\([^\n]*Size=0, AllocationOut=0x[0-9a-f]+\\) -> OL_ERRC_INVALID_SIZE \\([^\n]+\\)"
    "---> olMemAlloc\\([^\n]*Type=OL_ALLOC_TYPE_HOST[^\n]*\\) -> OL_SUCCESS at trace_probe.c:42:7 in main"
    "---> olMemFree\\(Address=0x[0-9a-f]+\\) -> OL_SUCCESS"
    # An info query: the key by name, the value written as its enumerator; a size.
    "---> olGetDeviceInfo\\(Device=0x[0-9a-f]+, PropName=OL_DEVICE_INFO_TYPE, PropSize=4, PropValue=0x[0-9a-f]+ \\(OL_DEVICE_TYPE_HOST\\)\\) -> OL_SUCCESS"
    "---> olGetDeviceInfoSize\\(Device=0x[0-9a-f]+, PropName=OL_DEVICE_INFO_NAME, PropSizeRet=0x[0-9a-f]+ \\([1-9][0-9]*\\)\\) -> OL_SUCCESS"
    # A value no enumerator has.
    "---> olMemAlloc\\(Device=0x[0-9a-f]+, Type=7 \\(unknown\\), [^\n]*\\) -> OL_ERRC_INVALID_ENUMERATION \\([^\n]+\\)"
    # A string, quoted.
    "---> olGetSymbol\\(Program=0x0, Name=\"saxpy\", Kind=OL_SYMBOL_KIND_KERNEL, Symbol=0x[0-9a-f]+\\) -> OL_ERRC_INVALID_NULL_HANDLE \\([^\n]+\\)"
    # A launch's sizes, as the struct's fields.
    "---> olLaunchKernel\\(Queue=0x0, Device=0x[0-9a-f]+, Kernel=0x0, ArgumentsData=0x0, ArgumentsSize=0, LaunchSizeArgs=\\{Dimensions=1, NumGroups=\\{4,1,1\\}, GroupSize=\\{256,1,1\\}, DynSharedMemory=0\\}\\) -> OL_ERRC_INVALID_NULL_HANDLE"
    "---> olCreateQueue\\(Device=0x[0-9a-f]+, Queue=0x[0-9a-f]+ \\(0x[0-9a-f]+\\)\\) -> OL_SUCCESS"
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
