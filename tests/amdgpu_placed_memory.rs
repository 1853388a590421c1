//! Memory placed at an address on an AMD GPU (`olMemAllocAt`'s backend half), against
//! the stand-in HSA runtime: ROCm 6.0's virtual memory management (reserve at the
//! address, create from the GPU's pool, map, give the GPU access; unmap and give back),
//! pages shared between neighbouring placements, a range the runtime will not give, a
//! kind it cannot place, and a ROCm 5 runtime without these entry points.

mod stand_in_build;

use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::{AllocKind, Device};
use offload::plugins::amdgpu::AmdgpuPlugin;
use stand_in_build::build_stand_in_with;

const PAGE: usize = 4096;

fn mock_counter(library: &libloading::Library, key: &str) -> i64 {
    let key = std::ffi::CString::new(key).unwrap();
    // SAFETY: `long long mock_get(const char *)` in mock_hsa.c.
    unsafe {
        let f = library
            .get::<unsafe extern "C" fn(*const std::ffi::c_char) -> i64>(b"mock_get")
            .unwrap();
        f(key.as_ptr())
    }
}

/// An address range of `len` bytes this process does not use.
fn free_range(len: usize) -> usize {
    // SAFETY: a reservation made only to learn a free address, given back at once.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        libc::munmap(p, len);
        p as usize
    }
}

#[test]
fn device_memory_is_placed_through_rocm_virtual_memory_management() {
    let Some(path) = build_stand_in_with(
        "amdgpu_support/mock_hsa.c",
        "libhsa-runtime64.so.1",
        "mock-hsa-vmem",
        &[],
    ) else {
        eprintln!("skipped: no C compiler to build the stand-in HSA runtime");
        return;
    };
    let plugin = AmdgpuPlugin::with_library(&path);
    // SAFETY: the stand-in has no initialisers; this is the copy the plugin opened.
    let mock = unsafe { libloading::Library::new(&path) }.unwrap();
    let count = |key| mock_counter(&mock, key);
    let devices = plugin.open_devices().unwrap();
    let gpu = &devices[0];

    let base = free_range(16 * PAGE);
    let at = base + PAGE + 0x40;
    assert_eq!(gpu.allocate_at(at, 3000, AllocKind::Device).unwrap(), at);
    assert_eq!(count("live_reservations"), 1);
    assert_eq!(count("live_mappings"), 1);
    assert_eq!(
        count("live_vmem_handles"),
        0,
        "the handle is released once mapped"
    );
    // The GPU reaches it (copies check that their memory is the runtime's).
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 13) as u8).collect();
    gpu.copy_to_device(at, data.as_ptr() as usize, data.len())
        .unwrap();
    let mut back = vec![0u8; data.len()];
    gpu.copy_from_device(back.as_mut_ptr() as usize, at, back.len())
        .unwrap();
    assert_eq!(back, data);

    // A neighbour sharing the page shares the mapping; its next page is mapped alone.
    let neighbour = at + 3000;
    assert_eq!(
        gpu.allocate_at(neighbour, 2000, AllocKind::Device).unwrap(),
        neighbour
    );
    assert_eq!(count("live_mappings"), 2);
    gpu.free_placed(at, 3000, AllocKind::Device).unwrap();
    assert_eq!(count("live_mappings"), 2, "the neighbour uses both pages");
    gpu.free_placed(neighbour, 2000, AllocKind::Device).unwrap();
    assert_eq!(count("live_mappings"), 0);
    assert_eq!(count("live_reservations"), 0);

    // A range in use: the runtime offers another, which is refused and given back.
    let mine = vec![0u8; 4 * PAGE];
    let taken = (mine.as_ptr() as usize).next_multiple_of(PAGE);
    let e = gpu.allocate_at(taken, 100, AllocKind::Device).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidValue);
    assert!(e.details.contains("taken on the device"), "{}", e.details);
    assert_eq!(count("live_reservations"), 0);

    let e = gpu.allocate_at(base, 100, AllocKind::Host).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.details.contains("only device memory"), "{}", e.details);
}

#[test]
fn a_rocm5_runtime_says_placement_needs_rocm6() {
    let Some(path) = build_stand_in_with(
        "amdgpu_support/mock_hsa.c",
        "libhsa-runtime64.so.1",
        "mock-hsa-novmem",
        &["MOCK_NO_VMEM"],
    ) else {
        eprintln!("skipped: no C compiler to build the stand-in HSA runtime");
        return;
    };
    let plugin = AmdgpuPlugin::with_library(&path);
    let devices = plugin.open_devices().unwrap();
    let e = devices[0]
        .allocate_at(free_range(PAGE), 100, AllocKind::Device)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.details.contains("ROCm 6.0"), "{}", e.details);
    // Memory the usual way still works there.
    let p = devices[0].allocate(4096, AllocKind::Device).unwrap();
    devices[0].free(p, 4096, AllocKind::Device).unwrap();
}
