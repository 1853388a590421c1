//! `olMemAllocAt` on a CUDA device, through the whole C API against the stand-in driver:
//! the driver's virtual memory management (reserve at the address, create, map, set
//! access; unmap and give back at `olMemFree`), granules shared between neighbouring
//! placements, a range the driver will not give, kinds it cannot place, and a GPU
//! without virtual memory management. In a test binary of its own:
//! `OFFLOAD_CUDA_LIBRARY` is the process's.

mod common;
mod cuda_support;
mod stand_in_calls;

use common::*;
use cuda_support::driver_for_this_process;
use offload::capi::*;
use stand_in_calls::{call_list, reset_calls};
use std::ffi::c_void;
use std::ptr::null_mut;

const PTX: &[u8] = b".version 7.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scale(.param .u64 x, .param .f32 a, .param .u64 n)\n{\n\tret;\n}\n\0";
const GRANULE: usize = 2 << 20;

/// An address range of `len` bytes this process does not use, granule-aligned.
fn free_range(len: usize) -> usize {
    // SAFETY: a reservation made only to learn a free address, given back at once.
    unsafe {
        let p = libc::mmap(
            null_mut(),
            len + GRANULE,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        libc::munmap(p, len + GRANULE);
        (p as usize).next_multiple_of(GRANULE)
    }
}

fn alloc_at(device: ol_device_handle_t, kind: u32, size: usize, at: usize) -> ol_result_t {
    let mut got: *mut c_void = null_mut();
    let r = olMemAllocAt(device, kind, size, at as *mut c_void, &mut got);
    if r.is_null() {
        assert_eq!(got as usize, at, "placed where asked");
    }
    r
}

#[test]
fn device_memory_is_placed_through_virtual_memory_management() {
    let Some((_, mock)) = driver_for_this_process("placed") else {
        eprintln!("skipped: no C compiler to build the stand-in driver");
        return;
    };
    ok(olInit());
    let gpu = first_of(OL_DEVICE_TYPE_GPU);
    let host = first_of(OL_DEVICE_TYPE_HOST);
    let (program, kernel) = program_with_kernel(gpu, PTX, c"scale");

    // Not granule-aligned: the mapping covers the granule; the memory is where asked.
    let base = free_range(4 * GRANULE);
    let at = base + 0x40;
    let n = 750usize;
    reset_calls(&mock.library);
    ok(alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, n * 4, at));
    let vmm_calls: Vec<(String, i64)> = call_list(&mock.library)
        .into_iter()
        .filter(|(name, _)| name.starts_with("cuMem"))
        .collect();
    let expected = [
        "cuMemGetAllocationGranularity",
        "cuMemAddressReserve",
        "cuMemCreate",
        "cuMemMap",
        "cuMemRelease",
        "cuMemSetAccess",
    ];
    assert_eq!(
        vmm_calls,
        expected.map(|name| (name.to_string(), 1)).to_vec(),
        "one run: reserved at the address, created, mapped, set accessible"
    );
    assert_eq!(mock.get("live_reservations"), 1);
    assert_eq!(mock.get("live_mappings"), 1);
    assert_eq!(
        mock.get("live_vmm_handles"),
        0,
        "the handle is released once mapped (the mapping keeps the memory)"
    );

    // Copies and a kernel reach it.
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    ok(olMemcpy(
        null_mut(),
        at as *mut c_void,
        gpu,
        data.as_ptr().cast(),
        host,
        n * 4,
    ));
    #[repr(C)]
    struct Args {
        x: usize,
        a: f32,
        n: u64,
    }
    let args = Args {
        x: at,
        a: 2.0,
        n: n as u64,
    };
    ok(olLaunchKernel(
        null_mut(),
        gpu,
        kernel,
        (&args as *const Args).cast(),
        std::mem::size_of::<Args>(),
        &launch_args(3, 250),
    ));
    let mut back = vec![0f32; n];
    ok(olMemcpy(
        null_mut(),
        back.as_mut_ptr().cast(),
        host,
        at as *const c_void,
        gpu,
        n * 4,
    ));
    let doubled: Vec<f32> = data.iter().map(|x| x * 2.0).collect();
    assert_eq!(back, doubled);

    // A neighbour in the same granule shares its mapping; one reaching into the next
    // granule maps only that one.
    let neighbour = at + 0x10_0000;
    ok(alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, GRANULE, neighbour));
    assert_eq!(mock.get("live_mappings"), 2);
    // Inside a live allocation: refused before the driver is asked.
    let d = fails(
        alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, 64, at + 8),
        OL_ERRC_INVALID_VALUE,
    );
    assert!(d.contains("already lies there"), "{d}");
    ok(olMemFree(at as *mut c_void));
    assert_eq!(
        mock.get("live_mappings"),
        2,
        "the neighbour still uses both"
    );
    ok(olMemFree(neighbour as *mut c_void));
    assert_eq!(mock.get("live_mappings"), 0);
    assert_eq!(mock.get("live_reservations"), 0);

    // A range the driver gives to something else (here: this process's own memory).
    let mine = vec![0u8; 3 * GRANULE];
    let taken = (mine.as_ptr() as usize).next_multiple_of(GRANULE);
    let d = fails(
        alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, 4096, taken),
        OL_ERRC_INVALID_VALUE,
    );
    assert!(d.contains("taken on the device"), "{d}");
    assert_eq!(
        mock.get("live_reservations"),
        0,
        "the other range given back"
    );

    // More than the device has: the driver's refusal, the reservation given back.
    let huge = free_range(64 << 30);
    let d = fails(
        alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, 48 << 30, huge),
        OL_ERRC_OUT_OF_RESOURCES,
    );
    assert!(d.contains("cuMemCreate"), "{d}");
    assert_eq!(mock.get("live_reservations"), 0);

    // Only device memory is placed.
    let d = fails(
        alloc_at(gpu, OL_ALLOC_TYPE_HOST, 4096, base),
        OL_ERRC_UNSUPPORTED,
    );
    assert!(d.contains("only device memory"), "{d}");

    // A GPU without virtual memory management says so.
    mock.call(b"mock_set_vmm", 0i64);
    let d = fails(
        alloc_at(gpu, OL_ALLOC_TYPE_DEVICE, 4096, base),
        OL_ERRC_UNSUPPORTED,
    );
    assert!(d.contains("virtual memory management"), "{d}");
    mock.call(b"mock_set_vmm", 1i64);

    ok(olDestroyProgram(program));
    ok(olShutDown());
    assert_eq!(mock.get("live_mappings"), 0);
    assert_eq!(mock.get("live_vmm_handles"), 0);
}
