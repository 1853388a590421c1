//! olIsValidBinary and olCreateProgram on the host device, for every image fixture: host
//! images load plain and wrapped in an OffloadBinary; every foreign image is refused with
//! OL_ERRC_INVALID_BINARY and a reason naming what it is.

mod common;

use common::*;
use offload::capi::*;
use std::ffi::c_void;
use std::ptr::null_mut;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/images/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn is_valid(device: ol_device_handle_t, image: &[u8]) -> bool {
    let mut valid = false;
    ok(olIsValidBinary(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut valid,
    ));
    valid
}

/// Loads `image`, reads its global `counter` through olMemcpy, destroys it.
fn counter_of(device: ol_device_handle_t, image: &[u8]) -> i32 {
    let mut program = null_mut();
    ok(olCreateProgram(
        device,
        image.as_ptr() as *const c_void,
        image.len(),
        &mut program,
    ));
    let mut symbol = null_mut();
    ok(olGetSymbol(
        program,
        c"counter".as_ptr(),
        OL_SYMBOL_KIND_GLOBAL_VARIABLE,
        &mut symbol,
    ));
    let mut addr: *mut c_void = null_mut();
    ok(olGetSymbolInfo(
        symbol,
        OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
        8,
        &mut addr as *mut _ as *mut c_void,
    ));
    let mut value = 0i32;
    ok(olMemcpy(
        null_mut(),
        &mut value as *mut i32 as *mut c_void,
        device,
        addr,
        device,
        4,
    ));
    let mut kernel = null_mut();
    ok(olGetSymbol(
        program,
        c"vector_add".as_ptr(),
        OL_SYMBOL_KIND_KERNEL,
        &mut kernel,
    ));
    ok(olDestroyProgram(program));
    value
}

#[cfg(target_arch = "x86_64")]
#[test]
fn host_device_accepts_host_images_and_names_foreign_ones() {
    ok(olInit());
    let device = host_device();

    let plain = fixture("host_x86_64.so");
    assert!(is_valid(device, &plain));
    assert_eq!(counter_of(device, &plain), 7);
    let wrapped = fixture("multi.offload");
    assert!(
        is_valid(device, &wrapped),
        "the OffloadBinary holds an x86_64 shared object"
    );
    assert_eq!(counter_of(device, &wrapped), 7);

    for (name, says) in [
        ("amdgpu_gfx1030.co", "AMDGPU code object for gfx1030"),
        ("amdgpu_gfx90a_xnack_on.co", "AMDGPU code object for gfx90a"),
        ("cuda_sm_80.ptx", "PTX"),
        ("host_aarch64.so", "aarch64 shared object"),
        ("host_lib.bc", "JIT-free"),
        ("host_x86_64.o", "relocatable object"),
        ("omp_x86_64.offload", "OffloadBinary"),
    ] {
        let image = fixture(name);
        assert!(
            !is_valid(device, &image),
            "{name} is not loadable on the host"
        );
        let mut program = null_mut();
        let details = fails(
            olCreateProgram(
                device,
                image.as_ptr() as *const c_void,
                image.len(),
                &mut program,
            ),
            OL_ERRC_INVALID_BINARY,
        );
        assert!(details.contains(says), "{name}: {details}");
        if name != "host_lib.bc" {
            // Bitcode is refused for any device: its reason is the library's, not a mismatch.
            assert!(
                details.contains("host"),
                "{name} names the device: {details}"
            );
        }
    }

    // Every truncation of a host image is refused or loads; none crashes.
    for len in (1..plain.len()).step_by(97) {
        let mut program = null_mut();
        let r = olCreateProgram(device, plain.as_ptr() as *const c_void, len, &mut program);
        if r.is_null() {
            ok(olDestroyProgram(program));
        }
    }
    ok(olShutDown());
}
