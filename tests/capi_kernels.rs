//! Programs, symbols and kernel launches through the C API, driven from Rust.

mod common;
mod host_support;

use host_support::SaxpyArgs;

use common::*;
use offload::capi::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// `T`'s bytes as `olLaunchKernel` takes them.
fn buffer<T>(args: &T) -> (*const c_void, usize) {
    (args as *const T as *const c_void, std::mem::size_of::<T>())
}

/// A synchronous launch with the argument struct `args`.
fn launch_now<T>(
    device: ol_device_handle_t,
    kernel: ol_symbol_handle_t,
    grid: &ol_kernel_launch_size_args_t,
    args: &T,
) -> ol_result_t {
    let (data, size) = buffer(args);
    olLaunchKernel(null_mut(), device, kernel, data, size, grid)
}

#[test]
fn kernels_through_the_c_api() {
    ok(olInit());
    let device = host_device();
    let image = host_support::host_abi();

    let mut valid = false;
    ok(olIsValidBinary(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut valid,
    ));
    assert!(valid);
    let junk = b"definitely not an image";
    ok(olIsValidBinary(
        device,
        junk.as_ptr() as *const c_void,
        junk.len(),
        &mut valid,
    ));
    assert!(!valid);
    let mut program = null_mut();
    let d = fails(
        olCreateProgram(
            device,
            junk.as_ptr() as *const c_void,
            junk.len(),
            &mut program,
        ),
        OL_ERRC_INVALID_BINARY,
    );
    assert!(d.contains("unrecognised image"), "{d}");
    // An empty image is LLVM's INVALID_BINARY.
    fails(
        olCreateProgram(device, image.as_ptr() as *const c_void, 0, &mut program),
        OL_ERRC_INVALID_BINARY,
    );
    fails(
        olCreateProgram(device, image.as_ptr() as *const c_void, 40, &mut program),
        OL_ERRC_INVALID_BINARY,
    );
    ok(olCreateProgram(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut program,
    ));

    // saxpy, synchronous and on a queue.
    let mut kernel = null_mut();
    ok(olGetSymbol(
        program,
        c"saxpy".as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut kernel,
    ));
    let n = 1 << 16;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; n];
    let a = 2.0f32;
    let saxpy = SaxpyArgs {
        a,
        x: x.as_ptr(),
        y: y.as_mut_ptr(),
        n,
    };
    let (saxpy_data, saxpy_size) = buffer(&saxpy);
    let grid = launch_args((n / 256) as u32, 256);
    ok(launch_now(device, kernel, &grid, &saxpy));
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0));
    let mut q = null_mut();
    ok(olCreateQueue(device, &mut q));
    ok(olLaunchKernel(
        q, device, kernel, saxpy_data, saxpy_size, &grid,
    ));
    ok(olSyncQueue(q));
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 4.0 * i as f32 + 1.0));

    // A global written by a kernel, read back through olMemcpy.
    let mut bump = null_mut();
    ok(olGetSymbol(
        program,
        c"bump".as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut bump,
    ));
    let mut counter = null_mut();
    ok(olGetSymbol(
        program,
        c"counter".as_ptr(),
        OL_SYMBOL_KIND_GLOBAL_VARIABLE,
        &mut counter,
    ));
    let mut addr: *mut c_void = null_mut();
    ok(olGetSymbolInfo(
        counter,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
        8,
        &mut addr as *mut _ as *mut c_void,
    ));
    let mut size = 0usize;
    ok(olGetSymbolInfo(
        counter,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE,
        8,
        &mut size as *mut usize as *mut c_void,
    ));
    assert_eq!(size, 8);
    let delta = 5i32; // struct bump_args { int delta; }
    let (bump_data, bump_size) = buffer(&delta);
    ok(olLaunchKernel(
        q,
        device,
        bump,
        bump_data,
        bump_size,
        &launch_args(1, 1),
    ));
    ok(olSyncQueue(q));
    let mut value = 0i64;
    ok(olMemcpy(
        null_mut(),
        &mut value as *mut i64 as *mut c_void,
        device,
        addr,
        device,
        8,
    ));
    assert_eq!(value, 105);

    // Bad input.
    fails(
        olGetSymbolInfo(
            kernel,
            OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE,
            8,
            &mut size as *mut usize as *mut c_void,
        ),
        OL_ERRC_SYMBOL_KIND,
    );
    fails(
        olGetSymbol(
            program,
            c"counter".as_ptr(),
            OL_SYMBOL_KIND_KERNEL,
            &mut kernel,
        ),
        OL_ERRC_SYMBOL_KIND,
    );
    fails(
        olGetSymbol(
            program,
            c"nope".as_ptr(),
            OL_SYMBOL_KIND_KERNEL,
            &mut kernel,
        ),
        OL_ERRC_NOT_FOUND,
    );
    fails(
        olGetSymbol(program, c"saxpy".as_ptr(), 5, &mut kernel),
        OL_ERRC_INVALID_ENUMERATION,
    );
    fails(
        launch_now(device, counter, &grid, &saxpy),
        OL_ERRC_SYMBOL_KIND,
    );
    ok(olGetSymbol(
        program,
        c"saxpy".as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut kernel,
    ));
    // An argument buffer of another size than the kernel's struct, and a NULL one.
    fails(
        olLaunchKernel(null_mut(), device, kernel, saxpy_data, 24, &grid),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(null_mut(), device, kernel, null(), saxpy_size, &grid),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(null_mut(), device, kernel, null(), 0, &grid),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(
            null_mut(),
            device,
            kernel,
            saxpy_data,
            saxpy_size,
            &launch_args(0, 256),
        ),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(
            null_mut(),
            device,
            kernel,
            saxpy_data,
            saxpy_size,
            &launch_args(1, 0),
        ),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(
            null_mut(),
            device,
            kernel,
            saxpy_data,
            saxpy_size,
            &launch_args(1, 4096),
        ),
        OL_ERRC_INVALID_ARGUMENT,
    );
    let mut zero_dims = grid;
    zero_dims.Dimensions = 0;
    fails(
        launch_now(device, kernel, &zero_dims, &saxpy),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        olLaunchKernel(null_mut(), device, kernel, saxpy_data, saxpy_size, null()),
        OL_ERRC_INVALID_NULL_POINTER,
    );
    let yes = true;
    let props = [
        ol_kernel_launch_prop_t {
            r#type: 9,
            data: &yes as *const bool as *mut c_void,
        },
        ol_kernel_launch_prop_t {
            r#type: OL_KERNEL_LAUNCH_PROP_TYPE_NONE,
            data: null_mut(),
        },
    ];
    fails(
        olLaunchKernelWithProperties(
            null_mut(),
            device,
            kernel,
            saxpy_data,
            saxpy_size,
            &grid,
            props.as_ptr(),
        ),
        OL_ERRC_INVALID_ENUMERATION,
    );
    let mut group = 0usize;
    ok(olCalculateOptimalOccupancy(device, kernel, 0, &mut group));
    assert!(group >= 1);
    let mut max = 0u32;
    ok(olGetKernelMaxCooperativeGroupCount(
        device,
        kernel,
        &launch_args(1, 64),
        &mut max,
    ));
    assert!(max >= 1);

    // Destroying a program with a launch in flight: the launch finishes, then it unloads.
    let mut slow = null_mut();
    ok(olLaunchHostFunction(q, Some(pause), null_mut()));
    ok(olLaunchKernel(
        q,
        device,
        bump,
        bump_data,
        bump_size,
        &launch_args(1, 1),
    ));
    ok(olDestroyProgram(program));
    ok(olSyncQueue(q));
    // The last launch is done and nothing else holds the program (this thread's cached
    // symbols included): it is unloaded.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(
        !maps.contains("memfd:liboffload"),
        "the destroyed program is still mapped"
    );
    fails(
        olGetSymbol(program, c"saxpy".as_ptr(), OL_SYMBOL_KIND_KERNEL, &mut slow),
        OL_ERRC_INVALID_ARGUMENT,
    );
    fails(
        launch_now(device, kernel, &grid, &saxpy),
        OL_ERRC_INVALID_ARGUMENT,
    );
    ok(olDestroyQueue(q));
    ok(olShutDown());
}

unsafe extern "C" fn pause(_: *mut c_void) {
    std::thread::sleep(std::time::Duration::from_millis(20));
}
