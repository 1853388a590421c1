//! The AMDGPU platform where there may be no AMD GPU: without the HSA runtime, or where
//! `hsa_init` fails (no `/dev/kfd`, as on machines without the amdgpu kernel driver), the
//! platform is listed with zero devices, the reason is in the `OFFLOAD_TRACE=1` output,
//! nothing fails, and the host device works.

mod common;

use common::*;
use offload::capi::*;
use offload::plugins::amdgpu::{AmdgpuPlugin, LIBRARY};
use std::ffi::c_void;
use std::path::Path;
use std::process::Command;
use std::ptr::null_mut;

/// Set in the child processes of the trace tests.
const CHILD: &str = "OFFLOAD_TEST_AMDGPU_CHILD";

fn backend(p: ol_platform_handle_t) -> u32 {
    let mut b = 0u32;
    ok(olGetPlatformInfo(
        p,
        OL_PLATFORM_INFO_BACKEND,
        4,
        &mut b as *mut u32 as *mut c_void,
    ));
    b
}

/// The child: the platform exists, has no device, and the host device copies.
#[test]
fn without_hsa_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    ok(olInit());
    let amd: Vec<_> = platforms()
        .into_iter()
        .filter(|&p| backend(p) == OL_PLATFORM_BACKEND_AMDGPU)
        .collect();
    assert_eq!(amd.len(), 1, "the AMDGPU platform is listed");
    let host = devices()
        .into_iter()
        .find(|&d| device_info_u32(d, OL_DEVICE_INFO_TYPE) == OL_DEVICE_TYPE_HOST)
        .expect("the host device");
    for d in devices() {
        let mut p: ol_platform_handle_t = null_mut();
        ok(olGetDeviceInfo(
            d,
            OL_DEVICE_INFO_PLATFORM,
            std::mem::size_of::<ol_platform_handle_t>(),
            &mut p as *mut _ as *mut c_void,
        ));
        assert_ne!(p, amd[0], "no AMDGPU device");
    }
    let mut p: *mut c_void = null_mut();
    ok(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 64, &mut p));
    let src = [9u8; 64];
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

/// Runs the child with `library` as the HSA runtime; its trace's AMDGPU line.
fn child_trace(library: Option<&str>) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "without_hsa_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1")
    .env("OFFLOAD_TRACE", "1")
    .env_remove("OFFLOAD_PLATFORMS");
    match library {
        Some(l) => cmd.env(LIBRARY.env, l),
        None => cmd.env_remove(LIBRARY.env),
    };
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child test ran:\n{stdout}");
    stderr
        .lines()
        .find(|l| l.contains("AMDGPU: no devices:"))
        .unwrap_or_else(|| panic!("no reason in the trace:\n{stderr}"))
        .to_owned()
}

#[test]
fn a_missing_runtime_is_traced_and_the_host_works() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let missing = "/nonexistent/offload-test/libhsa-runtime64.so.1";
    let line = child_trace(Some(missing));
    assert!(line.contains(&format!("cannot open {missing}")), "{line}");
}

/// Where the runtime is installed but the machine has no AMD GPU driver (`/dev/kfd`),
/// `hsa_init` fails: that is the reason traced.
#[test]
fn a_failing_hsa_init_is_traced_and_the_host_works() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    if Path::new("/dev/kfd").exists() {
        eprintln!("skipped: /dev/kfd exists, hsa_init may succeed here");
        return;
    }
    if AmdgpuPlugin::new()
        .hsa()
        .is_err_and(|why| why.contains("cannot open"))
    {
        eprintln!("skipped: libhsa-runtime64.so.1 is not installed (libhsa-runtime64-1)");
        return;
    }
    let line = child_trace(None);
    assert!(line.contains("hsa_init failed"), "{line}");
}

/// A library of that name that is not a whole HSA runtime: the reason names what it
/// lacks, and there are no devices.
#[test]
fn an_incomplete_runtime_is_a_reason() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("offload-hsa-stub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("stub.c");
    std::fs::write(&source, "unsigned hsa_init(void) { return 0; }\n").unwrap();
    let library = dir.join("libhsa-runtime64.so.1");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&compiler)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no C compiler to build the stub library");
        return;
    }
    let plugin = AmdgpuPlugin::with_library(&library);
    let why = plugin.open_devices().err().expect("no devices from a stub");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(why.contains("does not export hsa_status_string"), "{why}");
    assert!(why.contains(&library.display().to_string()), "{why}");
}
