//! The C structures of LLVM's offloading ABI (`offload/include/omptarget.h` and
//! `Shared/APITypes.h`) as clang 19 and clang 22 lay them out, and the map-type flags.
//! The two compilers differ in the offload-entry layout only (see [`crate::abi::entries`]);
//! these structures are the same for both.

use std::ffi::c_void;

/// One device image: its bytes (`image_start..image_end`) and its entry table (in
/// either layout; this layer reads the host table only).
#[repr(C)]
#[derive(Debug)]
pub struct DeviceImage {
    pub image_start: *mut c_void,
    pub image_end: *mut c_void,
    pub entries_begin: *mut c_void,
    pub entries_end: *mut c_void,
}

/// What `__tgt_register_lib` receives: the images of one binary and its host entries.
/// The entry pointers are untyped because the layout is decided when the table is read.
#[repr(C)]
#[derive(Debug)]
pub struct BinDesc {
    pub num_device_images: i32,
    pub device_images: *mut DeviceImage,
    pub host_entries_begin: *mut c_void,
    pub host_entries_end: *mut c_void,
}

/// `KernelArgsTy`. Versions 1 to 3 share every field read here; clang 19 and clang 22
/// both write 3 (LLVM 22 added flag bits, not fields). See [`implicit_dyn_ptr`].
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

/// The newest `KernelArgsTy` version this layer knows (`OMP_KERNEL_ARG_VERSION`).
pub const KERNEL_ARGS_VERSION: u32 = 3;

/// Whether a region's outlined function takes the implicit first argument `dyn_ptr`:
/// from version 3 on it does (`OMP_KERNEL_ARG_MIN_VERSION_WITH_DYN_PTR`); 1 and 2
/// predate it. Any other version is refused rather than guessed at: a newer layout could
/// move the fields this layer reads.
pub fn implicit_dyn_ptr(version: u32) -> Result<bool, String> {
    match version {
        1 | 2 => Ok(false),
        KERNEL_ARGS_VERSION => Ok(true),
        _ => Err(format!(
            "kernel arguments of version {version} (KernelArgsTy) are not supported; \
             this libomptarget reads versions 1 to {KERNEL_ARGS_VERSION}"
        )),
    }
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
    /// clang 22: attach the pointer (base) to its pointee (begin) after the other maps.
    pub const ATTACH: i64 = 0x4000;
    /// `fb_nullify` (OpenMP 6.1): a failed `use_device_ptr` lookup gives NULL.
    pub const FB_NULLIFY: i64 = 0x8000;
    pub const NON_CONTIG: i64 = 0x1000_0000_0000;
    /// The 16 high bits: 1 + the index of the struct this entry is a member of.
    pub const MEMBER_OF: i64 = 0xffff_0000_0000_0000_u64 as i64;
}

/// `OMP_DECLARE_TARGET_*` and `OMP_REGISTER_REQUIRES`: what an offload entry is.
pub mod entry_flags {
    pub const LINK: u32 = 0x01;
    pub const CTOR: u32 = 0x02;
    pub const DTOR: u32 = 0x04;
    pub const INDIRECT: u32 = 0x08;
    /// Not a symbol: the program's `#pragma omp requires` flags, in the entry's data.
    pub const REGISTER_REQUIRES: u32 = 0x10;
}

/// `OMP_REQ_*`: what `#pragma omp requires` asks for.
pub mod requirements {
    pub const UNIFIED_SHARED_MEMORY: u64 = 0x008;
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

/// Reads the caller's parallel arrays into `MapArg`s. Arrays clang always passes (bases,
/// begins, sizes, types) must be there when there are arguments, and sizes must not be
/// negative: a broken argument list is refused with what was wrong, never dereferenced.
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
) -> Result<Vec<MapArg>, String> {
    let Ok(count) = usize::try_from(count) else {
        return Err(format!("a negative argument count ({count})"));
    };
    if count > 0 {
        let required = [
            ("base", bases.is_null()),
            ("begin", begins.is_null()),
            ("size", sizes.is_null()),
            ("type", types.is_null()),
        ];
        if let Some((which, _)) = required.iter().find(|(_, missing)| *missing) {
            return Err(format!(
                "{count} arguments but a NULL {which} array (expected one entry per argument)"
            ));
        }
    }
    let read_ptr = |a: *mut *mut c_void, i: usize| {
        if a.is_null() {
            0
        } else {
            // SAFETY: a non-NULL array holds `count` elements (the caller's promise).
            unsafe { *a.add(i) as usize }
        }
    };
    (0..count)
        .map(|i| {
            // SAFETY: the four arrays are non-NULL here and hold `count` elements.
            let (size, map_type) = unsafe { (*sizes.add(i), *types.add(i)) };
            let size = usize::try_from(size)
                .map_err(|_| format!("argument {i} has a negative size ({size} bytes)"))?;
            Ok(MapArg {
                base: read_ptr(bases, i),
                begin: read_ptr(begins, i),
                size,
                map_type,
                mapper: read_ptr(mappers, i),
                name: read_ptr(names, i),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    #[test]
    fn broken_argument_lists_are_refused() {
        let bases = [8usize as *mut c_void];
        let mut begins = [8usize as *mut c_void];
        let sizes = [4i64];
        let types = [map_type::TO];
        let read = |count, sizes: *const i64, begins: *mut *mut c_void| {
            // SAFETY: each non-NULL array holds one element.
            unsafe {
                map_args(
                    count,
                    bases.as_ptr().cast_mut(),
                    begins,
                    sizes,
                    types.as_ptr(),
                    null_mut(),
                    null_mut(),
                )
            }
        };
        assert_eq!(
            read(1, sizes.as_ptr(), begins.as_mut_ptr()).unwrap()[0].size,
            4
        );
        assert!(read(-3, sizes.as_ptr(), begins.as_mut_ptr())
            .unwrap_err()
            .contains("negative argument count"));
        assert!(read(1, std::ptr::null(), begins.as_mut_ptr())
            .unwrap_err()
            .contains("NULL size array"));
        assert!(read(1, sizes.as_ptr(), null_mut())
            .unwrap_err()
            .contains("NULL begin array"));
        let negative = [-1i64];
        assert!(read(1, negative.as_ptr(), begins.as_mut_ptr())
            .unwrap_err()
            .contains("negative size"));
        assert!(read(0, std::ptr::null(), null_mut()).unwrap().is_empty());
    }

    #[test]
    fn kernel_args_versions() {
        assert_eq!(implicit_dyn_ptr(3), Ok(true));
        assert_eq!(implicit_dyn_ptr(2), Ok(false));
        assert_eq!(implicit_dyn_ptr(1), Ok(false));
        for unknown in [0, 4, 99] {
            let e = implicit_dyn_ptr(unknown).unwrap_err();
            assert!(e.contains(&format!("version {unknown}")), "{e}");
        }
    }

    /// LLVM's static_assert: 8 x i32 + 3 x i64 + 4 x void** + 2 x i64*.
    #[test]
    fn kernel_args_size_is_llvms() {
        assert_eq!(
            std::mem::size_of::<KernelArgs>(),
            8 * 4 + 3 * 8 + 4 * 8 + 2 * 8
        );
    }
}
