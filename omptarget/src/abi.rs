//! The C structures of LLVM 19's offloading ABI (`offload/include/omptarget.h` and
//! `Shared/APITypes.h`), as clang 19 lays them out, and the map-type flags.

use std::ffi::{c_char, c_void};

/// One offload entry: a target region (`size == 0`; on the host side `addr` is the
/// region's ID, the `HostPtr` `__tgt_target_kernel` receives) or a global variable.
#[repr(C)]
#[derive(Debug)]
pub struct OffloadEntry {
    pub addr: *mut c_void,
    pub name: *const c_char,
    pub size: usize,
    pub flags: i32,
    pub reserved: i32,
}

/// One device image: its bytes (`image_start..image_end`) and its entry table.
#[repr(C)]
#[derive(Debug)]
pub struct DeviceImage {
    pub image_start: *mut c_void,
    pub image_end: *mut c_void,
    pub entries_begin: *mut OffloadEntry,
    pub entries_end: *mut OffloadEntry,
}

/// What `__tgt_register_lib` receives: the images of one binary and its host entries.
#[repr(C)]
#[derive(Debug)]
pub struct BinDesc {
    pub num_device_images: i32,
    pub device_images: *mut DeviceImage,
    pub host_entries_begin: *mut OffloadEntry,
    pub host_entries_end: *mut OffloadEntry,
}

/// `KernelArgsTy` (versions 2 and 3 share every field read here; clang 19 writes 3).
#[repr(C)]
#[derive(Debug)]
pub struct KernelArgs {
    pub version: u32,
    pub num_args: u32,
    pub arg_base_ptrs: *mut *mut c_void,
    pub arg_ptrs: *mut *mut c_void,
    pub arg_sizes: *mut i64,
    pub arg_types: *mut i64,
    pub arg_names: *mut *mut c_void,
    pub arg_mappers: *mut *mut c_void,
    pub tripcount: u64,
    pub flags: u64,
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    pub dyn_cgroup_mem: u32,
}

/// `OMP_TGT_MAPTYPE_*`.
pub mod map_type {
    pub const TO: i64 = 0x01;
    pub const FROM: i64 = 0x02;
    pub const ALWAYS: i64 = 0x04;
    pub const DELETE: i64 = 0x08;
    pub const PTR_AND_OBJ: i64 = 0x10;
    pub const TARGET_PARAM: i64 = 0x20;
    pub const RETURN_PARAM: i64 = 0x40;
    pub const PRIVATE: i64 = 0x80;
    pub const LITERAL: i64 = 0x100;
    pub const IMPLICIT: i64 = 0x200;
    pub const CLOSE: i64 = 0x400;
    pub const PRESENT: i64 = 0x1000;
    pub const OMPX_HOLD: i64 = 0x2000;
    pub const NON_CONTIG: i64 = 0x1000_0000_0000;
    /// The 16 high bits: 1 + the index of the struct this entry is a member of.
    pub const MEMBER_OF: i64 = 0xffff_0000_0000_0000_u64 as i64;
}

/// `OMP_DECLARE_TARGET_*` and `OMP_REGISTER_REQUIRES`: what an offload entry is.
pub mod entry_flags {
    pub const LINK: i32 = 0x01;
    pub const CTOR: i32 = 0x02;
    pub const DTOR: i32 = 0x04;
    pub const INDIRECT: i32 = 0x08;
    /// Not a symbol: the program's `#pragma omp requires` flags, in the entry's data.
    pub const REGISTER_REQUIRES: i32 = 0x10;
}

/// `OMP_REQ_*`: what `#pragma omp requires` asks for.
pub mod requirements {
    pub const UNIFIED_SHARED_MEMORY: i64 = 0x008;
}

/// LLVM's return values: `OFFLOAD_SUCCESS` / `OFFLOAD_FAIL` (also `OMP_TGT_SUCCESS/FAIL`).
pub const OFFLOAD_SUCCESS: i32 = 0;
pub const OFFLOAD_FAIL: i32 = !0;

/// One argument of a mapper call, as the caller's parallel arrays describe it.
#[derive(Clone, Copy, Debug)]
pub struct MapArg {
    pub base: usize,
    pub begin: usize,
    pub size: usize,
    pub map_type: i64,
    /// The `declare mapper` function expanding this argument (0: none).
    pub mapper: usize,
    /// The argument's name record (LLVM's `map_var_info_t`; 0: none).
    pub name: usize,
}

impl MapArg {
    /// The index of the struct entry this one is a member of (`MEMBER_OF` holds it + 1).
    pub fn parent_index(&self) -> Option<usize> {
        let field = (self.map_type as u64) >> 48;
        (field != 0).then(|| field as usize - 1)
    }

    pub fn has(&self, flag: i64) -> bool {
        self.map_type & flag != 0
    }
}

/// One dimension of a non-contiguous `target update` (`__tgt_target_non_contig`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NonContiguousDim {
    pub offset: u64,
    pub count: u64,
    pub stride: u64,
}

/// Reads the caller's parallel arrays into `MapArg`s.
///
/// # Safety
/// Each non-NULL array must hold `count` elements (LLVM's contract for these calls).
pub unsafe fn map_args(
    count: i32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *const i64,
    types: *const i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
) -> Vec<MapArg> {
    let count = usize::try_from(count).unwrap_or(0);
    (0..count)
        .map(|i| {
            // SAFETY: the caller promises `count` elements in each non-NULL array.
            unsafe {
                let read_ptr = |a: *mut *mut c_void| {
                    if a.is_null() {
                        0
                    } else {
                        *a.add(i) as usize
                    }
                };
                MapArg {
                    base: read_ptr(bases),
                    begin: read_ptr(begins),
                    size: if sizes.is_null() {
                        0
                    } else {
                        usize::try_from(*sizes.add(i)).unwrap_or(0)
                    },
                    map_type: if types.is_null() { 0 } else { *types.add(i) },
                    mapper: read_ptr(mappers),
                    name: read_ptr(names),
                }
            }
        })
        .collect()
}
