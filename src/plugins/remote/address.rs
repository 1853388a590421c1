//! Addresses of remote memory that no other memory of the application has: before a
//! server allocates, the application reserves the range in its own address space
//! (`PROT_NONE`, no memory behind it) and asks the server to map its memory at the same
//! address. The runtime's registry (keyed by address across devices) then never sees two
//! allocations at one address, and a pointer the application puts in a kernel's
//! arguments is the server's pointer too.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// Which remote device a placed allocation belongs to: its server rank and its number
/// there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub rank: i32,
    pub device: u32,
}

/// Every placed allocation of every remote device, by start address: (size, owner). A
/// copy between two remote devices finds the other side here (the plugin interface
/// names only the source device).
static PLACED: Mutex<BTreeMap<usize, (usize, Owner)>> = Mutex::new(BTreeMap::new());

/// Records that `size` bytes at `at` (a reservation) are `owner`'s memory.
pub fn record(at: usize, size: usize, owner: Owner) {
    PLACED.lock().insert(at, (size, owner));
}

/// Forgets the allocation at `at` and releases its reservation; false when `at` was no
/// placed allocation (the server's own address, never reserved here).
pub fn forget(at: usize) -> bool {
    let Some((size, _)) = PLACED.lock().remove(&at) else {
        return false;
    };
    release(at, size);
    true
}

/// The remote device whose placed allocation holds `address`.
pub fn owner(address: usize) -> Option<Owner> {
    let placed = PLACED.lock();
    let (&start, &(size, owner)) = placed.range(..=address).next_back()?;
    (address < start + size.max(1)).then_some(owner)
}

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

    #[test]
    fn owners_are_found_inside_placed_allocations_only() {
        let a = reserve(8192).expect("reserve");
        let mine = Owner { rank: 1, device: 2 };
        record(a, 8192, mine);
        assert_eq!(owner(a), Some(mine));
        assert_eq!(owner(a + 8191), Some(mine));
        assert_eq!(owner(a + 8192), None);
        assert_eq!(owner(a.wrapping_sub(1)), None);
        assert!(forget(a));
        assert!(!forget(a), "forgotten once");
        assert_eq!(owner(a), None);
    }
}
