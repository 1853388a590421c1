# cmake -DTOOL=llvm-offload-device-info-22 -DLIBDIR=<prefix>/lib -P check_llvm_device_info.cmake
# LLVM's own tool, built against LLVM's libLLVMOffload.so.22.1, runs on ours (picked by
# LD_LIBRARY_PATH, which the loader searches before the tool's RUNPATH): it exits 0 and
# lists our host device, every property it asks for answered.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${LIBDIR}" "${TOOL}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} exited with ${rc}:\n${out}\n${err}")
endif()
# "liboffload" is our platform vendor; LLVM's own library says "Unknown platform vendor",
# so this also proves the tool ran on our library.
foreach(needle "Platform Vendor Name: liboffload" "Platform Backend: HOST" "Type: HOST"
               "Native Vector Width For Half:")
  string(FIND "${out}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${TOOL}'s output has no '${needle}':\n${out}")
  endif()
endforeach()
if(out MATCHES "error" OR err MATCHES "error")
  message(FATAL_ERROR "${TOOL} reported an error:\n${out}\n${err}")
endif()
message("${TOOL} ran on our library:\n${out}")
