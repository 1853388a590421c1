//! Addresses of remote memory that no other memory of the application has: before a
//! server allocates, the application reserves the range in its own address space
//! (`PROT_NONE`, no memory behind it) and asks the server to map its memory at the same
//! address; a server whose memory cannot be placed (a GPU's) answers with its own
//! address, and the application reserves that one. The runtime's registry (keyed by
//! address across devices) then never sees two allocations at one address, and a
//! pointer the application puts in a kernel's arguments is the server's pointer too.

use crate::plugin::foundation::far_address;
use crate::plugin::foundation::page::page_size;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::c_void;

/// Which remote device an allocation belongs to: its server rank and its number there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub rank: i32,
    pub device: u32,
}

/// How an allocation's addresses are kept from this process's own memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reserved {
    /// Whole pages reserved for it alone (`reserve`): the server placed it there.
    Whole,
    /// The server's own address (`reserve_at`): its first and last pages may hold other
    /// remote allocations too (a GPU's small allocations share pages).
    AtServerAddress,
}

/// Every remote allocation, by start address: (size, owner, how it is reserved). A
/// copy between two remote devices finds the other side here (the plugin interface
/// names only the source device).
static PLACED: Mutex<BTreeMap<usize, (usize, Owner, Reserved)>> = Mutex::new(BTreeMap::new());

/// The first and last pages of allocations at servers' addresses, with how many such
/// allocations use each (their other pages are theirs alone).
static EDGE_PAGES: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Records that `size` bytes at `at`, reserved as `how` says, are `owner`'s memory.
pub fn record(at: usize, size: usize, owner: Owner, how: Reserved) {
    PLACED.lock().insert(at, (size, owner, how));
}

/// Forgets the allocation at `at` and releases its reservation; false when `at` was no
/// remote allocation.
pub fn forget(at: usize) -> bool {
    let Some((size, _, how)) = PLACED.lock().remove(&at) else {
        return false;
    };
    match how {
        Reserved::Whole => release(at, size),
        Reserved::AtServerAddress => release_at(at, size),
    }
    true
}

/// The remote device whose allocation holds `address`.
pub fn owner(address: usize) -> Option<Owner> {
    let placed = PLACED.lock();
    let (&start, &(size, owner, _)) = placed.range(..=address).next_back()?;
    (address < start + size.max(1)).then_some(owner)
}

/// Whether `[at, end)` overlaps a remote allocation already known.
fn overlaps_known(
    placed: &BTreeMap<usize, (usize, Owner, Reserved)>,
    at: usize,
    end: usize,
) -> bool {
    let before = placed
        .range(..at)
        .next_back()
        .is_some_and(|(&start, &(size, _, _))| start + size.max(1) > at);
    before || placed.range(at..end).next().is_some()
}

/// The pages `[first, last]` of `size` bytes at `at` (`size` at least 1).
fn page_span(at: usize, size: usize) -> Option<(usize, usize)> {
    let end = at.checked_add(size.max(1))?;
    let mask = !(page_size() - 1);
    Some((at & mask, (end - 1) & mask))
}

/// Reserves the pages of `size` bytes at exactly `at` (a server's own address for its
/// memory); false when any byte of it is taken here: by this process's memory, or by
/// another remote allocation. Pages shared with other remote allocations at the edges
/// are reserved once.
pub fn reserve_at(at: usize, size: usize) -> bool {
    let Some((first, last)) = page_span(at, size) else {
        return false;
    };
    let placed = PLACED.lock();
    if overlaps_known(&placed, at, at + size.max(1)) {
        return false;
    }
    let mut edges = EDGE_PAGES.lock();
    let page = page_size();
    // Runs of pages to map now: the interior, and each edge page not reserved yet.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let edge = |p: usize| !edges.contains_key(&p);
    if edge(first) {
        runs.push((first, page));
    }
    if last > first + page {
        runs.push((first + page, last - first - page));
    }
    if last != first && edge(last) {
        runs.push((last, page));
    }
    for (i, &(start, len)) in runs.iter().enumerate() {
        if !map_fixed(start, len) {
            for &(start, len) in &runs[..i] {
                unmap(start, len);
            }
            return false;
        }
    }
    for p in [first, last]
        .into_iter()
        .take(if last == first { 1 } else { 2 })
    {
        *edges.entry(p).or_default() += 1;
    }
    true
}

/// Gives back what `reserve_at` reserved: the interior pages, and edge pages no other
/// allocation uses any more.
fn release_at(at: usize, size: usize) {
    let Some((first, last)) = page_span(at, size) else {
        return;
    };
    let page = page_size();
    let mut edges = EDGE_PAGES.lock();
    if last > first + page {
        unmap(first + page, last - first - page);
    }
    for p in [first, last]
        .into_iter()
        .take(if last == first { 1 } else { 2 })
    {
        if let Some(users) = edges.get_mut(&p) {
            *users -= 1;
            if *users == 0 {
                edges.remove(&p);
                unmap(p, page);
            }
        }
    }
}

/// A `PROT_NONE` mapping of `len` bytes exactly at `at`, or false where any of it is
/// mapped already.
fn map_fixed(at: usize, len: usize) -> bool {
    // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping: a PROT_NONE
    // mapping exactly at `at`, or a failure.
    let got = unsafe {
        libc::mmap(
            at as *mut c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED {
        return false;
    }
    if got as usize != at {
        // A kernel that ignores the flag put it elsewhere: not the range asked for.
        unmap(got as usize, len);
        return false;
    }
    true
}

fn unmap(at: usize, len: usize) {
    // SAFETY: a reservation of ours (PROT_NONE, no memory behind it) nothing else uses.
    unsafe { libc::munmap(at as *mut c_void, len) };
}

/// `size` rounded up to whole pages (at least one); a size no address space holds stays
/// one (`usize::MAX`), which every reservation then refuses.
pub fn rounded(size: usize) -> usize {
    let page = page_size();
    size.max(1).div_ceil(page).saturating_mul(page)
}

/// Reserves `size` bytes (rounded to pages) of this process's address space; `None`
/// when the system refuses.
pub fn reserve(size: usize) -> Option<usize> {
    reserve_hinted(size, 0)
}

/// As `reserve`, at a random place far from any process's own mappings where it is free
/// (`far_address`). After the server found an address taken, the kernel's next pick here
/// would lie right beside it (it hands out addresses top-down), very likely inside the
/// same mapping of the server's.
pub fn reserve_anywhere(size: usize) -> Option<usize> {
    let hint = far_address::pick(rounded(size), page_size()).unwrap_or(0);
    reserve_hinted(size, hint)
}

/// An anonymous reservation at `hint` when that is free (0: where the kernel picks).
fn reserve_hinted(size: usize, hint: usize) -> Option<usize> {
    // SAFETY: an anonymous PROT_NONE mapping without MAP_FIXED: the kernel takes the
    // hint only where nothing is mapped, so it touches no existing memory.
    let at = unsafe {
        libc::mmap(
            hint as *mut libc::c_void,
            rounded(size),
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (at != libc::MAP_FAILED).then_some(at as usize)
}

/// A shared-memory object of this process mapped over one of its reservations: a device
/// server on this node maps the same object at the same address, so that HOST and
/// MANAGED memory of its host device is the application's memory too (read and written
/// by both, no copies). Its name goes when this is dropped: by then both sides have
/// mapped it, or one gave up.
pub struct SharedSegment {
    name: std::ffi::CString,
}

static NEXT_SEGMENT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl SharedSegment {
    /// Makes an object of `size` bytes and maps it over the reservation at `at`; `None`
    /// where the system refuses (the reservation then stays as it was).
    pub fn create(at: usize, size: usize) -> Option<SharedSegment> {
        let n = NEXT_SEGMENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("/offload-{}-{n}", std::process::id());
        let name = std::ffi::CString::new(name).ok()?;
        let segment = SharedSegment { name };
        // SAFETY: a NUL-terminated name; a new object, ours alone (O_EXCL, mode 0600).
        let fd = unsafe {
            libc::shm_open(
                segment.name.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
                0o600,
            )
        };
        if fd < 0 {
            return None;
        }
        let len = rounded(size);
        // SAFETY: `fd` is our object; the mapping replaces only our own reservation at
        // `at` (PROT_NONE, nothing behind it) of this length.
        let mapped = unsafe {
            libc::ftruncate(fd, len as libc::off_t) == 0
                && libc::mmap(
                    at as *mut c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    fd,
                    0,
                ) as usize
                    == at
        };
        // SAFETY: our descriptor; the mapping keeps the object.
        unsafe { libc::close(fd) };
        if !mapped {
            segment.withdraw(at, size);
            return None;
        }
        Some(segment)
    }

    /// The name a server opens it by.
    pub fn name(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }

    /// The server did not map it: the range becomes a plain reservation again.
    pub fn withdraw(self, at: usize, size: usize) {
        // SAFETY: replaces only our own mapping at `at` of this length with a PROT_NONE
        // reservation.
        unsafe {
            libc::mmap(
                at as *mut c_void,
                rounded(size),
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
    }
}

impl Drop for SharedSegment {
    fn drop(&mut self) {
        // SAFETY: the NUL-terminated name of our object.
        unsafe { libc::shm_unlink(self.name.as_ptr()) };
    }
}

/// Gives back a range `reserve` returned.
pub fn release(at: usize, size: usize) {
    unmap(at, rounded(size));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_reserve_far_apart_in_the_upper_address_space() {
        let a = reserve_anywhere(4096).unwrap();
        let b = reserve_anywhere(4096).unwrap();
        for at in [a, b] {
            assert_eq!(at % page_size(), 0);
            assert!(
                (far_address::FAR_START..far_address::FAR_END).contains(&at),
                "{at:#x}"
            );
        }
        // Two picks land gigabytes apart, not page by page as the kernel's own would.
        assert!(a.abs_diff(b) > 1 << 30, "{a:#x} and {b:#x}");
        release(a, 4096);
        release(b, 4096);
    }

    #[test]
    fn reservations_are_page_aligned_distinct_and_released() {
        let a = reserve(100).expect("reserve");
        let b = reserve(100).expect("reserve");
        assert_ne!(a, b);
        assert_eq!(a % page_size(), 0);
        assert_eq!(rounded(1), page_size());
        assert_eq!(rounded(page_size() + 1), 2 * page_size());
        // Found by the API fuzzer: a size near usize::MAX overflowed the rounding.
        assert_eq!(rounded(usize::MAX - 7), usize::MAX);
        assert_eq!(reserve(usize::MAX - 7), None);
        release(a, 100);
        release(b, 100);
    }

    #[test]
    fn owners_are_found_inside_remote_allocations_only() {
        let a = reserve(8192).expect("reserve");
        let mine = Owner { rank: 1, device: 2 };
        record(a, 8192, mine, Reserved::Whole);
        assert_eq!(owner(a), Some(mine));
        assert_eq!(owner(a + 8191), Some(mine));
        assert_eq!(owner(a + 8192), None);
        assert_eq!(owner(a.wrapping_sub(1)), None);
        assert!(forget(a));
        assert!(!forget(a), "forgotten once");
        assert_eq!(owner(a), None);
    }

    #[test]
    fn server_addresses_are_reserved_where_free_sharing_edge_pages() {
        let page = page_size();
        // Four free pages far below where mmap places memory by itself (so that no
        // other thread of the test maps them meanwhile).
        let base = (0..64)
            .map(|i| 0x1f00_0000_0000usize + i * (1 << 30))
            .find(|&b| map_fixed(b, 4 * page))
            .expect("four free pages");
        let owner = Owner { rank: 0, device: 0 };
        assert!(!reserve_at(base + 8, 16), "this process's own mapping");
        unmap(base, 4 * page);
        // Two small allocations on one page, and one across the next three pages.
        assert!(reserve_at(base + 8, 16));
        record(base + 8, 16, owner, Reserved::AtServerAddress);
        assert!(!reserve_at(base + 16, 16), "overlaps the first");
        assert!(reserve_at(base + 64, 64), "same page, other bytes");
        record(base + 64, 64, owner, Reserved::AtServerAddress);
        assert!(reserve_at(base + page + 100, 2 * page));
        record(
            base + page + 100,
            2 * page,
            owner,
            Reserved::AtServerAddress,
        );
        assert_eq!(owner_of_page_count(base), 2);
        assert!(forget(base + 8));
        assert_eq!(owner_of_page_count(base), 1, "the page stays for the other");
        assert!(forget(base + 64));
        assert_eq!(owner_of_page_count(base), 0);
        assert!(forget(base + page + 100));
        // All given back: the four pages are free again.
        assert!(map_fixed(base, 4 * page));
        unmap(base, 4 * page);
    }

    #[test]
    fn a_shared_segment_is_one_memory_under_its_name_until_dropped() {
        let size = 3 * page_size() + 5;
        let at = reserve(size).expect("reserve");
        let segment = SharedSegment::create(at, size).expect("a shared segment");
        // SAFETY: the segment maps `size` writable bytes at `at`.
        unsafe { std::ptr::write_bytes(at as *mut u8, 0x42, size) };
        // Another mapping of the same object (what a server does) sees the bytes.
        let name = std::ffi::CString::new(segment.name()).expect("name");
        // SAFETY: opening and mapping an existing object read-only, anywhere.
        let other = unsafe {
            let fd = libc::shm_open(name.as_ptr(), libc::O_RDONLY, 0);
            assert!(fd >= 0, "the name opens");
            let p = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            );
            libc::close(fd);
            assert_ne!(p, libc::MAP_FAILED);
            p as usize
        };
        // SAFETY: the second mapping holds `size` readable bytes.
        let seen = unsafe { std::slice::from_raw_parts(other as *const u8, size) };
        assert!(seen.iter().all(|&b| b == 0x42));
        unmap(other, rounded(size));
        drop(segment);
        // SAFETY: as above; the name is gone now.
        let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDONLY, 0) };
        assert!(fd < 0, "the name is removed on drop");
        release(at, size);
    }

    fn owner_of_page_count(page_start: usize) -> usize {
        EDGE_PAGES.lock().get(&page_start).copied().unwrap_or(0)
    }
}
