//! Addresses of remote memory that no other memory of the application has: before a
//! server allocates, the application reserves the range in its own address space
//! (`PROT_NONE`, no memory behind it) and asks the server to map its memory at the same
//! address. The runtime's registry (keyed by address across devices) then never sees two
//! allocations at one address, and a pointer the application puts in a kernel's
//! arguments is the server's pointer too.

use std::ffi::c_void;

/// The page size ranges are rounded to.
fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(4096)
}

/// `size` rounded up to whole pages (at least one).
pub fn rounded(size: usize) -> usize {
    let page = page();
    size.max(1).div_ceil(page) * page
}

/// Reserves `size` bytes (rounded to pages) of this process's address space; `None`
/// when the system refuses.
pub fn reserve(size: usize) -> Option<usize> {
    // SAFETY: an anonymous PROT_NONE mapping at an address the kernel picks: it touches
    // no existing memory.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            rounded(size),
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (at != libc::MAP_FAILED).then_some(at as usize)
}

/// Gives back a range `reserve` returned.
pub fn release(at: usize, size: usize) {
    // SAFETY: `at` and `size` are a reservation of ours, which nothing else uses.
    unsafe { libc::munmap(at as *mut c_void, rounded(size)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_page_aligned_distinct_and_released() {
        let a = reserve(100).expect("reserve");
        let b = reserve(100).expect("reserve");
        assert_ne!(a, b);
        assert_eq!(a % page(), 0);
        assert_eq!(rounded(1), page());
        assert_eq!(rounded(page() + 1), 2 * page());
        release(a, 100);
        release(b, 100);
    }
}
