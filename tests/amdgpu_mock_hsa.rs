//! The AMDGPU backend's whole device path against a mock HSA runtime
//! (`tests/amdgpu_support/mock_hsa.c`, built at test time): agents and pools, info,
//! memory, synchronous copies and fills, every copy plan of a stream (direct, staged in
//! and out, locked, host to host), fills, host functions and their errors, completion
//! actions releasing staging memory, program loading and symbols, and a GPU memory fault
//! reported by the next synchronize; events, cross-stream waits (barrier-AND packets)
//! and launches (dispatch packets with their kernarg segments).

mod stand_in_build;

use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::{
    launch_now, AllocKind, CopyDirection, Device, DeviceInfo, InfoValue, KernelArgs, LaunchConfig,
    Plugin, StreamOp, SymbolKind,
};
use offload::plugins::amdgpu::AmdgpuPlugin;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn build_mock() -> Option<PathBuf> {
    stand_in_build::build_stand_in(
        "amdgpu_support/mock_hsa.c",
        "libhsa-runtime64.so.1",
        "mock-hsa",
    )
}

struct Mock(libloading::Library);

impl Mock {
    fn get(&self, key: &str) -> i64 {
        let key = std::ffi::CString::new(key).unwrap();
        // SAFETY: `long long mock_get(const char *)` in mock_hsa.c.
        unsafe {
            let f = self
                .0
                .get::<unsafe extern "C" fn(*const std::ffi::c_char) -> i64>(b"mock_get")
                .unwrap();
            f(key.as_ptr())
        }
    }

    fn raise_fault(&self, address: u64, reasons: u32) {
        // SAFETY: `void mock_raise_fault(uint64_t, uint32_t)` in mock_hsa.c.
        unsafe {
            let f = self
                .0
                .get::<unsafe extern "C" fn(u64, u32)>(b"mock_raise_fault")
                .unwrap();
            f(address, reasons)
        }
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let root = env!("CARGO_MANIFEST_DIR");
    std::fs::read(format!("{root}/tests/fixtures/images/{name}")).unwrap()
}

fn host_op(
    work: impl FnOnce() -> offload::plugin::foundation::error::Result<()> + Send + 'static,
) -> StreamOp {
    StreamOp::Host(Box::new(work))
}

fn copy(dst: usize, src: usize, size: usize, direction: CopyDirection) -> StreamOp {
    StreamOp::Copy {
        dst,
        src,
        size,
        direction,
    }
}

#[test]
fn the_device_path_runs_against_a_mock_runtime() {
    let Some(path) = build_mock() else {
        eprintln!("skipped: no C compiler to build the mock HSA runtime");
        return;
    };
    let plugin = AmdgpuPlugin::with_library(&path);
    // SAFETY: the mock has no initialisers; this is the copy the plugin opened.
    let mock = Mock(unsafe { libloading::Library::new(&path) }.unwrap());
    assert_eq!(plugin.version(), "1.1");
    let devices = plugin.open_devices().unwrap();
    assert_eq!(
        devices.len(),
        1,
        "one GPU agent; the CPU agent is not a device"
    );
    let gpu = &devices[0];

    // Info from the agent and its pools.
    let info = |key| gpu.info(key).unwrap();
    assert_eq!(info(DeviceInfo::Name), InfoValue::Str("gfx1030".into()));
    assert_eq!(
        info(DeviceInfo::ProductName),
        InfoValue::Str("Mock Radeon".into())
    );
    assert_eq!(
        info(DeviceInfo::Uid),
        InfoValue::Str("GPU-feedfacecafebeef".into())
    );
    assert_eq!(
        info(DeviceInfo::DriverVersion),
        InfoValue::Str("HSA 1.1".into())
    );
    assert_eq!(info(DeviceInfo::NumLanes), InfoValue::U32(32));
    assert_eq!(info(DeviceInfo::NumComputeUnits), InfoValue::U32(36));
    assert_eq!(info(DeviceInfo::MaxClockFrequency), InfoValue::U32(2450));
    assert_eq!(info(DeviceInfo::GlobalMemSize), InfoValue::U64(16 << 30));
    assert_eq!(
        info(DeviceInfo::WorkGroupLocalMemSize),
        InfoValue::U64(65536)
    );
    assert_eq!(
        info(DeviceInfo::MaxWorkGroupSizePerDimension),
        InfoValue::Dims([1024; 3])
    );
    let baseline = mock.get("live_allocs");

    // Memory of each kind, and a refusal that says what and how much.
    let dev = gpu.allocate(4096, AllocKind::Device).unwrap();
    let pinned = gpu.allocate(4096, AllocKind::Host).unwrap();
    let managed = gpu.allocate(64, AllocKind::Managed).unwrap();
    assert_eq!(dev % 64, 0);
    let e = gpu.allocate(32 << 30, AllocKind::Device).unwrap_err();
    assert_eq!(e.code, ErrorCode::OutOfResources);
    assert!(e.details.contains("at most"), "{}", e.details);

    // Synchronous copies and fills (word fills go to the runtime, others are staged).
    let src: Vec<u8> = (0..=255).cycle().take(4096).collect();
    gpu.copy_to_device(dev, src.as_ptr() as usize, 4096)
        .unwrap();
    let mut back = vec![0u8; 4096];
    gpu.copy_from_device(back.as_mut_ptr() as usize, dev, 4096)
        .unwrap();
    assert_eq!(back, src);
    let fills = mock.get("fills");
    gpu.fill(dev, &[0xab], 4096).unwrap();
    assert_eq!(
        mock.get("fills"),
        fills + 1,
        "a byte pattern over whole words"
    );
    gpu.fill(dev + 1, &[1, 2, 3], 9).unwrap();
    gpu.copy_from_device(back.as_mut_ptr() as usize, dev, 16)
        .unwrap();
    assert_eq!(&back[..12], &[0xab, 1, 2, 3, 1, 2, 3, 1, 2, 3, 0xab, 0xab]);
    assert_eq!(
        mock.get("live_allocs"),
        baseline + 4,
        "the fill's staging goes back to the device's cache, not to the pool"
    );
    gpu.fill(dev + 1, &[1, 2, 3], 9).unwrap();
    assert_eq!(
        mock.get("live_allocs"),
        baseline + 4,
        "the next fill of that size takes the cached staging buffer"
    );

    // A stream: every copy plan, in order, then a host function that sees the results.
    let stream = gpu.create_stream().unwrap();
    let pageable: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let large: Vec<u8> = (0..(2usize << 20)).map(|i| (i / 3) as u8).collect();
    let large_dev = gpu.allocate(large.len(), AllocKind::Device).unwrap();
    let mut out = vec![0u8; 4096];
    let mut large_out = vec![0u8; large.len()];
    let mut host_copy = vec![0u8; 4096];
    let locks = mock.get("locks");
    let ops = vec![
        copy(
            dev,
            pageable.as_ptr() as usize,
            4096,
            CopyDirection::HostToDevice,
        ), // staged in
        copy(pinned, dev, 4096, CopyDirection::DeviceToHost), // direct
        copy(managed, pinned, 64, CopyDirection::HostToHost), // host step
        copy(
            large_dev,
            large.as_ptr() as usize,
            large.len(),
            CopyDirection::HostToDevice,
        ), // locked
        copy(
            large_out.as_mut_ptr() as usize,
            large_dev,
            large.len(),
            CopyDirection::DeviceToHost,
        ),
        copy(dev + 4096 - 64, dev, 64, CopyDirection::DeviceToDevice),
        copy(
            out.as_mut_ptr() as usize,
            dev,
            4096,
            CopyDirection::DeviceToHost,
        ), // staged out
        copy(
            host_copy.as_mut_ptr() as usize,
            pinned,
            4096,
            CopyDirection::DeviceToHost,
        ),
        StreamOp::Fill {
            dst: pinned,
            pattern: vec![9, 8],
            size: 8,
        },
        StreamOp::Fill {
            dst: pinned + 8,
            pattern: vec![7, 6, 5],
            size: 5,
        },
    ];
    for op in ops {
        stream.enqueue("olMemcpy", op, None).unwrap();
    }
    let ran = Arc::new(AtomicBool::new(false));
    let seen = ran.clone();
    let pinned_addr = pinned;
    stream
        .enqueue(
            "olLaunchHostFunction",
            host_op(move || {
                // SAFETY: 13 bytes of the pinned allocation, filled just before.
                let head = unsafe { std::slice::from_raw_parts(pinned_addr as *const u8, 13) };
                assert_eq!(head, &[9, 8, 9, 8, 9, 8, 9, 8, 7, 6, 5, 7, 6]);
                seen.store(true, Ordering::SeqCst);
                Ok(())
            }),
            None,
        )
        .unwrap();
    stream.synchronize().unwrap();
    assert!(stream.is_idle().unwrap());
    assert!(ran.load(Ordering::SeqCst), "the host function ran in order");
    let mut expected = pageable.clone();
    expected[4096 - 64..].copy_from_slice(&pageable[..64]);
    assert_eq!(out, expected, "copies ran in stream order");
    assert_eq!(
        &host_copy[..],
        &pageable[..],
        "device to pinned host, then pinned to pageable"
    );
    assert_eq!(large_out, large);
    // SAFETY: 64 bytes of managed memory, written by the host step.
    assert_eq!(
        unsafe { std::slice::from_raw_parts(managed as *const u8, 64) },
        &pageable[..64]
    );
    assert_eq!(
        mock.get("locks"),
        locks + 2,
        "the 2 MiB copies lock, the small ones stage"
    );
    assert_eq!(
        mock.get("bad_copies"),
        0,
        "no async copy touched pageable memory"
    );
    // The staging buffers went back to the device's cache when their copies completed:
    // the same staged copies again, one at a time, allocate nothing.
    let kept = mock.get("live_allocs");
    for _ in 0..3 {
        for op in [
            copy(
                dev,
                pageable.as_ptr() as usize,
                4096,
                CopyDirection::HostToDevice,
            ),
            copy(
                out.as_mut_ptr() as usize,
                dev,
                4096,
                CopyDirection::DeviceToHost,
            ),
            StreamOp::Fill {
                dst: pinned,
                pattern: vec![9, 8],
                size: 8,
            },
        ] {
            stream.enqueue("olMemcpy", op, None).unwrap();
            stream.synchronize().unwrap();
        }
    }
    assert_eq!(
        mock.get("live_allocs"),
        kept,
        "staging buffers were released when their copies completed, and reused"
    );

    // A failing host function: reported once by the next synchronize, with its name.
    stream
        .enqueue(
            "olLaunchHostFunction",
            host_op(|| {
                Err(offload::plugin::foundation::error::Error::invalid_value(
                    "bad value",
                ))
            }),
            None,
        )
        .unwrap();
    let e = stream.synchronize().unwrap_err();
    assert!(
        e.details
            .contains("asynchronous olLaunchHostFunction failed"),
        "{}",
        e.details
    );
    assert!(e.details.contains("bad value"), "{}", e.details);
    stream.synchronize().unwrap();

    // Programs: the image is checked against the GPU first; kernels and globals by name.
    let e = gpu
        .check_image(&fixture("amdgpu_gfx90a_xnack_on.co"))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details.contains("gfx1030") && e.details.contains("gfx90a"),
        "{}",
        e.details
    );
    let image = fixture("amdgpu_gfx1030.co");
    gpu.check_image(&image).unwrap();
    let program = gpu.load_program(&image).unwrap();
    assert_eq!(program.symbol_kind("vector_add"), Some(SymbolKind::Kernel));
    assert_eq!(
        program.symbol_kind("counter"),
        Some(SymbolKind::GlobalVariable)
    );
    assert_eq!(program.symbol_kind("nothing"), None);
    let kernel = program.kernel("vector_add").unwrap();
    assert_eq!(kernel.name(), "vector_add");
    kernel
        .check_args(&KernelArgs::from_bytes(&[0; 32]))
        .unwrap();
    let e = kernel
        .check_args(&KernelArgs::from_bytes(&[0; 8]))
        .unwrap_err();
    assert!(
        e.details.contains("takes 28 bytes") && e.details.contains("gave 8"),
        "{}",
        e.details
    );
    let counter = program.global("counter").unwrap();
    assert_eq!(counter.size, 4);
    // SAFETY: the mock's `int mock_counter`, whose address the symbol gave.
    assert_eq!(unsafe { *(counter.address as *const i32) }, 7);
    assert_eq!(
        program.kernel("counter").err().unwrap().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.global("vector_add").err().unwrap().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.kernel("nope").err().unwrap().code,
        ErrorCode::NotFound
    );
    assert!(gpu.load_program(b"\x7fELF not really").is_err());

    // A group larger than the kernel was compiled for is refused at once.
    let too_big = LaunchConfig {
        dimensions: 1,
        num_groups: [1, 1, 1],
        group_size: [512, 1, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    let launch = StreamOp::Launch {
        kernel: kernel.clone(),
        config: too_big,
        args: KernelArgs::from_bytes(&[0; 28]),
    };
    let e = stream.enqueue("olLaunchKernel", launch, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(
        e.details.contains("512") && e.details.contains("at most 256"),
        "{}",
        e.details
    );

    with_packets(gpu, &mock, kernel, dev);

    // A memory fault: the next synchronize says where and why, instead of hanging, and
    // the queue takes nothing more.
    let faulting = gpu.create_stream().unwrap();
    let release = Arc::new(AtomicBool::new(false));
    let hold = release.clone();
    faulting
        .enqueue(
            "olLaunchHostFunction",
            host_op(move || {
                while !hold.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                Ok(())
            }),
            None,
        )
        .unwrap();
    mock.raise_fault(0xdead_b000, 1);
    let e = faulting.synchronize().unwrap_err();
    assert_eq!(e.code, ErrorCode::BackendFailure);
    assert!(
        e.details
            .contains("GPU memory access fault at address 0xdeadb000: page not present"),
        "{}",
        e.details
    );
    let later = faulting.enqueue(
        "olMemcpy",
        copy(dev, pinned, 8, CopyDirection::HostToDevice),
        None,
    );
    assert!(later.is_err(), "a stopped queue takes no more work");
    release.store(true, Ordering::SeqCst);

    drop((stream, faulting, program));
    for (addr, size, kind) in [
        (dev, 4096, AllocKind::Device),
        (pinned, 4096, AllocKind::Host),
        (managed, 64, AllocKind::Managed),
        (large_dev, large.len(), AllocKind::Device),
    ] {
        gpu.free(addr, size, kind).unwrap();
    }
}

/// Events, a wait across streams, timing and a launch: what needs the packet encoders.
fn with_packets(
    gpu: &dyn Device,
    mock: &Mock,
    kernel: Arc<dyn offload::plugin::Kernel>,
    scratch: usize,
) {
    let a = gpu.create_stream().unwrap();
    let b = gpu.create_stream().unwrap();
    let start = a.record().unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let hold = gate.clone();
    a.enqueue(
        "olLaunchHostFunction",
        host_op(move || {
            while !hold.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            Ok(())
        }),
        None,
    )
    .unwrap();
    let end = a.record().unwrap();
    assert!(!end.is_complete().unwrap());
    b.wait(&end).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    b.enqueue(
        "olLaunchHostFunction",
        host_op(move || {
            set.store(true, Ordering::SeqCst);
            Ok(())
        }),
        None,
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(!flag.load(Ordering::SeqCst), "b waits for a's event");
    gate.store(true, Ordering::SeqCst);
    b.synchronize().unwrap();
    assert!(flag.load(Ordering::SeqCst));
    end.synchronize().unwrap();
    assert!(
        start.elapsed_ms(end.as_ref()).unwrap() >= 40.0,
        "the gate held a for 50 ms"
    );

    // A wait on another backend's event (a host queue's) is a barrier packet on a signal
    // that a thread of the runtime's completes: no host step holds HSA's handler thread.
    let host = Plugin::devices(&offload::plugins::host::HostPlugin)
        .remove(0)
        .create_stream()
        .unwrap();
    let open = Arc::new(AtomicBool::new(false));
    let held = open.clone();
    host.enqueue(
        "olLaunchHostFunction",
        host_op(move || {
            while !held.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            Ok(())
        }),
        None,
    )
    .unwrap();
    let host_event = host.record().unwrap();
    let barriers = mock.get("barriers");
    a.wait_foreign(host_event).unwrap();
    let after = a.record().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let held_back = after.is_complete();
    open.store(true, Ordering::SeqCst); // before any assertion: a failure must not hang
    assert!(!held_back.unwrap(), "held by the host queue");
    after.synchronize().unwrap();
    a.synchronize().unwrap();
    assert!(
        mock.get("barriers") >= barriers + 2,
        "the gate's barrier and the event's"
    );

    // vector_add over 8 floats, in pool memory the mock's kernel reads on the host.
    let n = 8usize;
    let (x, y, z) = (scratch, scratch + 64, scratch + 128);
    for i in 0..n {
        // SAFETY: mock device memory is host memory; 3 x 8 floats fit in 4096 bytes.
        unsafe {
            *(x as *mut f32).add(i) = i as f32;
            *(y as *mut f32).add(i) = 10.0;
        }
    }
    let args = KernelArgs::from_values([
        (&(x as u64).to_ne_bytes()[..], 8),
        (&(y as u64).to_ne_bytes()[..], 8),
        (&(z as u64).to_ne_bytes()[..], 8),
        (&(n as i32).to_ne_bytes()[..], 4),
    ]);
    let dispatches = mock.get("dispatches");
    let config = LaunchConfig {
        dimensions: 1,
        num_groups: [1, 1, 1],
        group_size: [n as u32, 1, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    a.enqueue(
        "olLaunchKernel",
        StreamOp::Launch {
            kernel: kernel.clone(),
            config,
            args: args.clone(),
        },
        None,
    )
    .unwrap();
    a.synchronize().unwrap();
    launch_now(gpu, &kernel, &config, &args).unwrap();
    assert_eq!(mock.get("dispatches"), dispatches + 2);
    for i in 0..n {
        // SAFETY: as above.
        assert_eq!(unsafe { *(z as *const f32).add(i) }, i as f32 + 10.0);
    }
}
