//! The Common, Platforms/devices and Memory sections of the C API, driven from Rust.
//! One test function: the library's init state is process-wide.

mod common;

use common::*;
use offload::capi::*;
use std::ffi::c_void;
use std::ptr::null_mut;

#[test]
fn memory_and_devices_through_the_c_api() {
    // Before olInit, everything but olInit is UNINITIALIZED.
    let mut p: *mut c_void = null_mut();
    fails(
        olMemAlloc(0x10 as _, OL_ALLOC_TYPE_HOST, 8, &mut p),
        OL_ERRC_UNINITIALIZED,
    );
    fails(olShutDown(), OL_ERRC_UNINITIALIZED);
    fails(olIteratePlatforms(None, null_mut()), OL_ERRC_UNINITIALIZED);
    fails(olIterateDevices(None, null_mut()), OL_ERRC_UNINITIALIZED);
    let (mut a, mut b, mut c) = (0, 0, 0);
    fails(olGetVersion(&mut a, &mut b, &mut c), OL_ERRC_UNINITIALIZED);

    ok(olInit());
    ok(olGetVersion(&mut a, &mut b, &mut c));
    assert_eq!((a, b, c), (0, 2, 0));
    let device = host_device();

    // Device info: real readings, size rules.
    assert!(device_info_u32(device, OL_DEVICE_INFO_NUM_COMPUTE_UNITS) >= 1);
    assert_eq!(device_info_u32(device, OL_DEVICE_INFO_ADDRESS_BITS), 64);
    assert_eq!(
        device_info_u32(device, OL_DEVICE_INFO_TYPE),
        OL_DEVICE_TYPE_HOST
    );
    let mut size = 0usize;
    ok(olGetDeviceInfoSize(device, OL_DEVICE_INFO_NAME, &mut size));
    let mut name = vec![0xAAu8; size + 4];
    fails(
        olGetDeviceInfo(
            device,
            OL_DEVICE_INFO_NAME,
            size - 1,
            name.as_mut_ptr() as *mut c_void,
        ),
        OL_ERRC_INVALID_SIZE,
    );
    assert!(
        name.iter().all(|&b| b == 0xAA),
        "nothing written on INVALID_SIZE"
    );
    ok(olGetDeviceInfo(
        device,
        OL_DEVICE_INFO_NAME,
        size,
        name.as_mut_ptr() as *mut c_void,
    ));
    assert_eq!(name[size - 1], 0);
    assert!(name[..size - 1].iter().all(|&b| b != 0));
    fails(
        olGetDeviceInfo(device, 999, 4, name.as_mut_ptr() as *mut c_void),
        OL_ERRC_INVALID_ENUMERATION,
    );
    fails(
        olGetDeviceInfo(
            null_mut(),
            OL_DEVICE_INFO_NAME,
            4,
            name.as_mut_ptr() as *mut c_void,
        ),
        OL_ERRC_INVALID_NULL_HANDLE,
    );
    let mut garbage = 0u64;
    fails(
        olGetDeviceInfo(
            &mut garbage as *mut u64 as ol_device_handle_t,
            OL_DEVICE_INFO_NAME,
            4,
            name.as_mut_ptr() as *mut c_void,
        ),
        OL_ERRC_INVALID_DEVICE,
    );

    // Allocation, fill, copy, query, free.
    fails(
        olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 0, &mut p),
        OL_ERRC_INVALID_SIZE,
    );
    fails(
        olMemAlloc(device, 7, 16, &mut p),
        OL_ERRC_INVALID_ENUMERATION,
    );
    fails(
        olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 16, null_mut()),
        OL_ERRC_INVALID_NULL_POINTER,
    );
    ok(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 1000, &mut p));
    assert_eq!(p as usize % 64, 0);
    let pattern = [1u8, 2, 3, 4];
    ok(olMemFill(
        null_mut(),
        p,
        4,
        pattern.as_ptr() as *const c_void,
        1000,
    ));
    fails(
        olMemFill(null_mut(), p, 3, pattern.as_ptr() as *const c_void, 1000),
        OL_ERRC_INVALID_SIZE,
    );
    let mut back = vec![0u8; 1000];
    ok(olMemcpy(
        null_mut(),
        back.as_mut_ptr() as *mut c_void,
        device,
        p,
        device,
        1000,
    ));
    assert!(back.chunks(4).all(|c| c == pattern));
    fails(
        olMemcpy(
            null_mut(),
            back.as_mut_ptr() as *mut c_void,
            device,
            p,
            device,
            1001,
        ),
        OL_ERRC_INVALID_SIZE,
    );

    let interior = (p as usize + 100) as *const c_void;
    let mut base: *mut c_void = null_mut();
    ok(olGetMemInfo(
        interior,
        OL_MEM_INFO_BASE,
        8,
        &mut base as *mut _ as *mut c_void,
    ));
    assert_eq!(base, p);
    let mut len = 0usize;
    ok(olGetMemInfo(
        interior,
        OL_MEM_INFO_SIZE,
        8,
        &mut len as *mut usize as *mut c_void,
    ));
    assert_eq!(len, 1000);
    let mut kind = 9u32;
    ok(olGetMemInfo(
        interior,
        OL_MEM_INFO_TYPE,
        4,
        &mut kind as *mut u32 as *mut c_void,
    ));
    assert_eq!(kind, OL_ALLOC_TYPE_DEVICE);
    let mut owner: ol_device_handle_t = null_mut();
    ok(olGetMemInfo(
        interior,
        OL_MEM_INFO_DEVICE,
        8,
        &mut owner as *mut _ as *mut c_void,
    ));
    assert_eq!(owner, device);

    // LLVM's code for an address olMemFree cannot free: interior, or freed already.
    fails(olMemFree(interior as *mut c_void), OL_ERRC_INVALID_ARGUMENT);
    // olMemAllocAt (our extension): its argument checks, an address inside a live
    // allocation, and the host device, whose memory is the process's own (a caller maps
    // it itself).
    let mut at: *mut c_void = null_mut();
    fails(
        olMemAllocAt(device, OL_ALLOC_TYPE_DEVICE, 0, p, &mut at),
        OL_ERRC_INVALID_SIZE,
    );
    fails(
        olMemAllocAt(device, OL_ALLOC_TYPE_DEVICE, 64, null_mut(), &mut at),
        OL_ERRC_INVALID_NULL_POINTER,
    );
    fails(
        olMemAllocAt(device, 77, 64, 0x7000_0000 as *mut c_void, &mut at),
        OL_ERRC_INVALID_ENUMERATION,
    );
    fails(
        olMemAllocAt(
            device,
            OL_ALLOC_TYPE_DEVICE,
            64,
            interior as *mut c_void,
            &mut at,
        ),
        OL_ERRC_INVALID_VALUE,
    );
    fails(
        olMemAllocAt(
            device,
            OL_ALLOC_TYPE_DEVICE,
            64,
            0x7000_0000 as *mut c_void,
            &mut at,
        ),
        OL_ERRC_UNSUPPORTED,
    );
    assert!(at.is_null(), "nothing written on a failure");
    ok(olMemFree(p));
    fails(olMemFree(p), OL_ERRC_INVALID_ARGUMENT);
    fails(
        olGetMemInfo(p, OL_MEM_INFO_BASE, 8, &mut base as *mut _ as *mut c_void),
        OL_ERRC_NOT_FOUND,
    );

    // Registration: nesting counts, partial overlap is refused.
    let mut host = vec![0u8; 4096];
    let h = host.as_mut_ptr() as *mut c_void;
    let mut pinned: *mut c_void = null_mut();
    ok(olMemRegister(device, h, 4096, 0, &mut pinned));
    assert_eq!(pinned, h);
    let inner = (h as usize + 64) as *mut c_void;
    let mut pinned_inner: *mut c_void = null_mut();
    ok(olMemRegister(device, inner, 64, 0, &mut pinned_inner));
    fails(
        olMemRegister(
            device,
            (h as usize + 4000) as *mut c_void,
            200,
            0,
            &mut pinned_inner,
        ),
        OL_ERRC_INVALID_ARGUMENT,
    );
    // Flags are reserved and, as in LLVM, ignored.
    ok(olMemRegister(device, h, 16, 4, &mut pinned_inner));
    ok(olMemUnregister(device, pinned_inner));
    ok(olMemUnregister(device, inner));
    ok(olMemUnregister(device, pinned));
    fails(olMemUnregister(device, pinned), OL_ERRC_INVALID_ARGUMENT);

    // Reference counting and stale handles.
    ok(olInit());
    ok(olShutDown());
    ok(olGetVersion(&mut a, &mut b, &mut c));
    ok(olShutDown());
    fails(olShutDown(), OL_ERRC_UNINITIALIZED);
    ok(olInit());
    let fresh = host_device();
    if fresh != device {
        fails(
            olMemAlloc(device, OL_ALLOC_TYPE_HOST, 8, &mut p),
            OL_ERRC_INVALID_DEVICE,
        );
    }
    ok(olShutDown());
    fails(
        olMemAlloc(fresh, OL_ALLOC_TYPE_HOST, 8, &mut p),
        OL_ERRC_UNINITIALIZED,
    );
}
