//! The CUDA backend against a stand-in driver that behaves as NVIDIA documents where
//! a kinder stand-in would hide a mistake (issue 19): each test names the documented
//! behaviour it depends on.

mod cuda_support;
mod stand_in_calls;

use cuda_support::{build_mock_driver, Mock};
use offload::plugin::foundation::error::Error;
use offload::plugin::{Device, KernelArgs, LaunchConfig, Program, StreamOp};
use offload::plugins::cuda::CudaPlugin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Kernels the stand-in knows by name: "fault" faults, "hold" runs until released,
/// "big_static" has 40 KiB of static shared memory.
const PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n\
    .visible .entry fault()\n{\n\tret;\n}\n\
    .visible .entry hold()\n{\n\tret;\n}\n\
    .visible .entry big_static()\n{\n\tret;\n}\n";

/// The stand-in, its one device, and that device's program of the kernels above.
struct StandIn {
    mock: Mock,
    /// The stand-in's file, for a second handle on the same loaded copy.
    path: std::path::PathBuf,
    gpu: Arc<dyn Device>,
    program: Arc<dyn Program>,
}

fn open(tag: &str) -> Option<StandIn> {
    let Some(path) = build_mock_driver(tag) else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return None;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: the stand-in has no initialisers; the plugin opened the same file, so this
    // is the same loaded copy with the same state.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    let gpu = plugin.open_devices().unwrap().remove(0);
    let program = gpu.load_program(PTX).unwrap();
    Some(StandIn {
        mock,
        path,
        gpu: Arc::new(gpu),
        program,
    })
}

fn launch(program: &Arc<dyn Program>, name: &str, dyn_shared_memory: usize) -> StreamOp {
    StreamOp::Launch {
        kernel: program.kernel(name).unwrap(),
        config: LaunchConfig {
            dyn_shared_memory,
            ..LaunchConfig::new(1, [1; 3], [32, 1, 1], 0, false)
        },
        args: KernelArgs::default(),
    }
}

/// Polls `done` until it answers, for at most ten seconds (a poll that never ends is
/// the failure this guards against).
fn poll<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(answer) = done() {
            return answer;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still polling after 10 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// cuStreamQuery / cuEventQuery: "may also return error codes from previous,
/// asynchronous launches"; after a fault every call answers the sticky error. Host
/// functions queued behind the fault are never called by the driver.
#[test]
fn after_a_fault_polling_reports_it_and_unrun_host_functions_are_released() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("fault")
    else {
        return;
    };
    let stream = gpu.create_stream().unwrap();
    stream
        .enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    stream
        .enqueue("olLaunchKernel", launch(&program, "fault", 0), None)
        .unwrap();
    let held = Arc::new(());
    let in_step = held.clone();
    stream
        .enqueue(
            "olLaunchHostFunction",
            StreamOp::Host(Box::new(move || {
                drop(in_step);
                Ok(())
            })),
            None,
        )
        .unwrap();
    let event = stream.record().unwrap();
    assert!(!stream.is_idle().unwrap(), "held: not idle yet");
    assert!(!event.is_complete().unwrap());
    mock.release();

    let idle: Error = poll("OL_QUEUE_INFO_EMPTY", || stream.is_idle().err());
    assert!(
        idle.details.contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{}",
        idle.details
    );
    let complete = poll("OL_EVENT_INFO_IS_COMPLETE", || event.is_complete().err());
    assert!(complete.details.contains("CUDA_ERROR_ILLEGAL_ADDRESS"));

    let e = stream.synchronize().unwrap_err();
    assert!(
        e.details.contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{}",
        e.details
    );
    assert!(
        e.details
            .contains("1 host function queued before the fault was not run"),
        "{}",
        e.details
    );
    assert_eq!(mock.get("host_funcs_discarded"), 1);
    assert_eq!(mock.get("host_funcs_run"), 0);
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "what the unrun host function held is released"
    );
}

/// The calling thread's current context in the stand-in (`void *mock_current(void)`).
fn current_context(mock: &Mock) -> *mut std::ffi::c_void {
    // SAFETY: `void *mock_current(void)` in the stand-in.
    unsafe {
        let f = mock
            .library
            .get::<unsafe extern "C" fn() -> *mut std::ffi::c_void>(b"mock_current")
            .unwrap();
        f()
    }
}

/// The driver acts on the calling thread's current context, which the application's
/// own CUDA code (the runtime API on another GPU, say) relies on: every call that made
/// the device's context current makes the caller's current again. Whether a call on a
/// stream or an event uses the handle's context or needs it current is not documented
/// (`handle_context`: the stand-in's reading, see its header); under either reading the
/// queue's work runs and the caller's context stays.
fn the_callers_current_context_is_kept(tag: &str, handle_context: i64) {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open(tag)
    else {
        return;
    };
    mock.call(b"mock_set_handle_context", handle_context);
    let mut theirs = 0u64;
    let theirs = &mut theirs as *mut u64 as *mut std::ffi::c_void;
    mock.call(b"mock_set_current", theirs);
    let current = || current_context(&mock);
    let p = gpu
        .allocate(4096, offload::plugin::AllocKind::Device)
        .unwrap();
    assert_eq!(current(), theirs, "after cuMemAlloc");
    let data = [7u8; 64];
    gpu.copy_to_device(p, data.as_ptr() as usize, 64).unwrap();
    assert_eq!(current(), theirs, "after a copy");
    let stream = gpu.create_stream().unwrap();
    let kernel = program.kernel("scale").unwrap();
    // The second round makes nothing (the kernel's parameters are known, the event is
    // the pool's): only calls on the queue's handles.
    for round in 0..2 {
        let switches_before = mock.get("ctx_sets");
        let op = StreamOp::Launch {
            kernel: kernel.clone(),
            config: LaunchConfig::new(1, [1; 3], [32, 1, 1], 0, false),
            args: KernelArgs::default(),
        };
        stream.enqueue("olLaunchKernel", op, None).unwrap();
        stream.synchronize().unwrap();
        let event = stream.record().unwrap();
        event.synchronize().unwrap();
        drop(event);
        assert_eq!(current(), theirs, "after a queue's work");
        let switches = mock.get("ctx_sets") - switches_before;
        if round == 1 && handle_context == 1 {
            assert_eq!(
                switches, 0,
                "the handles' context is used: no switch needed"
            );
        } else if round == 1 {
            assert!(
                switches > 0,
                "refused calls ran again with the context current"
            );
        }
    }
    drop(gpu.load_program(PTX).unwrap());
    assert_eq!(current(), theirs, "after a program's load and unload");
    gpu.free(p, 4096, offload::plugin::AllocKind::Device)
        .unwrap();
    assert_eq!(current(), theirs, "after cuMemFree");
    assert!(mock.get("ctx_sets") > 0);
}

#[test]
fn the_callers_current_context_is_kept_where_handles_need_theirs_current() {
    the_callers_current_context_is_kept("current-strict", 0);
}

#[test]
fn the_callers_current_context_is_kept_where_handles_carry_theirs() {
    the_callers_current_context_is_kept("current-lenient", 1);
}

/// A thread with no context current: its first call on a queue is refused by the driver
/// (`CUDA_ERROR_INVALID_CONTEXT`, under the stand-in's stricter reading) and made again
/// with the device's context current, which stays current as the CUDA runtime's first
/// call leaves a primary context; from then on a queue's calls are the driver calls
/// alone, without reading the thread's context (issue 34: the raw driver path's calls).
#[test]
fn a_threads_first_queue_call_makes_the_context_current_and_later_ones_read_nothing() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("fresh-thread")
    else {
        return;
    };
    let stream = gpu.create_stream().unwrap();
    // The kernel's parameters are asked for here, so the thread's first call is the launch.
    stream
        .enqueue("olLaunchKernel", launch(&program, "scale", 0), None)
        .unwrap();
    stream.synchronize().unwrap();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                assert!(current_context(&mock).is_null(), "a new thread has none");
                stream
                    .enqueue("olLaunchKernel", launch(&program, "scale", 0), None)
                    .unwrap();
                assert_eq!(mock.get("current_is_primary"), 1);
                stand_in_calls::reset_calls(&mock.library);
                stream
                    .enqueue("olLaunchKernel", launch(&program, "scale", 0), None)
                    .unwrap();
                stream.synchronize().unwrap();
                let calls = stand_in_calls::call_list(&mock.library);
                let names: Vec<&str> = calls.iter().map(|(name, _)| name.as_str()).collect();
                assert!(
                    !names.contains(&"cuCtxGetCurrent") && !names.contains(&"cuCtxSetCurrent"),
                    "{calls:?}"
                );
                assert!(names.contains(&"cuLaunchKernel"), "{calls:?}");
            })
            .join()
            .unwrap();
    });
}

/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: "the sum of this value and the
/// function attribute CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES cannot exceed the device
/// attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"; a launch beyond the
/// default 48 KiB (static + dynamic) needs it raised.
#[test]
fn dynamic_shared_memory_counts_static_and_is_raised_once_for_all() {
    let Some(StandIn { mock, program, .. }) = open("shared") else {
        return;
    };
    // 40 KiB static + 16 KiB dynamic: above the default 48 KiB, so the limit is raised.
    let big = program.kernel("big_static").unwrap();
    let config = |bytes| LaunchConfig {
        dyn_shared_memory: bytes,
        ..LaunchConfig::new(1, [1; 3], [32, 1, 1], 0, false)
    };
    big.launch(&config(16 << 10), &KernelArgs::default())
        .unwrap();
    assert_eq!(mock.get("dyn_allowed_big_static"), 16 << 10);

    // Launches raising the same kernel's limit at once end with it at the largest.
    let scale = program.kernel("scale").unwrap();
    let args = KernelArgs::from_bytes(&[0; 24]);
    std::thread::scope(|s| {
        for i in 0..8usize {
            let (scale, args) = (&scale, &args);
            s.spawn(move || {
                scale
                    .launch(&config((60 << 10) + i * (8 << 10)), args)
                    .unwrap();
            });
        }
    });
    let largest = (60 << 10) + 7 * (8 << 10);
    assert_eq!(mock.get("dyn_allowed"), largest);
    for i in 0..8usize {
        scale
            .launch(&config((60 << 10) + i * (8 << 10)), &args)
            .unwrap();
    }
}

/// cuStreamDestroy: "in case the device is still doing work in the stream when
/// cuStreamDestroy() is called, the function will return immediately and the resources
/// associated with the stream will be released automatically once the device has
/// completed all work"; the primary context's last release destroys the context. A
/// queue destroyed while busy, then the device released, must not lose that work.
#[test]
fn a_destroyed_busy_queue_finishes_before_the_context_goes() {
    let Some(StandIn {
        mock,
        path,
        gpu,
        program,
    }) = open("shutdown")
    else {
        return;
    };
    let stream = gpu.create_stream().unwrap();
    stream
        .enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let in_step = ran.clone();
    stream
        .enqueue(
            "olLaunchHostFunction",
            StreamOp::Host(Box::new(move || {
                in_step.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            })),
            None,
        )
        .unwrap();
    drop(stream);
    drop(program);
    let releaser = std::thread::spawn({
        let mock = Mock {
            // SAFETY: the same loaded copy again (a second handle on it).
            library: unsafe { libloading::Library::new(&path) }.unwrap(),
        };
        move || {
            std::thread::sleep(Duration::from_millis(100));
            mock.release();
        }
    });
    drop(gpu);
    releaser.join().unwrap();
    assert_eq!(mock.get("ctx_refs"), 0, "the context was released");
    assert_eq!(mock.get("lost_work"), 0, "after its work was done");
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
}

/// cuModuleLoadDataEx takes "a fatbin object" and picks the entry for the device, JIT-
/// compiling PTX where no cubin fits; fatbinary compresses entries by default, which the
/// driver decompresses. A fatbin whose fitting entries are all compressed is handed over
/// whole.
#[test]
fn a_compressed_fatbin_is_loaded_by_the_driver() {
    use offload::image::{write_fatbin, FatbinEntryKind};
    let Some(StandIn { mock, gpu, .. }) = open("fatbin") else {
        return;
    };
    let fatbin = write_fatbin(&[
        (FatbinEntryKind::Cubin, 70, &[1, 2, 3, 4], false),
        (
            FatbinEntryKind::Ptx,
            80,
            &[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3],
            true,
        ),
    ]);
    gpu.check_image(&fatbin).unwrap();
    let before = mock.get("loaded_fatbins");
    let program = gpu.load_program(&fatbin).unwrap();
    assert_eq!(mock.get("loaded_fatbins"), before + 1, "the whole fatbin");
    program.kernel("scale").unwrap();
}

/// cuLaunchHostFunc: "the host function must not perform any synchronization that may
/// depend on outstanding CUDA work not mandated to run earlier", and host functions
/// "without a mandated order (such as in independent streams) execute in undefined
/// order and may be serialized". A CUDA queue waiting for a host queue's event, which
/// waits for a CUDA event behind a host function, must not hold the one callback thread.
#[test]
fn a_wait_on_another_backends_event_does_not_hold_the_callback_thread() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("bridge")
    else {
        return;
    };
    let host = offload::plugin::Plugin::devices(&offload::plugins::host::HostPlugin).remove(0);
    let (c1, c2, h) = (
        gpu.create_stream().unwrap(),
        gpu.create_stream().unwrap(),
        host.create_stream().unwrap(),
    );
    // c2: held, then a host function, then the event the host queue waits for.
    c2.enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let in_step = ran.clone();
    c2.enqueue(
        "olLaunchHostFunction",
        StreamOp::Host(Box::new(move || {
            in_step.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        })),
        None,
    )
    .unwrap();
    let ec2 = c2.record().unwrap();
    // h waits for c2's event; c1 waits for h's event.
    h.wait_foreign(ec2).unwrap();
    let eh = h.record().unwrap();
    c1.wait_foreign(eh).unwrap();
    let ec1 = c1.record().unwrap();
    std::thread::sleep(Duration::from_millis(50)); // c1's wait starts first
    mock.release();

    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(ec1.synchronize()).unwrap());
    let synced = finished.recv_timeout(Duration::from_secs(10));
    assert!(
        matches!(synced, Ok(Ok(()))),
        "the CUDA queue's wait never ended: {synced:?}"
    );
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(mock.get("waits_on_value"), 1, "held on the GPU");
    assert_eq!(mock.get("callback_thread_calls_driver"), 0);
    c1.synchronize().unwrap();
}

/// cuEventRecord "can be called multiple times on the same event"; cuStreamWaitEvent
/// waits for "the most recent call to cuEventRecord()" before it. So an event that is
/// done with can be recorded again instead of destroyed and created: events come from a
/// pool, and dropping one calls no CUDA (it may happen on the callback thread).
#[test]
fn events_are_reused_from_a_pool() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("events")
    else {
        return;
    };
    let (a, b) = (gpu.create_stream().unwrap(), gpu.create_stream().unwrap());
    let created = mock.get("events_created");
    for _ in 0..100 {
        let event = a.record().unwrap();
        b.wait(&event).unwrap();
        drop(event);
    }
    assert!(
        mock.get("events_created") <= created + 1,
        "{} events created for 100 records",
        mock.get("events_created") - created
    );
    // A recorded event reused while a stream still waits for its earlier point.
    a.enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    let held = a.record().unwrap();
    b.wait(&held).unwrap();
    let after_wait = b.record().unwrap();
    drop(held);
    let reused = a.record().unwrap(); // the same CUevent, recorded again
    assert!(
        !after_wait.is_complete().unwrap(),
        "b still waits for the hold"
    );
    mock.release();
    after_wait.synchronize().unwrap();
    reused.synchronize().unwrap();
    // Timed: the application may ask for the time between two of its events.
    assert!(reused.elapsed_ms(after_wait.as_ref()).is_ok());
    assert_eq!(mock.get("callback_thread_calls_driver"), 0);
}

/// cuEventRecord is asynchronous: "cuEventQuery ... returns CUDA_ERROR_NOT_READY" until
/// the stream has passed the record, even on a stream with nothing else in it (on an
/// H100, microseconds later). An event of an empty queue is complete at once, as on
/// every other device (LLVM's tests rely on it).
#[test]
fn an_event_of_an_empty_queue_is_complete_at_once() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("empty_event")
    else {
        return;
    };
    let queue = gpu.create_stream().unwrap();
    mock.call(b"mock_set_latency_us", 20_000u32);
    let event = queue.record().unwrap();
    assert!(event.is_complete().unwrap(), "an empty queue's event");
    // With work before it, the event completes only after that work.
    queue
        .enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    let after = queue.record().unwrap();
    assert!(
        !after.is_complete().unwrap(),
        "an event behind a held kernel"
    );
    mock.release();
    after.synchronize().unwrap();
    assert!(after.is_complete().unwrap());
    mock.call(b"mock_set_latency_us", 0u32);
}

/// cuMemcpyAsync with pageable host memory: "for transfers from pageable host memory to
/// device memory, a stream sync is performed before the copy is initiated", and device to
/// pageable host memory "returns only once the copy has completed". A queued olMemcpy
/// must not wait for the queue's earlier work: pageable memory is staged through pinned
/// buffers, in chunks.
#[test]
fn a_queued_copy_of_pageable_memory_does_not_wait_for_the_queue() {
    use offload::plugin::{AllocKind, CopyDirection};
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("pageable")
    else {
        return;
    };
    let size = (10 << 20) + 12_345; // three chunks, the last one short
    let input: Vec<u8> = (0..size).map(|i| (i * 7 + i / 4099) as u8).collect();
    let mut output = vec![0u8; size];
    let device = gpu.allocate(size, AllocKind::Device).unwrap();
    let stream = gpu.create_stream().unwrap();
    stream
        .enqueue("olLaunchKernel", launch(&program, "hold", 0), None)
        .unwrap();
    let copies = [
        (device, input.as_ptr() as usize, CopyDirection::HostToDevice),
        (
            output.as_mut_ptr() as usize,
            device,
            CopyDirection::DeviceToHost,
        ),
    ];
    let timed = mock.get("events_timed");
    let (done, enqueued) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let stream = &stream;
        s.spawn(move || {
            for (dst, src, direction) in copies {
                let op = StreamOp::Copy {
                    dst,
                    src,
                    size,
                    direction,
                };
                stream.enqueue("olMemcpy", op, None).unwrap();
            }
            done.send(()).unwrap();
        });
        let waited = enqueued.recv_timeout(Duration::from_secs(5));
        mock.release(); // let a blocked enqueue finish, whatever happened
        assert!(waited.is_ok(), "enqueueing the copies waited for the queue");
    });
    stream.synchronize().unwrap();
    assert!(output == input, "the data came back");
    assert_eq!(mock.get("pageable_syncs"), 0);
    // To the device each chunk waits for its buffer to be filled (3); to the host the
    // third chunk waits for its buffer to be drained of the first, and the queue's later
    // work for the destination to be written (2).
    assert_eq!(mock.get("waits_on_value"), 5);
    // The staging's own events only order work: CU_EVENT_DISABLE_TIMING.
    assert_eq!(
        mock.get("events_timed"),
        timed,
        "no timed event for staging"
    );
    assert!(mock.get("events_created") > 0);
    assert_eq!(mock.get("callback_thread_calls_driver"), 0);
    drop(stream);
    gpu.free(device, size, AllocKind::Device).unwrap();
}

/// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "usually indicates that the user has attempted to
/// pass too many arguments to the device kernel": a parameter buffer longer than the
/// kernel's parameter list is refused (seen on an H200 for LLVM's own unit test, a
/// 24-byte `{char; int *; short}` for 18 bytes of parameters). A C struct of the
/// parameters may end in such padding: only the list's bytes are passed.
#[test]
fn a_structs_trailing_padding_is_not_passed() {
    let Some(StandIn {
        mock, gpu, program, ..
    }) = open("padding")
    else {
        return;
    };
    let stream = gpu.create_stream().unwrap();
    let mut bytes = vec![0u8; 32];
    bytes[0] = 7;
    let launch = StreamOp::Launch {
        kernel: program.kernel("scale").unwrap(),
        config: LaunchConfig::new(1, [1; 3], [32, 1, 1], 0, false),
        args: KernelArgs::from_bytes(&bytes),
    };
    stream.enqueue("olLaunchKernel", launch, None).unwrap();
    stream.synchronize().unwrap();
    let passed = mock.last_args();
    assert_eq!(
        passed.len(),
        24,
        "the parameter list's 24 bytes, not the struct's 32"
    );
    assert_eq!(passed[0], 7);
}
