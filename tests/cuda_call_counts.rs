//! The driver calls each hot operation of the C API makes on a CUDA device, on a warm
//! thread (issue 34): counted by the stand-in driver at every entry point, through the
//! whole C API, and held to the table in docs/PERFORMANCE.md ("Driver calls per
//! operation"). A change that makes an operation call the driver more fails here; one
//! that makes it call less should lower the table (the test prints what it measured).
//! In a test binary of its own: `OFFLOAD_CUDA_LIBRARY` is the process's.

mod common;
mod cuda_support;
mod stand_in_calls;

use common::*;
use cuda_support::driver_for_this_process;
use offload::capi::*;
use stand_in_calls::{call_list, reset_calls, rows, Table, Tally};
use std::ffi::c_void;
use std::ptr::null_mut;

/// A kernel the stand-in knows ("scale"), and no constructors.
const PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n\0";

/// Bytes of the pageable copies: two staging chunks and a part.
const PAGEABLE_BYTES: usize = (8 << 20) + 4096;

/// Times each operation runs in a counted window (after a warm-up of the same).
const ROUNDS: i64 = 20;

/// Driver calls per operation, at most: (operation, [(entry point, calls)]). An entry
/// point not listed must not be called.
const TABLE: Table = &[
    ("queued launch", &[("cuLaunchKernel", 1)]),
    (
        "launch + sync",
        &[("cuLaunchKernel", 1), ("cuStreamSynchronize", 1)],
    ),
    (
        "launch + event + sync",
        &[
            ("cuLaunchKernel", 1),
            ("cuStreamQuery", 1),
            ("cuEventRecord", 1),
            ("cuEventSynchronize", 1),
        ],
    ),
    (
        "host function + sync",
        &[("cuLaunchHostFunc", 1), ("cuStreamSynchronize", 1)],
    ),
    (
        "program load + destroy",
        &[
            ("cuCtxGetCurrent", 1),
            ("cuModuleLoadDataEx", 1),
            ("cuModuleUnload", 1),
        ],
    ),
    (
        "pinned copy + sync",
        &[
            ("cuCtxGetCurrent", 1),
            ("cuPointerGetAttribute", 1),
            ("cuMemcpyAsync", 1),
            ("cuStreamSynchronize", 1),
        ],
    ),
    // Three chunks of the staging (two buffers): per chunk a gate, a DMA and an event;
    // the staging thread waits for each event.
    (
        "pageable copy to the device + sync",
        &[
            ("cuCtxGetCurrent", 1),
            ("cuPointerGetAttribute", 1),
            ("cuStreamWaitValue32_v2", 3),
            ("cuMemcpyAsync", 3),
            ("cuEventRecord", 4),
            ("cuEventSynchronize", 4),
            ("cuStreamSynchronize", 1),
        ],
    ),
    (
        "pageable copy from the device + sync",
        &[
            ("cuCtxGetCurrent", 1),
            ("cuPointerGetAttribute", 1),
            ("cuStreamWaitValue32_v2", 2),
            ("cuMemcpyAsync", 3),
            ("cuEventRecord", 3),
            ("cuEventSynchronize", 3),
            ("cuStreamSynchronize", 1),
        ],
    ),
    ("alloc + free", &[]),
];

struct Gpu {
    device: ol_device_handle_t,
    host: ol_device_handle_t,
    queue: ol_queue_handle_t,
    kernel: ol_symbol_handle_t,
    /// Pageable host memory of `PAGEABLE_BYTES` (the test's own: not counted).
    pageable: *mut u8,
}

unsafe extern "C" fn nothing(_: *mut c_void) {}

fn run(gpu: &Gpu, operation: &str, buffers: (*mut c_void, *mut c_void)) {
    let one = launch_args(1, 1);
    let args = [0u8; 24];
    let launch = || {
        ok(olLaunchKernel(
            gpu.queue,
            gpu.device,
            gpu.kernel,
            args.as_ptr() as *const c_void,
            args.len(),
            &one,
        ))
    };
    let (device_buffer, pinned) = buffers;
    match operation {
        "queued launch" => launch(),
        "launch + sync" => {
            launch();
            ok(olSyncQueue(gpu.queue));
        }
        "launch + event + sync" => {
            launch();
            let mut event = null_mut();
            ok(olCreateEvent(gpu.queue, &mut event));
            ok(olSyncEvent(event));
            ok(olDestroyEvent(event));
        }
        "host function + sync" => {
            ok(olLaunchHostFunction(gpu.queue, Some(nothing), null_mut()));
            ok(olSyncQueue(gpu.queue));
        }
        "program load + destroy" => {
            let mut program = null_mut();
            ok(olCreateProgram(
                gpu.device,
                PTX.as_ptr() as *const c_void,
                PTX.len(),
                &mut program,
            ));
            ok(olDestroyProgram(program));
        }
        "pinned copy + sync" => {
            ok(olMemcpy(
                gpu.queue,
                device_buffer,
                gpu.device,
                pinned,
                gpu.host,
                4096,
            ));
            ok(olSyncQueue(gpu.queue));
        }
        "pageable copy to the device + sync" | "pageable copy from the device + sync" => {
            let at = gpu.pageable as *mut c_void;
            let (dst, dst_device, src, src_device) = if operation.contains("to the device") {
                (device_buffer, gpu.device, at, gpu.host)
            } else {
                (at, gpu.host, device_buffer, gpu.device)
            };
            ok(olMemcpy(
                gpu.queue,
                dst,
                dst_device,
                src,
                src_device,
                PAGEABLE_BYTES,
            ));
            ok(olSyncQueue(gpu.queue));
        }
        "alloc + free" => {
            let mut p = null_mut();
            ok(olMemAlloc(gpu.device, OL_ALLOC_TYPE_DEVICE, 4096, &mut p));
            ok(olMemFree(p));
        }
        other => panic!("no operation {other}"),
    }
}

/// The counted window: `ROUNDS` runs of `operation`. A symbol of its own, so that
/// scripts/count-ops.sh can have callgrind count the instructions inside it alone.
#[no_mangle]
#[inline(never)]
fn cuda_counted_rounds(gpu: &Gpu, operation: &str, buffers: (*mut c_void, *mut c_void)) {
    for _ in 0..ROUNDS {
        run(gpu, operation, buffers);
    }
}

#[test]
fn hot_operations_make_no_more_driver_calls_than_the_table() {
    let Some((_, mock)) = driver_for_this_process("counts") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    ok(olInit());
    let device = first_of(OL_DEVICE_TYPE_GPU);
    let (program, kernel) = program_with_kernel(device, PTX, c"scale");
    let mut queue = null_mut();
    ok(olCreateQueue(device, &mut queue));
    let mut pageable = vec![1u8; PAGEABLE_BYTES];
    let gpu = Gpu {
        pageable: pageable.as_mut_ptr(),
        device,
        host: first_of(OL_DEVICE_TYPE_HOST),
        queue,
        kernel,
    };
    let (mut device_buffer, mut pinned) = (null_mut(), null_mut());
    ok(olMemAlloc(
        device,
        OL_ALLOC_TYPE_DEVICE,
        PAGEABLE_BYTES,
        &mut device_buffer,
    ));
    ok(olMemAlloc(device, OL_ALLOC_TYPE_HOST, 4096, &mut pinned));
    let buffers = (device_buffer, pinned);

    let mut tally = Tally::default();
    for (operation, allowed) in rows(TABLE) {
        for _ in 0..2 {
            run(&gpu, operation, buffers); // warm: pools filled, contexts current
        }
        ok(olSyncQueue(gpu.queue));
        reset_calls(&mock.library);
        cuda_counted_rounds(&gpu, operation, buffers);
        let measured = call_list(&mock.library);
        ok(olSyncQueue(gpu.queue));
        tally.add(operation, allowed, &measured, ROUNDS);
    }
    ok(olMemFree(pinned));
    ok(olMemFree(device_buffer));
    ok(olDestroyQueue(queue));
    ok(olDestroyProgram(program));
    ok(olShutDown());
    tally.check("driver calls");
}
