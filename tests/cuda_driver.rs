//! The CUDA platform where there may be no CUDA: the library and C API must work, with
//! the GPUs the driver reports (none on a machine without libcuda or a GPU) and the host
//! device, and a missing driver must be explained in the trace, not be an error.

mod common;
mod cuda_support;

use common::*;
use cuda_support::{build_mock_driver, Mock};
use offload::capi::*;
use offload::plugins::cuda::{CudaPlugin, LIBRARY};
use std::ffi::c_void;
use std::process::Command;
use std::ptr::null_mut;

/// Set in the child process of `a_missing_driver_is_traced`.
const CHILD: &str = "OFFLOAD_TEST_CUDA_CHILD";

fn platform_str(platform: ol_platform_handle_t, key: ol_platform_info_raw_t) -> String {
    let mut size = 0usize;
    ok(olGetPlatformInfoSize(platform, key, &mut size));
    let mut text = vec![0u8; size];
    ok(olGetPlatformInfo(
        platform,
        key,
        size,
        text.as_mut_ptr() as *mut c_void,
    ));
    String::from_utf8_lossy(&text[..size - 1]).into_owned()
}

#[test]
fn the_host_device_works_beside_the_cuda_platform() {
    if std::env::var_os(CHILD).is_some() {
        return; // the child process runs only `missing_driver_child`
    }
    // OFFLOAD_PLATFORMS may leave CUDA out (unset or empty: every platform).
    let cuda_chosen = std::env::var("OFFLOAD_PLATFORMS").map_or(true, |list| {
        list.trim().is_empty()
            || list
                .split(',')
                .any(|p| p.trim().eq_ignore_ascii_case("cuda"))
    });
    let gpus = if cuda_chosen {
        CudaPlugin::new().open_devices().map_or(0, |d| d.len())
    } else {
        0
    };

    ok(olInit());
    let all = devices();
    assert_eq!(
        all.len(),
        gpus + 1,
        "every GPU the driver reports, then the host"
    );
    let host = *all.last().unwrap();
    assert_eq!(
        device_info_u32(host, OL_DEVICE_INFO_TYPE),
        OL_DEVICE_TYPE_HOST
    );
    for &gpu in &all[..gpus] {
        assert_eq!(
            device_info_u32(gpu, OL_DEVICE_INFO_TYPE),
            OL_DEVICE_TYPE_GPU
        );
        assert_eq!(device_info_u32(gpu, OL_DEVICE_INFO_VENDOR_ID), 0x10de);
    }

    // The CUDA platform is listed even with no device, and says what it is.
    let cuda: Vec<_> = platforms()
        .into_iter()
        .filter(|&p| {
            let mut backend = 0u32;
            ok(olGetPlatformInfo(
                p,
                OL_PLATFORM_INFO_BACKEND,
                4,
                &mut backend as *mut u32 as *mut c_void,
            ));
            backend == OL_PLATFORM_BACKEND_CUDA
        })
        .collect();
    if cuda_chosen {
        assert_eq!(cuda.len(), 1);
        assert_eq!(platform_str(cuda[0], OL_PLATFORM_INFO_NAME), "CUDA");
        assert_eq!(
            platform_str(cuda[0], OL_PLATFORM_INFO_VENDOR_NAME),
            "NVIDIA Corporation"
        );
        assert!(!platform_str(cuda[0], OL_PLATFORM_INFO_VERSION).is_empty());
    } else {
        assert!(cuda.is_empty());
    }

    // The host device still allocates, copies and frees.
    let mut p: *mut c_void = null_mut();
    ok(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 64, &mut p));
    let src = [7u8; 64];
    ok(olMemcpy(
        null_mut(),
        p,
        host,
        src.as_ptr() as *const c_void,
        host,
        64,
    ));
    let mut back = [0u8; 64];
    ok(olMemcpy(
        null_mut(),
        back.as_mut_ptr() as *mut c_void,
        host,
        p,
        host,
        64,
    ));
    assert_eq!(back, src);
    ok(olMemFree(p));
    ok(olShutDown());
}

/// Run by `a_missing_driver_is_traced` in a child process with the driver pointed at a
/// file that does not exist; does nothing otherwise.
#[test]
fn missing_driver_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    ok(olInit());
    let all = devices();
    assert_eq!(all.len(), 1, "only the host device");
    assert_eq!(
        device_info_u32(all[0], OL_DEVICE_INFO_TYPE),
        OL_DEVICE_TYPE_HOST
    );
    ok(olShutDown());
}

#[test]
fn a_missing_driver_is_traced() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let missing = "/nonexistent/offload-test/libcuda.so.1";
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "missing_driver_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(LIBRARY.env, missing)
        .env("OFFLOAD_TRACE", "1")
        .env_remove("OFFLOAD_PLATFORMS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child test ran:\n{stdout}");
    let line = stderr
        .lines()
        .find(|l| l.contains("CUDA: no devices:"))
        .unwrap_or_else(|| panic!("no reason in the trace:\n{stderr}"));
    assert!(
        line.contains(&format!("cannot open {missing}")),
        "the reason names the library: {line}"
    );
}

// ---- The whole device path against a stand-in driver (cuda_support/) ----------------

#[test]
fn the_device_path_runs_against_a_mock_driver() {
    use offload::plugin::foundation::error::ErrorCode;
    use offload::plugin::{
        AllocKind, Device, DeviceInfo, InfoValue, KernelArgs, LaunchConfig, Plugin, SymbolKind,
    };

    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(path) = build_mock_driver("device") else {
        eprintln!("skipped: no C compiler to build the mock driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: the mock has no initialisers; the plugin opened the same file, so this is
    // the same loaded copy with the same state.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    assert_eq!(plugin.version(), "12.8");
    let devices = plugin.open_devices().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(
        mock.get("ctx_refs"),
        1,
        "the primary context is retained once"
    );
    let gpu = &devices[0];

    // Info: the driver's readings, converted.
    let info = |key| gpu.info(key).unwrap();
    assert_eq!(info(DeviceInfo::Name), InfoValue::Str("Mock GPU 0".into()));
    assert_eq!(
        info(DeviceInfo::Uid),
        InfoValue::Str("GPU-00112233-4455-6677-8899-aabbccddeeff".into()),
        "cuDeviceGetUuid_v2 is preferred"
    );
    assert_eq!(
        info(DeviceInfo::DriverVersion),
        InfoValue::Str("12.8".into())
    );
    assert_eq!(info(DeviceInfo::MaxClockFrequency), InfoValue::U32(1410));
    assert_eq!(info(DeviceInfo::MemoryClockRate), InfoValue::U32(1593));
    assert_eq!(info(DeviceInfo::NumComputeUnits), InfoValue::U32(108));
    assert_eq!(info(DeviceInfo::GlobalMemSize), InfoValue::U64(40 << 30));
    assert_eq!(
        info(DeviceInfo::WorkGroupLocalMemSize),
        InfoValue::U64(166912)
    );
    assert_eq!(
        info(DeviceInfo::MaxWorkGroupSizePerDimension),
        InfoValue::Dims([1024, 1024, 64])
    );
    assert_eq!(info(DeviceInfo::NumLanes), InfoValue::U32(32));

    // Memory of each kind, copies both ways, and fills of every planning path.
    for kind in AllocKind::ALL {
        let p = gpu.allocate(4096, kind).unwrap();
        assert_eq!(p % 64, 0);
        gpu.free(p, 4096, kind).unwrap();
    }
    assert_eq!(mock.get("live_allocs"), 0);
    let p = gpu.allocate(1 << 16, AllocKind::Device).unwrap();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
    gpu.copy_to_device(p, data.as_ptr() as usize, data.len())
        .unwrap();
    gpu.copy_within_device(p + 2000, p, data.len()).unwrap();
    let mut back = vec![0u8; data.len()];
    gpu.copy_from_device(back.as_mut_ptr() as usize, p + 2000, back.len())
        .unwrap();
    assert_eq!(back, data);
    let read = |at: usize, n: usize| {
        let mut out = vec![0u8; n];
        gpu.copy_from_device(out.as_mut_ptr() as usize, at, n)
            .unwrap();
        out
    };
    let repeated =
        |pattern: &[u8], n: usize| -> Vec<u8> { pattern.iter().copied().cycle().take(n).collect() };
    for (offset, pattern, size) in [
        (0usize, vec![0xABu8], 777usize),
        (2, vec![1, 2], 100),
        (4, vec![1, 2, 3, 4], 4000),
        (1, vec![1, 2, 3, 4], 41),
        (3, vec![9, 8, 7], 10_000),
        (0, vec![0; 8], 64),
        (5, (0..100).collect(), 30_001),
    ] {
        let before = (mock.get("d16"), mock.get("d32"));
        gpu.fill(p + offset, &pattern, size).unwrap();
        assert_eq!(
            read(p + offset, size),
            repeated(&pattern, size),
            "{pattern:?} x {size}"
        );
        if pattern.len() == 4 && offset % 4 == 0 {
            assert_eq!(
                mock.get("d32"),
                before.1 + 1,
                "an aligned 4-byte pattern is one cuMemsetD32"
            );
        }
        if pattern.len() == 2 {
            assert_eq!(mock.get("d16"), before.0 + 1);
        }
    }
    gpu.free(p, 1 << 16, AllocKind::Device).unwrap();

    // Host registration: pinned for every context, mapped, same address.
    let buffer = vec![0u8; 8192];
    let addr = buffer.as_ptr() as usize;
    assert_eq!(gpu.lock_host_memory(addr, buffer.len()).unwrap(), addr);
    assert_eq!(mock.get("register_flags"), 3, "PORTABLE | DEVICEMAP");
    gpu.unlock_host_memory(addr).unwrap();
    assert_eq!(
        gpu.unlock_host_memory(addr).unwrap_err().code,
        ErrorCode::InvalidArgument,
        "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"
    );

    // Images: the device is sm_80.
    let ptx = b".version 7.0\n.target sm_80\n.address_size 64\n\
                .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n";
    gpu.check_image(ptx).unwrap();
    let newer = String::from_utf8_lossy(ptx).replace("sm_80", "sm_90");
    let e = gpu.check_image(newer.as_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details.contains("CUDA device 0 (Mock GPU 0)"),
        "{}",
        e.details
    );

    let bad = String::from_utf8_lossy(ptx).replace("ret;", "syntax error");
    let Err(e) = gpu.load_program(bad.as_bytes()) else {
        panic!("bad PTX loaded");
    };
    assert_eq!(e.code, ErrorCode::InvalidBinary);
    assert!(
        e.details
            .contains("CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"),
        "{}",
        e.details
    );
    assert!(
        e.details
            .contains("JIT log: ptxas application ptx input, line 3; fatal : mock syntax error"),
        "{}",
        e.details
    );

    let cubin = offload::image::minimal_cubin(80, &["scale"]);
    drop(gpu.load_program(&cubin).unwrap());
    assert_eq!(
        mock.get("live_modules"),
        0,
        "a dropped program unloads its module"
    );

    // PTX without its NUL is terminated before the driver reads it.
    let program = gpu.load_program(ptx).unwrap();
    assert_eq!(program.symbol_kind("scale"), Some(SymbolKind::Kernel));
    assert_eq!(
        program.symbol_kind("counter"),
        Some(SymbolKind::GlobalVariable)
    );
    assert_eq!(program.symbol_kind("absent"), None);
    assert_eq!(
        program.kernel("counter").err().unwrap().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.global("scale").unwrap_err().code,
        ErrorCode::SymbolKind
    );
    assert_eq!(
        program.kernel("absent").err().unwrap().code,
        ErrorCode::NotFound
    );
    let counter = program.global("counter").unwrap();
    assert_eq!(counter.size, 4);
    let mut value = [0u8; 4];
    gpu.copy_from_device(value.as_mut_ptr() as usize, counter.address, 4)
        .unwrap();
    assert_eq!(i32::from_ne_bytes(value), 41);

    // Launches: the argument block arrives whole, through `extra`.
    let kernel = program.kernel("scale").unwrap();
    let x = 0x1234_5678_9abc_def0u64.to_ne_bytes();
    let a = 2.5f32.to_ne_bytes();
    let n = 1000u64.to_ne_bytes();
    let args = KernelArgs::from_values([(&x[..], 8), (&a[..], 4), (&n[..], 8)]);
    assert_eq!(args.len(), 24);
    assert_eq!(
        kernel
            .check_args(&KernelArgs::from_bytes(&args.bytes[..16]))
            .unwrap_err()
            .code,
        ErrorCode::InvalidArgument,
        "shorter than the parameters cuFuncGetParamInfo reports"
    );
    kernel.check_args(&args).unwrap();
    let mut config = LaunchConfig {
        dimensions: 2,
        num_groups: [4, 3, 9],
        group_size: [128, 2, 9],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    kernel.launch(&config, &args).unwrap();
    assert_eq!(mock.get("grid"), 4 * 10000 + 3 * 100 + 1, "x, y, then 1");
    assert_eq!(mock.get("block"), 128 * 10000 + 2 * 100 + 1);
    assert_eq!(mock.last_args(), &*args.bytes);
    assert_eq!(mock.get("last_cooperative"), 0);
    assert_eq!(mock.get("bad_extra"), 0);

    config.group_size = [1024, 1, 1];
    let e = kernel.launch(&config, &args).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.details.contains("at most 768"), "{}", e.details);
    config.group_size = [128, 2, 9];

    config.dyn_shared_memory = 64 << 10;
    kernel.launch(&config, &args).unwrap();
    assert_eq!(
        mock.get("dyn_allowed"),
        64 << 10,
        "raised past the 48 KiB default first"
    );
    assert_eq!(mock.get("last_shared"), 64 << 10);
    config.dyn_shared_memory = 1 << 20;
    assert!(
        kernel.launch(&config, &args).is_err(),
        "more than the device allows"
    );

    config.dyn_shared_memory = 0;
    config.cooperative = true;
    kernel.launch(&config, &args).unwrap();
    assert_eq!(
        mock.get("last_cooperative"),
        1,
        "cuLaunchKernelEx with the attribute"
    );
    assert_eq!(mock.last_args(), &*args.bytes);
    assert_eq!(
        kernel.max_cooperative_groups(&config).unwrap(),
        (2048 / 256) * 108
    );

    assert_eq!(kernel.optimal_group_size(0).unwrap(), 256);
    assert_eq!(
        mock.get("b2d"),
        -1,
        "no callback without per-item shared memory"
    );
    assert_eq!(kernel.optimal_group_size(4).unwrap(), 256);
    assert_eq!(mock.get("b2d"), 1024, "4 bytes for each of 256 threads");

    // A thread that had no context current keeps the device's after a call (as the CUDA
    // runtime leaves a primary context current), so later calls set nothing.
    assert_eq!(mock.get("current_is_primary"), 1);

    // Streams and events through the wrappers, in the device's context.
    let current = gpu.context().make_current().unwrap();
    let driver = gpu.driver();
    let stream = driver
        .stream_create(offload::plugins::cuda::ffi::STREAM_NON_BLOCKING)
        .unwrap();
    let event = driver.event_create(0).unwrap();
    mock.hold(stream.0);
    driver.event_record(event, stream).unwrap();
    assert!(
        !driver.event_query(event).unwrap(),
        "CUDA_ERROR_NOT_READY is 'not yet'"
    );
    mock.release();
    driver.event_synchronize(event).unwrap();
    assert!(driver.event_query(event).unwrap());
    assert_eq!(driver.event_elapsed_ms(event, event).unwrap(), 0.0);
    driver.event_destroy(event).unwrap();
    driver.stream_destroy(stream).unwrap();
    drop(current);

    drop(kernel);
    drop(program);
    assert_eq!(mock.get("live_modules"), 0);
    drop(devices);
    assert_eq!(mock.get("ctx_refs"), 0, "the primary context is released");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn streams_and_events_run_against_a_mock_driver() {
    use offload::plugin::foundation::error::{Error, ErrorCode};
    use offload::plugin::{
        AllocKind, CopyDirection, Device, KernelArgs, LaunchConfig, Plugin, StreamEvent, StreamOp,
    };
    use std::sync::Arc;

    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(path) = build_mock_driver("streams") else {
        eprintln!("skipped: no C compiler to build the mock driver");
        return;
    };
    let plugin = CudaPlugin::with_library(&path);
    // SAFETY: as in the test above: the same loaded copy of the mock.
    let mock = Mock {
        library: unsafe { libloading::Library::new(&path) }.unwrap(),
    };
    let gpu = plugin.open_devices().unwrap().remove(0);
    let stream = gpu.create_stream().unwrap();

    // A copy in, a fill of a 3-byte pattern (no native memset), a copy out.
    let p = gpu.allocate(4096, AllocKind::Device).unwrap();
    let input: Vec<u8> = (0..=255).cycle().take(4096).collect();
    let mut output = vec![0u8; 4096];
    let copy = |dst: usize, src: usize, direction| StreamOp::Copy {
        dst,
        src,
        size: 4096,
        direction,
    };
    stream
        .enqueue(
            "olMemcpy",
            copy(p, input.as_ptr() as usize, CopyDirection::HostToDevice),
            None,
        )
        .unwrap();
    stream
        .enqueue(
            "olMemFill",
            StreamOp::Fill {
                dst: p + 100,
                pattern: vec![7, 8, 9],
                size: 300,
            },
            None,
        )
        .unwrap();
    stream
        .enqueue(
            "olMemcpy",
            copy(output.as_mut_ptr() as usize, p, CopyDirection::DeviceToHost),
            None,
        )
        .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(&output[..100], &input[..100]);
    assert!(output[100..400].chunks(3).all(|c| c == [7, 8, 9]));
    assert_eq!(&output[400..], &input[400..]);

    // A launch passes the argument block through the stream's launch.
    let ptx = b".version 7.0\n.target sm_80\n.address_size 64\n\
                .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n";
    let program = gpu.load_program(ptx).unwrap();
    let x = 7u64.to_ne_bytes();
    let a = 0.5f32.to_ne_bytes();
    let n = 3u64.to_ne_bytes();
    let args = KernelArgs::from_values([(&x[..], 8), (&a[..], 4), (&n[..], 8)]);
    let config = LaunchConfig {
        dimensions: 1,
        num_groups: [2, 1, 1],
        group_size: [64, 1, 1],
        dyn_shared_memory: 0,
        cooperative: false,
    };
    stream
        .enqueue(
            "olLaunchKernel",
            StreamOp::Launch {
                kernel: program.kernel("scale").unwrap(),
                config,
                args: args.clone(),
            },
            None,
        )
        .unwrap();
    assert_eq!(mock.last_args(), &*args.bytes);

    // Events: timed by the driver; a stream waits on them; a host event is refused.
    let start = stream.record().unwrap();
    let end = stream.record().unwrap();
    assert!(start.elapsed_ms(end.as_ref()).unwrap() >= 0.0);
    stream.wait(&end).unwrap();
    let host_event = Plugin::devices(&offload::plugins::host::HostPlugin)
        .remove(0)
        .create_stream()
        .unwrap()
        .record()
        .unwrap();
    assert_eq!(
        stream.wait(&host_event).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
    let _: &Arc<dyn StreamEvent> = &start;

    // A host step's error (and a guard's) is reported, the stream stays usable.
    stream
        .enqueue(
            "olLaunchHostFunction",
            StreamOp::Host(Box::new(|| Err(Error::unknown("callback failed")))),
            None,
        )
        .unwrap();
    let e = stream.synchronize().unwrap_err();
    assert!(e.details.contains("olLaunchHostFunction") && e.details.contains("callback failed"));
    stream.synchronize().unwrap();
    let refused = stream.enqueue(
        "olMemcpy",
        copy(output.as_mut_ptr() as usize, p, CopyDirection::DeviceToHost),
        Some(Box::new(|| Err(Error::invalid_argument("freed meanwhile")))),
    );
    assert!(refused.unwrap_err().details.contains("freed meanwhile"));
    assert!(stream.is_idle().unwrap());
    drop(stream);
    gpu.free(p, 4096, AllocKind::Device).unwrap();
    drop(program);
    drop(gpu);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
