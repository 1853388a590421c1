//! The application's code, for a server's host device. clang compiles a call through a
//! function pointer and a virtual call on the CPU target as a plain call through the
//! host's addresses (`declare target indirect` functions, vtables): on the application's
//! own host device those addresses are its code. A server is another process, so before
//! it loads an image held by one of the application's objects (the executable, or a
//! library opened later), it is sent that object's code and read-only data (vtables,
//! relocated pointers) to map at the same addresses, with the object's imports named so
//! that it can point them at its own copies of those libraries, and a copy of its
//! global variables as they are at that moment (up to `MAX_DATA`): what host code
//! reads there is what the program held when the image was loaded, and what it writes
//! stays on the server.

use super::wire::{HostCode, HostImport, HostSegment};
use crate::plugin::foundation::page::page_size;
use goblin::elf::dynamic::{
    DT_JMPREL, DT_NULL, DT_PLTRELSZ, DT_RELA, DT_RELASZ, DT_STRTAB, DT_SYMTAB,
};
use goblin::elf::reloc::{R_X86_64_64, R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT};
use goblin::elf64::reloc::{r_sym, r_type, SIZEOF_RELA};
use goblin::elf64::sym::SIZEOF_SYM;
use std::ffi::{c_int, c_void, CStr};

/// What `dl_iterate_phdr`'s callback looks for and finds.
struct Search<'a> {
    address: usize,
    /// Asked with the object's load address before anything is read of it.
    wanted: &'a mut dyn FnMut(usize) -> bool,
    found: Option<HostCode>,
}

/// The code and read-only data of the loaded object whose memory holds `address` (an
/// image clang embedded), if `wanted` says yes to the object's load address (asked
/// before the object is read: an object already sent costs nothing again); `None` where
/// no loaded object holds it (an image the program read into memory of its own).
pub fn of_object_holding(
    address: usize,
    wanted: &mut dyn FnMut(usize) -> bool,
) -> Option<HostCode> {
    let mut search = Search {
        address,
        wanted,
        found: None,
    };
    // SAFETY: the callback only reads the program headers the loader passes and the
    // memory they describe, which stays mapped while the loader's lock is held.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
    search.found
}

unsafe extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // A panic must not unwind into the loader.
    std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `Search` of `of_object_holding`; `info` the loader's.
        let (search, info) = unsafe { (&mut *data.cast::<Search<'_>>(), &*info) };
        // SAFETY: the loader's program headers of this object, `dlpi_phnum` of them.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
        let bias = info.dlpi_addr as usize;
        let holds = headers.iter().any(|h| {
            let start = bias + h.p_vaddr as usize;
            h.p_type == libc::PT_LOAD
                && (start..start + h.p_memsz as usize).contains(&search.address)
        });
        if !holds {
            return 0;
        }
        if (search.wanted)(bias) {
            // SAFETY: the headers and the memory of a loaded object, mapped as they say.
            search.found = Some(unsafe { collect(bias, headers) });
        }
        1
    })
    .unwrap_or(1)
}

/// # Safety
/// `headers` are the program headers of an object loaded at `bias`.
unsafe fn collect(bias: usize, headers: &[libc::Elf64_Phdr]) -> HostCode {
    let mut code = HostCode::default();
    let mut data = Vec::new();
    for h in headers {
        if h.p_type != libc::PT_LOAD && h.p_type != libc::PT_GNU_RELRO {
            continue;
        }
        // RELRO (relocated at start, then read-only: vtables, typeinfo, the GOT) lies
        // inside a writable load segment, and is sent as read-only.
        let writable = h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_W != 0;
        let segment = (bias + h.p_vaddr as usize, h.p_memsz as usize);
        if writable {
            data.push(segment);
            continue;
        }
        // SAFETY: a loaded segment, readable in full (`p_memsz` bytes).
        code.segments
            .push(unsafe { snapshot(segment, h.p_flags & libc::PF_X != 0, false) });
    }
    if let Some(dynamic) = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC) {
        // SAFETY: the object's dynamic section, as loaded.
        code.imports = unsafe { imports(bias, bias + dynamic.p_vaddr as usize) };
    }
    // The object's global variables, as they are now: host code on the server reads
    // them as they were when the program was loaded there, and what it writes stays
    // there. Beyond `MAX_DATA` only the pages of the call table's pointers are sent.
    let total: usize = data.iter().map(|&(_, size)| size).sum();
    if total <= MAX_DATA {
        for segment in data {
            // SAFETY: a loaded, writable (so readable) segment.
            code.segments
                .push(unsafe { snapshot(segment, false, true) });
        }
    } else {
        let page = page_size();
        let mut pages: Vec<usize> = code
            .imports
            .iter()
            .map(|i| i.slot as usize / page * page)
            .filter(|&p| data.iter().any(|&(a, s)| p + page > a && p < a + s))
            .collect();
        pages.sort_unstable();
        pages.dedup();
        for p in pages {
            // SAFETY: a page of a loaded segment: mapped whole.
            code.segments
                .push(unsafe { snapshot((p, page), false, true) });
        }
    }
    code
}

/// How many bytes of global variables are sent at most.
const MAX_DATA: usize = 64 << 20;

/// # Safety
/// `size` bytes at `address` are mapped and readable.
unsafe fn snapshot(
    (address, size): (usize, usize),
    executable: bool,
    writable: bool,
) -> HostSegment {
    // SAFETY: as the caller promises.
    let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, size) };
    HostSegment {
        address: address as u64,
        executable,
        writable,
        bytes: bytes.to_vec(),
    }
}

/// The object's relocations that name a symbol of another object: the pointers a
/// server must set to its own copy of that symbol.
///
/// # Safety
/// `dynamic` is the loaded dynamic section of an object loaded at `bias`.
unsafe fn imports(bias: usize, dynamic: usize) -> Vec<HostImport> {
    // The relocation kinds read below are x86-64's.
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    let (mut symtab, mut strtab) = (0usize, 0usize);
    let mut tables = [(0usize, 0usize); 2];
    // The loader turns these entries into addresses where the section is writable;
    // where it is not, they are still offsets from the object's base.
    let at = |v: u64| -> usize {
        let v = v as usize;
        if v < bias {
            v + bias
        } else {
            v
        }
    };
    let mut entry = dynamic as *const u64;
    loop {
        // SAFETY: (tag, value) pairs up to DT_NULL.
        let (tag, value) = unsafe { (*entry, *entry.add(1)) };
        match tag {
            DT_NULL => break,
            DT_SYMTAB => symtab = at(value),
            DT_STRTAB => strtab = at(value),
            DT_RELA => tables[0].0 = at(value),
            DT_RELASZ => tables[0].1 = value as usize,
            DT_JMPREL => tables[1].0 = at(value),
            DT_PLTRELSZ => tables[1].1 = value as usize,
            _ => {}
        }
        // SAFETY: still inside the dynamic section (DT_NULL not reached).
        entry = unsafe { entry.add(2) };
    }
    let mut found = Vec::new();
    if symtab == 0 || strtab == 0 {
        return found;
    }
    for (table, size) in tables {
        if table == 0 {
            continue;
        }
        for n in 0..size / SIZEOF_RELA {
            let rela = (table + n * SIZEOF_RELA) as *const u64;
            // SAFETY: an Elf64_Rela of the table: offset, info, addend.
            let (offset, info, addend) = unsafe { (*rela, *rela.add(1), *rela.add(2) as i64) };
            let (kind, symbol) = (r_type(info), r_sym(info) as usize);
            let addend = match kind {
                R_X86_64_64 => addend,
                R_X86_64_GLOB_DAT | R_X86_64_JUMP_SLOT => 0,
                _ => continue,
            };
            if symbol == 0 {
                continue;
            }
            let sym = symtab + symbol * SIZEOF_SYM;
            // SAFETY: an Elf64_Sym: st_name (u32) at 0, st_shndx (u16) at 6.
            let (name, section) = unsafe { (*(sym as *const u32), *((sym + 6) as *const u16)) };
            if section != 0 {
                // Defined here: the pointer is already this object's own address.
                continue;
            }
            // SAFETY: a NUL-terminated name in the string table.
            let name = unsafe { CStr::from_ptr((strtab + name as usize) as *const libc::c_char) };
            found.push(HostImport {
                slot: (bias as u64).wrapping_add(offset),
                addend,
                name: name.to_string_lossy().into_owned(),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test binary: its code must be in what is collected.
    #[inline(never)]
    fn marker() -> u32 {
        0x5eed
    }

    #[test]
    fn the_object_holding_our_code_gives_its_code_and_imports() {
        let here = marker as *const () as usize;
        let code = of_object_holding(here, &mut |_| true).expect("this test's own executable");
        let segment = code
            .segments
            .iter()
            .find(|s| (s.address as usize..s.address as usize + s.bytes.len()).contains(&here))
            .expect("a segment holding the function");
        assert!(segment.executable);
        let offset = here - segment.address as usize;
        // SAFETY: the function's first bytes, in our own mapped code.
        let first = unsafe { std::slice::from_raw_parts(here as *const u8, 8) };
        assert_eq!(&segment.bytes[offset..offset + 8], first);
        assert!(code.segments.iter().all(|s| !s.bytes.is_empty()));
        // The executable calls libc: its imports name libc's functions.
        assert!(
            code.imports
                .iter()
                .any(|i| i.name == "malloc" || i.name == "free"),
            "{:?}",
            code.imports.iter().map(|i| &i.name).collect::<Vec<_>>()
        );
        assert_eq!(marker(), 0x5eed);
        // An object not wanted (sent already) is not read: asked with its load address,
        // which lies at or below its code.
        let mut base = None;
        let refused = of_object_holding(here, &mut |at| {
            base = Some(at);
            false
        });
        assert!(refused.is_none());
        assert!(base.is_some_and(|b| b <= here));
        // A global variable goes as it is now, in a writable segment.
        DATA.store(0x1234_5678_9abc_def0, std::sync::atomic::Ordering::SeqCst);
        let code = of_object_holding(here, &mut |_| true).unwrap();
        let at = &DATA as *const _ as u64;
        let data = code
            .segments
            .iter()
            .find(|s| s.writable && (s.address..s.address + s.bytes.len() as u64).contains(&at))
            .expect("a writable segment holding the variable");
        let offset = (at - data.address) as usize;
        assert_eq!(
            data.bytes[offset..offset + 8],
            0x1234_5678_9abc_def0u64.to_ne_bytes()
        );
    }

    static DATA: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

    #[test]
    fn memory_of_no_object_gives_nothing() {
        let heap = Box::new([0u8; 64]);
        let mut asked = false;
        assert!(of_object_holding(heap.as_ptr() as usize, &mut |_| {
            asked = true;
            true
        })
        .is_none());
        assert!(!asked, "no object holds it: nothing to ask about");
    }
}
