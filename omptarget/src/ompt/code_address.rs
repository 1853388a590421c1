//! `codeptr_ra`: the address in the program a construct or routine was called from.
//! LLVM takes its entry point's return address; Rust has no stable way to read one, so
//! the call stack is walked (only when a tool is connected) to the first frame outside
//! this library. CMake builds the crate with frame records in every function
//! (`omptarget_frame_pointers`): the walk then follows them, a few loads per frame;
//! otherwise (the crate's own tests) it unwinds with libgcc, about a microsecond.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// The address range this library's code is loaded at (its object's loaded segments).
fn own_range() -> (usize, usize) {
    static RANGE: OnceLock<(usize, usize)> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let mut search = Search {
            address: own_range as *const () as usize,
            start: 0,
            end: 0,
        };
        // SAFETY: the callback reads the loader's entries during the call only.
        unsafe { libc::dl_iterate_phdr(Some(segments_of), (&raw mut search).cast()) };
        (search.start, search.end)
    })
}

/// The object that holds `address`: where its loaded segments begin and end.
struct Search {
    address: usize,
    start: usize,
    end: usize,
}

/// `dl_iterate_phdr`'s callback: fills the `Search` at `data` from the object that holds
/// its address.
unsafe extern "C" fn segments_of(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: the loader's entry and our search, both valid during the call.
    let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
    let base = info.dlpi_addr as usize;
    // SAFETY: the object's program headers, `dlpi_phnum` of them.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let loads = headers.iter().filter(|h| h.p_type == libc::PT_LOAD);
    let (mut low, mut high) = (usize::MAX, 0usize);
    for h in loads {
        low = low.min(base + h.p_vaddr as usize);
        high = high.max(base + (h.p_vaddr + h.p_memsz) as usize);
    }
    if (low..high).contains(&search.address) {
        search.start = low;
        search.end = high;
        return 1;
    }
    0
}

/// The first return address on this thread's stack that lies outside this library (NULL
/// when none is found). Unwinding costs per frame: a few frames are tried first, the
/// whole depth only when the caller is deeper (a call through libomp's tasks).
pub fn caller() -> *const c_void {
    frame_records::first_outside()
        .or_else(first_outside::<8>)
        .or_else(first_outside::<64>)
        .unwrap_or(std::ptr::null())
}

/// The walk along the frame records (x86_64's rbp chain, aarch64's x29 chain): each
/// record holds the caller's record and the return address. Every frame from an entry
/// point down to here is this crate's, so the chain is whole up to the first return
/// address outside it; a record that does not lie a little above the one before ends
/// the walk without an answer (the unwinder then decides).
#[cfg(all(
    omptarget_frame_pointers,
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod frame_records {
    use super::own_range;
    use std::ffi::c_void;

    /// Frames further apart than this are not one chain.
    const FRAME_AT_MOST: usize = 1 << 20;
    const DEPTH: usize = 64;

    #[inline(never)]
    pub fn first_outside() -> Option<*const c_void> {
        let mut record: usize;
        // SAFETY: reads this function's frame-record register, nothing else.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            std::arch::asm!("mov {}, rbp", out(reg) record, options(nomem, nostack, preserves_flags));
            #[cfg(target_arch = "aarch64")]
            std::arch::asm!("mov {}, x29", out(reg) record, options(nomem, nostack, preserves_flags));
        }
        let (start, end) = own_range();
        for _ in 0..DEPTH {
            if record == 0 || record % std::mem::align_of::<usize>() != 0 {
                return None;
            }
            // SAFETY: `record` is the frame record of a live frame of this crate on this
            // thread's stack (the chain from this function up to the entry point, each
            // checked to lie just above the one before): two words, the caller's record
            // and the return address.
            let (next, returns_to) = unsafe {
                let words = record as *const usize;
                (words.read(), words.add(1).read())
            };
            if !(start..end).contains(&returns_to) {
                return (returns_to != 0).then_some(returns_to as *const c_void);
            }
            if next <= record || next - record > FRAME_AT_MOST {
                return None;
            }
            record = next;
        }
        None
    }
}

/// Without frame records, the unwinder alone.
#[cfg(not(all(
    omptarget_frame_pointers,
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod frame_records {
    use std::ffi::c_void;

    pub fn first_outside() -> Option<*const c_void> {
        None
    }
}

fn first_outside<const DEPTH: usize>() -> Option<*const c_void> {
    let mut frames = [std::ptr::null_mut::<c_void>(); DEPTH];
    // SAFETY: room for DEPTH addresses.
    let n = unsafe { libc::backtrace(frames.as_mut_ptr(), DEPTH as i32) }.max(0) as usize;
    let (start, end) = own_range();
    frames[..n]
        .iter()
        .map(|&frame| frame.cast_const())
        .find(|&frame| !frame.is_null() && !(start..end).contains(&(frame as usize)))
}
