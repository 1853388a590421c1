//! `OFFLOAD_PROFILE=file`: every queue operation lands in a Chrome trace written at the
//! last `olShutDown`, with its category, its details and device-side times in order.
//! One test in its own binary: the variable is read once per process.

mod common;
mod host_support;

use host_support::SaxpyArgs;

use common::*;
use offload::capi::*;
use std::ffi::c_void;
use std::ptr::null_mut;

unsafe extern "C" fn nothing(_: *mut c_void) {}

/// The value of `"key":` in a trace line, as text.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim_matches('"'))
}

#[test]
fn queue_operations_are_written_as_a_chrome_trace() {
    let path = std::env::temp_dir().join(format!("offload-profile-{}.json", std::process::id()));
    std::env::set_var("OFFLOAD_PROFILE", &path);
    ok(olInit());
    let device = host_device();
    let image = host_support::host_abi();
    let mut program = null_mut();
    ok(olCreateProgram(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut program,
    ));
    let mut saxpy = null_mut();
    ok(olGetSymbol(
        program,
        c"saxpy".as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut saxpy,
    ));
    let (mut a, mut b) = (null_mut(), null_mut());
    ok(olCreateQueue(device, &mut a));
    ok(olCreateQueue(device, &mut b));

    let n = 1 << 16;
    let x = vec![1.0f32; n];
    let mut y = vec![0.0f32; n];
    let mut staged = vec![0.0f32; n];
    ok(olMemcpy(
        a,
        staged.as_mut_ptr() as *mut c_void,
        device,
        x.as_ptr() as *const c_void,
        device,
        n * 4,
    ));
    let args = SaxpyArgs {
        a: 2.0,
        x: staged.as_ptr(),
        y: y.as_mut_ptr(),
        n,
    };
    let grid = launch_args((n / 256) as u32, 256);
    ok(olLaunchKernel(
        a,
        device,
        saxpy,
        &args as *const SaxpyArgs as *const c_void,
        std::mem::size_of::<SaxpyArgs>(),
        &grid,
    ));
    let mut done = null_mut();
    ok(olCreateEvent(a, &mut done));
    let mut events = [done];
    ok(olWaitEvents(b, events.as_mut_ptr(), 1));
    ok(olLaunchHostFunction(b, Some(nothing), null_mut()));
    let pattern = 0u32;
    ok(olMemFill(
        b,
        y.as_mut_ptr() as *mut c_void,
        4,
        &pattern as *const u32 as *const c_void,
        64,
    ));
    ok(olSyncQueue(b));
    ok(olDestroyEvent(done));
    ok(olDestroyQueue(a));
    ok(olDestroyQueue(b));
    ok(olDestroyProgram(program));
    ok(olShutDown());

    let trace = std::fs::read_to_string(&path).expect("the trace is written at olShutDown");
    let _ = std::fs::remove_file(&path);
    assert!(
        trace.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["),
        "{trace}"
    );
    assert!(trace.trim_end().ends_with("]}"), "{trace}");
    assert_eq!(trace.matches('{').count(), trace.matches('}').count());
    let slices: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("\"ph\":\"X\""))
        .collect();
    let find = |cat: &str| {
        slices
            .iter()
            .copied()
            .find(|l| field(l, "cat") == Some(cat))
            .unwrap_or_else(|| panic!("no {cat} slice in {trace}"))
    };
    let copy = find("copy");
    assert_eq!(field(copy, "bytes"), Some("262144"));
    let kernel = find("kernel");
    assert_eq!(field(kernel, "name"), Some("saxpy"));
    assert!(kernel.contains("\"groups\":\"[256, 1, 1]\""), "{kernel}");
    find("wait");
    find("host function");
    assert_eq!(field(find("fill"), "bytes"), Some("64"));
    // Device-side times: the kernel starts after the copy before it ends, on one queue.
    let t = |l: &str, k: &str| field(l, k).unwrap().parse::<f64>().unwrap();
    assert!(
        t(kernel, "ts") >= t(copy, "ts") + t(copy, "dur") - 1.0,
        "{copy}\n{kernel}"
    );
    assert!(t(kernel, "dur") > 0.0);
    assert_eq!(field(copy, "tid"), field(kernel, "tid"));
    assert_ne!(field(kernel, "tid"), field(find("host function"), "tid"));
}
