//! The host entry table of a registered binary, in either of the layouts clang writes:
//! clang 19's `__tgt_offload_entry` (32 bytes, section `omp_offloading_entries`) and
//! clang 22's (56 bytes, section `llvm_offload_entries`, LLVM's `offloading::EntryTy`).
//!
//! The layout is decided per descriptor from the table itself, as LLVM 22 does: LLVM 22's
//! entries start with 8 reserved bytes that are always zero, where LLVM 19's start with
//! the entry's address, never NULL for a region (its ID) or a global. Deciding from the
//! data rather than from the library's name means both outputs (`libomptarget.so.19.1`
//! and `.so.22.1`) are one implementation, and a binary works with either.

use crate::abi::types::entry_flags::REGISTER_REQUIRES;
use std::ffi::{c_char, c_void, CStr};

/// clang 19's entry.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EntryV19 {
    pub address: *mut c_void,
    pub name: *const c_char,
    pub size: usize,
    pub flags: i32,
    pub data: i32,
}

/// clang 22's entry (`Version` 1).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EntryV22 {
    pub reserved: u64,
    pub version: u16,
    pub kind: u16,
    pub flags: u32,
    pub address: *mut c_void,
    pub symbol_name: *const c_char,
    pub size: u64,
    pub data: u64,
    pub aux_address: *mut c_void,
}

/// The reserved word of the entry LLVM 22's `llvm-omp-kernel-replay` registers (of kind
/// 0): read as an OpenMP entry, so that the tool replays on this library.
pub const REPLAY_TOOL_RESERVED: u64 = 0xFFFF_FFFF;

/// The only `EntryV22::version` there is so far.
pub const ENTRY_VERSION: u16 = 1;
/// `object::OffloadKind::OFK_OpenMP`: entries of other kinds (CUDA, HIP, SYCL) in the
/// same section belong to another runtime's registration.
pub const KIND_OPENMP: u16 = 1;

/// One entry to bind: a target region (`size == 0`; `host_address` is the region ID
/// `__tgt_target_kernel` receives) or a global (`declare target` variable, `link`
/// reference, `indirect` function), bound by the same name on the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub host_address: usize,
    pub name: String,
    /// The name's C string in the binary (LIBOMPTARGET_INFO names globals by it).
    pub name_address: usize,
    pub size: usize,
    /// `OMP_DECLARE_TARGET_*`: link, indirect, ...
    pub flags: u32,
}

/// What a binary's entry table holds: the entries to bind and the `requires` flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub entries: Vec<Entry>,
    /// `OMP_REQ_*` from the requires entries.
    pub requirements: u64,
    /// Each requires entry's flags, in table order (checked one by one, as LLVM does).
    pub requires: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Llvm19,
    Llvm22,
}

/// The layout of the `len`-byte table whose first 8 bytes read `first_word`.
pub fn layout(first_word: u64, len: usize) -> Result<Layout, String> {
    // LLVM 22's `llvm-omp-kernel-replay` writes its one entry in LLVM 22's layout with
    // `REPLAY_TOOL_RESERVED` in the reserved word: a table that only that layout divides.
    let replay_tool = first_word == REPLAY_TOOL_RESERVED
        && len % std::mem::size_of::<EntryV19>() != 0
        && len % std::mem::size_of::<EntryV22>() == 0;
    let (layout, size) = if first_word == 0 || replay_tool {
        (Layout::Llvm22, std::mem::size_of::<EntryV22>())
    } else {
        (Layout::Llvm19, std::mem::size_of::<EntryV19>())
    };
    if len % size != 0 {
        return Err(format!(
            "the offload entry table ({len} bytes) is no whole number of {layout:?} entries ({size} bytes each)"
        ));
    }
    Ok(layout)
}

/// A C string of the binary as an owned name (`None` for NULL).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn name_of(name: *const c_char) -> Option<String> {
    // SAFETY: the caller's promise.
    (!name.is_null()).then(|| {
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    })
}

/// Reads the table `begin..end` (empty when either is NULL).
///
/// # Safety
/// `begin..end` is clang's entry table, in one of the two layouts, with NUL-terminated
/// names, readable for the duration of the call.
pub unsafe fn read(begin: *const c_void, end: *const c_void) -> Result<Table, String> {
    if begin.is_null() || end.is_null() || end <= begin {
        return Ok(Table::default());
    }
    let len = end as usize - begin as usize;
    if len < 8 {
        return Err(format!("the offload entry table is only {len} bytes"));
    }
    // SAFETY: at least 8 bytes of the table; entries are pointer-aligned.
    let first_word = unsafe { *begin.cast::<u64>() };
    match layout(first_word, len)? {
        Layout::Llvm19 => {
            let count = len / std::mem::size_of::<EntryV19>();
            // SAFETY: the caller's table, `count` whole entries of this layout.
            let table = unsafe { std::slice::from_raw_parts(begin.cast::<EntryV19>(), count) };
            let mut found = Table::default();
            for e in table {
                if e.flags as u32 == REGISTER_REQUIRES {
                    found.requirements |= e.data as u32 as u64;
                    found.requires.push(e.data as u32 as u64);
                    continue;
                }
                // SAFETY: names in the table are C strings.
                if let Some(name) = unsafe { name_of(e.name) } {
                    found.entries.push(Entry {
                        host_address: e.address as usize,
                        name,
                        name_address: e.name as usize,
                        size: e.size,
                        flags: e.flags as u32,
                    });
                }
            }
            Ok(found)
        }
        Layout::Llvm22 => {
            let count = len / std::mem::size_of::<EntryV22>();
            // SAFETY: the caller's table, `count` whole entries of this layout.
            let table = unsafe { std::slice::from_raw_parts(begin.cast::<EntryV22>(), count) };
            let mut found = Table::default();
            for e in table {
                // LLVM 22 reads every entry of this layout whatever its version (its own
                // tests register entries of version 0); only non-zero reserved bytes,
                // which this layout never has, are refused.
                let replay_tool = e.reserved == REPLAY_TOOL_RESERVED && e.kind == 0;
                if e.reserved != 0 && !replay_tool {
                    return Err(format!(
                        "an offload entry with reserved bytes {:#x} is not supported",
                        e.reserved
                    ));
                }
                if e.kind != KIND_OPENMP && !replay_tool {
                    continue;
                }
                if e.flags == REGISTER_REQUIRES {
                    found.requirements |= e.data;
                    found.requires.push(e.data);
                    continue;
                }
                let size = usize::try_from(e.size)
                    .map_err(|_| format!("an offload entry of {} bytes", e.size))?;
                // SAFETY: names in the table are C strings.
                if let Some(name) = unsafe { name_of(e.symbol_name) } {
                    found.entries.push(Entry {
                        host_address: e.address as usize,
                        name,
                        name_address: e.symbol_name as usize,
                        size,
                        flags: e.flags,
                    });
                }
            }
            Ok(found)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    fn v22(kind: u16, flags: u32, address: usize, name: &CStr, size: u64) -> EntryV22 {
        EntryV22 {
            reserved: 0,
            version: ENTRY_VERSION,
            kind,
            flags,
            address: address as *mut c_void,
            symbol_name: name.as_ptr(),
            size,
            data: 0,
            aux_address: null_mut(),
        }
    }

    fn v19(flags: i32, address: usize, name: &CStr, size: usize) -> EntryV19 {
        EntryV19 {
            address: address as *mut c_void,
            name: name.as_ptr(),
            size,
            flags,
            data: 0,
        }
    }

    /// The entries read, as (address, name, size).
    fn read_slice<T>(table: &[T]) -> Result<Vec<(usize, String, usize)>, String> {
        read_table(table).map(|t| {
            t.entries
                .into_iter()
                .map(|e| (e.host_address, e.name, e.size))
                .collect()
        })
    }

    fn read_table<T>(table: &[T]) -> Result<Table, String> {
        let range = table.as_ptr_range();
        // SAFETY: a live table of entries whose names outlive the call.
        unsafe { read(range.start.cast(), range.end.cast()) }
    }

    fn entry(host_address: usize, name: &str, size: usize) -> (usize, String, usize) {
        (host_address, name.into(), size)
    }

    #[test]
    fn sizes_are_llvms() {
        assert_eq!(std::mem::size_of::<EntryV19>(), 32);
        assert_eq!(std::mem::size_of::<EntryV22>(), 56);
    }

    #[test]
    fn the_first_word_decides_the_layout() {
        assert_eq!(layout(0, 56 * 3), Ok(Layout::Llvm22));
        assert_eq!(layout(0x1234, 32 * 3), Ok(Layout::Llvm19));
        // 96 bytes: three 19 entries, not whole 22 entries.
        assert!(layout(0, 96).is_err());
        assert!(layout(0x1234, 56).is_err());
    }

    #[test]
    fn reads_clang22_tables() {
        let table = [
            v22(
                KIND_OPENMP,
                0,
                0x2030,
                c"__omp_offloading_fe00_1_main_l19",
                0,
            ),
            v22(KIND_OPENMP, 0, 0x8038, c"counter", 4),
            v22(KIND_OPENMP, 1, 0x8040, c"linked_decl_tgt_ref_ptr", 8),
            v22(
                KIND_OPENMP,
                8,
                0x11b0,
                c"__omp_offloading_fe00_1_twice_l7",
                8,
            ),
        ];
        assert_eq!(
            read_slice(&table).unwrap(),
            vec![
                entry(0x2030, "__omp_offloading_fe00_1_main_l19", 0),
                entry(0x8038, "counter", 4),
                entry(0x8040, "linked_decl_tgt_ref_ptr", 8),
                entry(0x11b0, "__omp_offloading_fe00_1_twice_l7", 8),
            ]
        );
    }

    #[test]
    fn reads_clang19_tables() {
        let table = [
            v19(0, 0x8038, c"counter", 4),
            v19(0, 0x2010, c"__omp_offloading_fe00_1_main_l12", 0),
        ];
        assert_eq!(
            read_slice(&table).unwrap(),
            vec![
                entry(0x8038, "counter", 4),
                entry(0x2010, "__omp_offloading_fe00_1_main_l12", 0),
            ]
        );
    }

    #[test]
    fn skips_other_runtimes_and_requires_entries() {
        let table = [
            v22(2, 0, 0x3000, c"cuda_kernel", 0),
            v22(KIND_OPENMP, REGISTER_REQUIRES, 0, c"", 0),
            v22(KIND_OPENMP, 0, 0x2030, c"region", 0),
        ];
        let mut with_usm = table;
        with_usm[1].data = 0x8;
        assert_eq!(read_table(&with_usm).unwrap().requirements, 0x8);
        assert_eq!(
            read_slice(&table).unwrap(),
            vec![entry(0x2030, "region", 0)]
        );
        let old = [
            v19(0, 0x2010, c"region", 0),
            v19(REGISTER_REQUIRES as i32, 0x1, c"", 0),
        ];
        assert_eq!(read_slice(&old).unwrap(), vec![entry(0x2010, "region", 0)]);
    }

    #[test]
    fn reads_entries_of_any_version() {
        let mut table = [
            v22(KIND_OPENMP, 0, 0x2030, c"region", 0),
            v22(KIND_OPENMP, 0, 0x2040, c"other", 0),
        ];
        table[0].version = 0;
        table[1].version = 2;
        assert_eq!(read_slice(&table).unwrap().len(), 2);
        table[1].reserved = 1;
        assert!(read_slice(&table).is_err());
    }

    #[test]
    fn reads_the_entry_of_llvm_22s_replay_tool() {
        // One entry of kind 0 with 0xFFFFFFFF in its reserved word, at address 0x1.
        let mut tool = [v22(0, 0, 0x1, c"__omp_offloading_fe00_1_main_l7", 0)];
        tool[0].reserved = REPLAY_TOOL_RESERVED;
        tool[0].version = 0;
        assert_eq!(
            read_slice(&tool).unwrap(),
            vec![entry(0x1, "__omp_offloading_fe00_1_main_l7", 0)]
        );
        // Other reserved words stay refused, and tables that LLVM 19's layout divides
        // are LLVM 19's.
        tool[0].reserved = 0xFFFF_FFFE;
        assert!(read_slice(&tool).is_err());
        assert_eq!(
            layout(REPLAY_TOOL_RESERVED, 4 * std::mem::size_of::<EntryV22>()).unwrap(),
            Layout::Llvm19
        );
    }

    #[test]
    fn empty_tables_have_no_entries() {
        let none: [EntryV22; 0] = [];
        assert_eq!(read_slice(&none).unwrap(), vec![]);
        // SAFETY: NULL bounds are an empty table.
        assert_eq!(
            unsafe { read(null_mut(), null_mut()) }.unwrap(),
            Table::default()
        );
    }
}
