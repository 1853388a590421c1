//! The HSA runtime calls each hot operation of the C API makes on an AMD GPU, on a warm
//! thread (issue 34): counted by the stand-in runtime (tests/amdgpu_support/mock_hsa.c)
//! at every entry point, through the whole C API, as tests/cuda_call_counts.rs does for
//! CUDA. A change that makes an operation call the runtime more fails here; one that
//! makes it call less should lower the table (the test prints what it measured).
//!
//! The backend polls signals to release what finished work held, so how many polls an
//! operation makes depends on what has finished when it looks. Each operation is
//! therefore enqueued while the stand-in holds everything back (`mock_hold`: no packet,
//! copy or host step completes), then let go and waited for: the counts are those of a
//! host faster than its device, the same every run. A queued launch is held for the
//! whole window (launches pile up as on a busy GPU).
//! In a test binary of its own: `OFFLOAD_HSA_LIBRARY` is the process's.

mod common;
mod stand_in_build;
mod stand_in_calls;

use common::*;
use offload::capi::*;
use stand_in_calls::{call_list, reset_calls, rows, Table, Tally};
use std::ffi::c_void;
use std::ptr::null_mut;

/// A code object for the stand-in's gfx1030 whose `vector_add` the stand-in runs on the
/// host (its kernel object is a host function); n = 0 in the arguments: it does nothing.
const IMAGE: &str = "tests/fixtures/images/amdgpu_gfx1030.co";

/// `vector_add(a, b, c, n)`: three pointers and an int.
const ARG_BYTES: usize = 28;

/// Bytes of the staged pageable copies (under the 1 MiB lock threshold).
const PAGEABLE_BYTES: usize = 64 << 10;

/// Bytes of the locked pageable copies (over the lock threshold).
const LOCKED_BYTES: usize = 2 << 20;

/// Times each operation runs in a counted window (after a warm-up of the same).
const ROUNDS: i64 = 20;

/// Runtime calls per operation, at most: (operation, [(entry point, calls)]). An entry
/// point not listed must not be called.
const TABLE: Table = &[
    // A pooled signal reset, a ring-room check, the doorbell; the poll is the reap of
    // the launch before (19 of 20: the first finds nothing pending).
    (
        "queued launch",
        &[
            ("hsa_queue_add_write_index_relaxed", 1),
            ("hsa_queue_load_read_index_scacquire", 1),
            ("hsa_signal_store_relaxed", 2),
            ("hsa_signal_load_scacquire", 1),
        ],
    ),
    (
        "launch + sync",
        &[
            ("hsa_queue_add_write_index_relaxed", 1),
            ("hsa_queue_load_read_index_scacquire", 1),
            ("hsa_signal_store_relaxed", 2),
            ("hsa_signal_load_scacquire", 1),
            ("hsa_signal_wait_scacquire", 1),
        ],
    ),
    // The event is a barrier-AND packet of its own signal; polls: 2.9 (the first round
    // finds nothing to reap).
    (
        "launch + event + sync",
        &[
            ("hsa_queue_add_write_index_relaxed", 2),
            ("hsa_queue_load_read_index_scacquire", 2),
            ("hsa_signal_store_relaxed", 4),
            ("hsa_signal_load_scacquire", 3),
            ("hsa_signal_wait_scacquire", 1),
        ],
    ),
    // The store with release is the host-step thread's, completing the step.
    (
        "host function + sync",
        &[
            ("hsa_signal_store_relaxed", 1),
            ("hsa_signal_load_scacquire", 2),
            ("hsa_signal_wait_scacquire", 1),
            ("hsa_signal_store_screlease", 1),
        ],
    ),
    (
        "program load + destroy",
        &[
            ("hsa_code_object_reader_create_from_memory", 1),
            ("hsa_executable_create_alt", 1),
            ("hsa_executable_load_agent_code_object", 1),
            ("hsa_executable_freeze", 1),
            ("hsa_executable_validate", 1),
            ("hsa_code_object_reader_destroy", 1),
            ("hsa_executable_destroy", 1),
        ],
    ),
    (
        "pinned copy + sync",
        &[
            ("hsa_amd_pointer_info", 1),
            ("hsa_signal_store_relaxed", 1),
            ("hsa_signal_load_scacquire", 2),
            ("hsa_amd_memory_async_copy", 1),
            ("hsa_signal_wait_scacquire", 1),
        ],
    ),
    // A staging buffer from the device's cache (allocated, made visible and freed per copy
    // before issue 34); a host step fills it.
    (
        "pageable copy to the device + sync",
        &[
            ("hsa_amd_pointer_info", 1),
            ("hsa_signal_store_relaxed", 2),
            ("hsa_signal_load_scacquire", 5),
            ("hsa_signal_store_screlease", 1),
            ("hsa_amd_memory_async_copy", 1),
            ("hsa_signal_wait_scacquire", 1),
        ],
    ),
    // As to the device, and the host step waits for the copy through a signal handler.
    (
        "pageable copy from the device + sync",
        &[
            ("hsa_amd_pointer_info", 1),
            ("hsa_signal_store_relaxed", 2),
            ("hsa_signal_load_scacquire", 6),
            ("hsa_amd_memory_async_copy", 1),
            ("hsa_amd_signal_async_handler", 1),
            ("hsa_signal_store_screlease", 1),
            ("hsa_signal_wait_scacquire", 1),
        ],
    ),
    // Over the lock threshold: the pageable memory is locked for the copy.
    (
        "locked copy to the device + sync",
        &[
            ("hsa_amd_pointer_info", 1),
            ("hsa_amd_memory_lock", 1),
            ("hsa_signal_store_relaxed", 1),
            ("hsa_signal_load_scacquire", 2),
            ("hsa_amd_memory_async_copy", 1),
            ("hsa_signal_wait_scacquire", 1),
            ("hsa_amd_memory_unlock", 1),
        ],
    ),
    // The runtime's memory manager keeps freed blocks.
    ("alloc + free", &[]),
];

/// The stand-in, from the copy the library opened: its counters (`stand_in_calls`) and
/// its `mock_hold` control.
struct Stand(libloading::Library);

impl Stand {
    /// Holds everything that would complete (see `mock_hold` in the stand-in), or lets
    /// it go.
    fn hold(&self, on: bool) {
        // SAFETY: `void mock_hold(int)` in the stand-in.
        unsafe {
            let f = self
                .0
                .get::<unsafe extern "C" fn(std::ffi::c_int)>(b"mock_hold")
                .unwrap();
            f(on.into())
        }
    }
}

struct Gpu {
    device: ol_device_handle_t,
    host: ol_device_handle_t,
    queue: ol_queue_handle_t,
    kernel: ol_symbol_handle_t,
    image: Vec<u8>,
    /// Device memory of `LOCKED_BYTES` and pinned host memory of 4096.
    device_buffer: *mut c_void,
    pinned: *mut c_void,
    /// Pageable host memory of `LOCKED_BYTES` (the test's own: not counted).
    pageable: *mut u8,
    /// The event between the two parts of "launch + event + sync".
    event: std::cell::Cell<ol_event_handle_t>,
}

unsafe extern "C" fn nothing(_: *mut c_void) {}

/// The first part of `operation`: what the caller enqueues (or does at once).
fn enqueue(gpu: &Gpu, operation: &str) {
    let one = launch_args(1, 1);
    let args = [0u8; ARG_BYTES];
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
    let copy = |dst, dst_device, src, src_device, size| {
        ok(olMemcpy(gpu.queue, dst, dst_device, src, src_device, size))
    };
    let pageable = gpu.pageable as *mut c_void;
    match operation {
        "queued launch" | "launch + sync" => launch(),
        "launch + event + sync" => {
            launch();
            let mut event = null_mut();
            ok(olCreateEvent(gpu.queue, &mut event));
            gpu.event.set(event);
        }
        "host function + sync" => {
            ok(olLaunchHostFunction(gpu.queue, Some(nothing), null_mut()));
        }
        "program load + destroy" => {
            let mut program = null_mut();
            ok(olCreateProgram(
                gpu.device,
                gpu.image.as_ptr() as *const c_void,
                gpu.image.len(),
                &mut program,
            ));
            ok(olDestroyProgram(program));
        }
        "pinned copy + sync" => copy(gpu.device_buffer, gpu.device, gpu.pinned, gpu.host, 4096),
        "pageable copy to the device + sync" => copy(
            gpu.device_buffer,
            gpu.device,
            pageable,
            gpu.host,
            PAGEABLE_BYTES,
        ),
        "pageable copy from the device + sync" => copy(
            pageable,
            gpu.host,
            gpu.device_buffer,
            gpu.device,
            PAGEABLE_BYTES,
        ),
        "locked copy to the device + sync" => copy(
            gpu.device_buffer,
            gpu.device,
            pageable,
            gpu.host,
            LOCKED_BYTES,
        ),
        "alloc + free" => {
            let mut p = null_mut();
            ok(olMemAlloc(gpu.device, OL_ALLOC_TYPE_DEVICE, 4096, &mut p));
            ok(olMemFree(p));
        }
        other => panic!("no operation {other}"),
    }
}

/// The rest of `operation`, after the stand-in lets the work complete: its wait.
fn complete(gpu: &Gpu, operation: &str) {
    if operation == "launch + event + sync" {
        let event = gpu.event.replace(null_mut());
        ok(olSyncEvent(event));
        ok(olDestroyEvent(event));
    } else if operation.ends_with("+ sync") {
        ok(olSyncQueue(gpu.queue));
    }
}

/// Whether `operation` waits for what it enqueued (else the stand-in holds its work
/// until the whole window is over: launches pile up as on a busy GPU).
fn waits(operation: &str) -> bool {
    operation.ends_with("+ sync")
}

/// `ROUNDS` runs of `operation`, each enqueued while the stand-in holds everything
/// (no packet, copy or host step completes), so that what the backend polls and finds
/// done is the same every run: the host is faster than the device.
fn rounds(gpu: &Gpu, stand: &Stand, operation: &str) {
    stand.hold(true);
    for _ in 0..ROUNDS {
        enqueue(gpu, operation);
        if waits(operation) {
            stand.hold(false);
            complete(gpu, operation);
            stand.hold(true);
        }
    }
    stand.hold(false);
}

/// The counted window. A symbol of its own, so that a profiler (callgrind's
/// --toggle-collect) can count the instructions inside it alone.
#[no_mangle]
#[inline(never)]
fn amdgpu_counted_rounds(gpu: &Gpu, stand: &Stand, operation: &str) {
    rounds(gpu, stand, operation);
}

#[test]
fn hot_operations_make_no_more_runtime_calls_than_the_table() {
    let Some(path) = stand_in_build::build_stand_in(
        "amdgpu_support/mock_hsa.c",
        "libhsa-runtime64.so.1",
        "mock-hsa-counts",
    ) else {
        eprintln!("skipped: no C compiler to build the stand-in HSA runtime");
        return;
    };
    // Set before any thread of this binary reads the environment.
    std::env::set_var("OFFLOAD_HSA_LIBRARY", &path);
    std::env::set_var("OFFLOAD_PLATFORMS", "amdgpu,host");
    // SAFETY: the stand-in has no initialisers; the library opens the same file, so this
    // is the same loaded copy with the same counters.
    let stand = Stand(unsafe { libloading::Library::new(&path) }.unwrap());
    ok(olInit());
    let device = first_of(OL_DEVICE_TYPE_GPU);
    let image = std::fs::read(format!("{}/{IMAGE}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let (program, kernel) = program_with_kernel(device, &image, c"vector_add");
    let mut queue = null_mut();
    ok(olCreateQueue(device, &mut queue));
    let mut pageable = vec![1u8; LOCKED_BYTES];
    let (mut device_buffer, mut pinned) = (null_mut(), null_mut());
    ok(olMemAlloc(
        device,
        OL_ALLOC_TYPE_DEVICE,
        LOCKED_BYTES,
        &mut device_buffer,
    ));
    ok(olMemAlloc(device, OL_ALLOC_TYPE_HOST, 4096, &mut pinned));
    let gpu = Gpu {
        device,
        host: first_of(OL_DEVICE_TYPE_HOST),
        queue,
        kernel,
        image,
        device_buffer,
        pinned,
        pageable: pageable.as_mut_ptr(),
        event: std::cell::Cell::new(null_mut()),
    };

    let mut tally = Tally::default();
    for (operation, allowed) in rows(TABLE) {
        // Warm: pools hold what a window takes, threads are started.
        rounds(&gpu, &stand, operation);
        ok(olSyncQueue(gpu.queue));
        reset_calls(&stand.0);
        amdgpu_counted_rounds(&gpu, &stand, operation);
        let measured = call_list(&stand.0);
        ok(olSyncQueue(gpu.queue));
        tally.add(operation, allowed, &measured, ROUNDS);
    }
    ok(olMemFree(pinned));
    ok(olMemFree(device_buffer));
    ok(olDestroyQueue(queue));
    ok(olDestroyProgram(program));
    ok(olShutDown());
    drop(pageable);
    tally.check("HSA runtime calls");
}
