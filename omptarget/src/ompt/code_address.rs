//! `codeptr_ra`: the address in the program a construct or routine was called from.
//! LLVM takes its entry point's return address; Rust has no stable way to read one, so
//! the call stack is walked (only when a tool is connected) to the first frame outside
//! this library.

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
    first_outside::<8>()
        .or_else(first_outside::<64>)
        .unwrap_or(std::ptr::null())
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
