//! The application's code at the application's addresses (see liboffload's
//! `remote::host_code`): its segments mapped here at the addresses they have there,
//! their imports pointed at this process's copies of the libraries they name, then made
//! read-only (and executable where they were; the copy of the program's global
//! variables stays writable). A host function pointer or a vtable that
//! reaches a kernel on this server's host device then leads to the same code here.

use offload::plugin::foundation::page::page_size as page;
use offload::plugins::remote::wire::HostCode;
use std::collections::BTreeMap;

/// What each page must allow once filled.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Access {
    execute: bool,
    /// A page of the program's global variables, or one with an import slot outside
    /// every range sent (the lazily bound part of the function-call table).
    write: bool,
}

/// The pages `code` needs, each with its access.
fn pages_of(code: &HostCode, page: usize) -> Result<BTreeMap<usize, Access>, String> {
    let mut pages = BTreeMap::new();
    let mut span = |start: u64, len: usize, access: Access| -> Result<(), String> {
        let start = usize::try_from(start).map_err(|_| format!("address {start:#x}"))?;
        let end = start
            .checked_add(len.max(1))
            .ok_or_else(|| format!("{len} bytes at {start:#x} wrap around"))?;
        let mut at = start / page * page;
        while at < end {
            let entry: &mut Access = pages.entry(at).or_default();
            entry.execute |= access.execute;
            entry.write |= access.write;
            at += page;
        }
        Ok(())
    };
    for s in &code.segments {
        let access = Access {
            execute: s.executable,
            write: s.writable,
        };
        span(s.address, s.bytes.len(), access)?;
    }
    let inside = |slot: u64| {
        code.segments
            .iter()
            .any(|s| slot >= s.address && slot + 8 <= s.address + s.bytes.len() as u64)
    };
    for i in &code.imports {
        let write = !inside(i.slot);
        span(
            i.slot,
            8,
            Access {
                execute: false,
                write,
            },
        )?;
    }
    Ok(pages)
}

/// Maps `code` at its addresses. Every page must be free here: where one is taken (this
/// process's own memory is there) nothing stays mapped and the error says where.
pub fn mirror(code: &HostCode) -> Result<(), String> {
    let page = page();
    let pages = pages_of(code, page)?;
    let mut mapped: Vec<usize> = Vec::new();
    let undo = |mapped: &[usize]| {
        for &at in mapped {
            // SAFETY: a page this function mapped and nothing uses yet.
            unsafe { libc::munmap(at as *mut libc::c_void, page) };
        }
    };
    for &at in pages.keys() {
        // SAFETY: MAP_FIXED_NOREPLACE never replaces a mapping: a page at `at`, or a
        // failure.
        let got = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if got == libc::MAP_FAILED || got as usize != at {
            if got != libc::MAP_FAILED {
                // An old kernel that ignores the flag placed it elsewhere.
                // SAFETY: the mapping just made.
                unsafe { libc::munmap(got, page) };
            }
            undo(&mapped);
            return Err(format!(
                "the application's page at {at:#x} is taken in this server"
            ));
        }
        mapped.push(at);
    }
    // The data first: the read-only ranges inside it (RELRO) hold the relocated values.
    let (data, fixed): (Vec<_>, Vec<_>) = code.segments.iter().partition(|s| s.writable);
    for s in data.into_iter().chain(fixed) {
        // SAFETY: every page of the segment was mapped writable above.
        unsafe {
            std::ptr::copy_nonoverlapping(s.bytes.as_ptr(), s.address as *mut u8, s.bytes.len())
        };
    }
    for i in &code.imports {
        let value = resolve(&i.name).map_or(0, |a| (a as i64).wrapping_add(i.addend) as u64);
        // SAFETY: the slot's page was mapped writable above (`pages_of`); slots of
        // relocations are 8-byte aligned.
        unsafe { std::ptr::write_unaligned(i.slot as *mut u64, value) };
    }
    for (&at, access) in &pages {
        let mut protection = libc::PROT_READ;
        if access.execute {
            protection |= libc::PROT_EXEC;
        }
        if access.write {
            protection |= libc::PROT_WRITE;
        }
        // SAFETY: a page mapped above.
        if unsafe { libc::mprotect(at as *mut libc::c_void, page, protection) } != 0 {
            let e = std::io::Error::last_os_error();
            undo(&mapped);
            return Err(format!("the page at {at:#x} cannot be protected: {e}"));
        }
    }
    Ok(())
}

/// This process's address of a symbol the application imports (0 where it has none: a
/// call through it then faults, as an unresolved symbol would).
fn resolve(name: &str) -> Option<usize> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the loaded objects.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use offload::plugins::remote::wire::{HostImport, HostSegment};

    #[test]
    fn pages_join_segments_and_imports_with_their_access() {
        let code = HostCode {
            segments: vec![
                HostSegment {
                    address: 0x10_0000,
                    executable: true,
                    writable: false,
                    bytes: vec![0; 0x1800],
                },
                HostSegment {
                    address: 0x10_3000,
                    executable: false,
                    writable: false,
                    bytes: vec![0; 0x10],
                },
            ],
            imports: vec![
                HostImport {
                    slot: 0x10_3008,
                    addend: 0,
                    name: "malloc".into(),
                },
                HostImport {
                    slot: 0x10_5000,
                    addend: 0,
                    name: "free".into(),
                },
            ],
        };
        let pages = pages_of(&code, 0x1000).unwrap();
        let code_page = Access {
            execute: true,
            write: false,
        };
        assert_eq!(pages.get(&0x10_0000), Some(&code_page));
        assert_eq!(pages.get(&0x10_1000), Some(&code_page));
        assert_eq!(pages.get(&0x10_3000), Some(&Access::default()));
        let table = Access {
            execute: false,
            write: true,
        };
        assert_eq!(pages.get(&0x10_5000), Some(&table));
        assert_eq!(pages.len(), 4);
    }

    /// `code` for two pages at `at`: three bytes in the first, an import in the second.
    fn two_pages_at(at: usize, page: usize) -> HostCode {
        HostCode {
            segments: vec![HostSegment {
                address: at as u64 + 8,
                executable: false,
                writable: false,
                bytes: vec![7, 8, 9],
            }],
            imports: vec![HostImport {
                slot: (at + page) as u64,
                addend: 0,
                name: "malloc".into(),
            }],
        }
    }

    #[test]
    fn a_mirror_lands_at_its_address_and_a_taken_page_is_refused() {
        let page = page();
        // A free address: reserved, noted, given back, then mirrored to. Another test's
        // thread may map something there meanwhile: then another address is tried.
        let mut mirrored = None;
        for _ in 0..20 {
            // SAFETY: an anonymous mapping anywhere, unmapped at once.
            let at = unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    2 * page,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED);
                libc::munmap(p, 2 * page);
                p as usize
            };
            match mirror(&two_pages_at(at, page)) {
                Ok(()) => {
                    mirrored = Some(at);
                    break;
                }
                Err(e) => assert!(e.contains("is taken"), "{e}"),
            }
        }
        let at = mirrored.expect("a free address within 20 tries");
        // SAFETY: the mirrored bytes, mapped readable.
        let seen = unsafe { std::slice::from_raw_parts((at + 8) as *const u8, 3) };
        assert_eq!(seen, &[7, 8, 9]);
        // SAFETY: the import slot, mapped readable.
        let slot = unsafe { std::ptr::read((at + page) as *const usize) };
        assert_eq!(slot, libc::malloc as *const () as usize);
        // Now the pages are this process's own: a second mirror there is refused, and
        // leaves them as they are.
        let again = mirror(&two_pages_at(at, page)).unwrap_err();
        assert!(again.contains("is taken"), "{again}");
        // SAFETY: as above, still mapped.
        assert_eq!(
            unsafe { std::slice::from_raw_parts((at + 8) as *const u8, 3) },
            &[7, 8, 9]
        );
        // SAFETY: the two pages `mirror` mapped.
        unsafe { libc::munmap(at as *mut libc::c_void, 2 * page) };
    }
}
