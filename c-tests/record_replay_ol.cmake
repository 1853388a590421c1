# OFFLOAD_RECORD below OpenMP: PROGRAM (test_kernel_saxpy: one queued and one synchronous
# launch) is run with OFFLOAD_RECORD=WORK/records, and bin/offload-replay --verify replays
# each record: as recorded, with another grid the kernel allows, repeated with --json.
# Then what must fail does: a changed output ("differs at byte"), a record cut short, a
# foreign file, a newer format, a missing file (exit 1, the reason named); a kernel the
# OFFLOAD_RECORD_KERNELS list leaves out is not recorded; a folder that cannot be
# written stops recording with one warning while the program goes on.
# With -DLAUNCHER=... (an MPI job with a device server, the program last) the program
# records on a remote device and offload-replay replays on the host device (the image is
# the host's) and on a remote device (itself in an MPI job: the memory placed on the
# server at the recorded addresses), verified; the other checks are the host run's.
# -DPROGRAM= -DIMAGE= -DOURS= (library folder) -DREPLAY= (offload-replay) -DWORK=
# [-DLAUNCHER=command;args]
set(env "LD_LIBRARY_PATH=${OURS}")
set(records "${WORK}/records")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(remote "")
if(LAUNCHER)
  set(remote OFFLOAD_TEST_DEVICE=remote)
endif()

function(run_program expect_files)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${remote} ${ARGN} ${LAUNCHER}
                          "${PROGRAM}" "${IMAGE}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN}: rc ${rc}\n${out}${err}")
  endif()
  set(program_stderr "${err}" PARENT_SCOPE)
endfunction()

# replay(EXPECT_RC MUST_MATCH ARGS...): offload-replay's exit status and output.
function(replay expect_rc must_match)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} "${REPLAY}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc OR NOT "${out}${err}" MATCHES "${must_match}")
    message(FATAL_ERROR "offload-replay ${ARGN}: rc ${rc} (${expect_rc} expected), "
                        "output not matching '${must_match}':\n${out}${err}")
  endif()
endfunction()

run_program(2 "OFFLOAD_RECORD=${records}")
file(GLOB files "${records}/*.offrec")
list(LENGTH files count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "${count} records, 2 launches expected: ${files}")
endif()
list(GET files 0 first)
replay(0 "saxpy on .*: verified\n.*saxpy on .*: verified" --verify "${records}")
if(LAUNCHER)
  # And on a remote device: offload-replay as the MPI job's application.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} OFFLOAD_PLATFORMS=mpi ${LAUNCHER}
                          "${REPLAY}" --verify --repeat 2 "${records}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "saxpy on rank [0-9]+: .*verified\n.*saxpy on rank [0-9]+: .*verified")
    message(FATAL_ERROR "offload-replay on the remote device: rc ${rc}\n${out}${err}")
  endif()
  message(STATUS "recorded on a remote device, replayed and verified on the host device "
                 "and on a remote device")
  return()
endif()
replay(0 "groups \\[1954, 1, 1\\] of \\[512, 1, 1\\].*: verified"
       --verify --groups 1954 --group-size 512 "${first}")
replay(0 "\"launches\":3,\"median_us\":[0-9.]+,\"verified\":true" --verify --repeat 3 --json
       "${first}")

# A record whose output was changed afterwards: its last byte, flipped.
execute_process(
  COMMAND sh -c "cp \"$0\" \"$1\" && size=$(wc -c < \"$1\") && \
    last=$(tail -c 1 \"$1\" | od -An -tu1 | tr -d ' ') && \
    printf \"\\\\$(printf %o $(( 255 - last )))\" | \
    dd of=\"$1\" bs=1 seek=$(( size - 1 )) conv=notrunc 2>/dev/null"
    "${first}" "${WORK}/changed.offrec"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not write the changed record")
endif()
replay(1 "differs at byte [0-9]+ \\(allocation" --verify "${WORK}/changed.offrec")
replay(0 "saxpy on .*median" "${WORK}/changed.offrec")

# Bad records.
execute_process(COMMAND head -c 1000 "${first}" OUTPUT_FILE "${WORK}/cut.offrec")
replay(1 "cut.offrec: cut short" --verify "${WORK}/cut.offrec")
replay(1 "not a liboffload kernel record" --verify "${IMAGE}")
execute_process(COMMAND sh -c "printf 'OFFLDREC\\002\\000\\000\\000' > \"$0\""
                        "${WORK}/newer.offrec")
replay(1 "format version 2; this liboffload reads version 1 \\(a newer liboffload wrote it\\)"
       "${WORK}/newer.offrec")
replay(1 "missing.offrec: cannot read it" "${WORK}/missing.offrec")
replay(1 "no record given")
replay(1 "--repeat 0" --repeat 0 "${first}")

# Only the kernels named; a folder that cannot be made.
run_program(0 "OFFLOAD_RECORD=${WORK}/none" OFFLOAD_RECORD_KERNELS=other_kernel)
if(EXISTS "${WORK}/none")
  message(FATAL_ERROR "a kernel OFFLOAD_RECORD_KERNELS leaves out was recorded")
endif()
file(WRITE "${WORK}/a_file" "")
run_program(0 "OFFLOAD_RECORD=${WORK}/a_file/records")
string(REGEX MATCHALL "OFFLOAD_RECORD: cannot write" warnings "${program_stderr}")
list(LENGTH warnings nwarnings)
if(NOT nwarnings EQUAL 1)
  message(FATAL_ERROR "${nwarnings} warnings for an unwritable folder, 1 expected:\n"
                      "${program_stderr}")
endif()
message(STATUS "recorded, replayed and verified; bad records refused")
