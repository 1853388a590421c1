//! The recorded device memory at its recorded addresses, on the host device: the pages
//! the allocations cover, mapped where they were (`MAP_FIXED_NOREPLACE`: an address this
//! process already uses is refused, never overwritten), unmapped when dropped.

use offload::record::format::Allocation;

pub struct Placed {
    ranges: Vec<(usize, usize)>,
}

impl Drop for Placed {
    fn drop(&mut self) {
        for &(start, len) in &self.ranges {
            // SAFETY: a mapping this value made and nothing else uses.
            unsafe { libc::munmap(start as *mut libc::c_void, len) };
        }
    }
}

pub fn page_size() -> usize {
    // SAFETY: asks the system its page size.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

/// The page ranges `allocations` cover, merged where they touch.
pub fn page_ranges(allocations: &[Allocation], page: usize) -> Result<Vec<(usize, usize)>, String> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for a in allocations {
        let base = usize::try_from(a.base).map_err(|_| format!("address {:#x}", a.base))?;
        let end = base.checked_add(a.bytes.len().max(1)).ok_or_else(|| {
            format!(
                "{} bytes at {base:#x} overflow the address space",
                a.bytes.len()
            )
        })?;
        spans.push((base / page * page, end.div_ceil(page) * page));
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    Ok(merged.into_iter().map(|(s, e)| (s, e - s)).collect())
}

/// Maps the pages of `allocations` at their addresses.
pub fn place(allocations: &[Allocation]) -> Result<Placed, String> {
    let mut placed = Placed { ranges: Vec::new() };
    for (start, len) in page_ranges(allocations, page_size())? {
        // SAFETY: a new anonymous mapping at a fixed address; MAP_FIXED_NOREPLACE makes
        // the kernel refuse a range already mapped instead of replacing it.
        let got = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if got == libc::MAP_FAILED {
            return Err(format!(
                "the recorded memory at {start:#x}..{:#x} cannot be placed there: {} (this \
                 process uses that address range)",
                start + len,
                std::io::Error::last_os_error()
            ));
        }
        if got as usize != start {
            // SAFETY: the mapping just made, unused (a kernel that took the address as a hint).
            unsafe { libc::munmap(got, len) };
            return Err(format!(
                "the recorded memory at {start:#x} was placed at {got:p} by the system"
            ));
        }
        placed.ranges.push((start, len));
    }
    Ok(placed)
}

/// Writes each allocation's recorded bytes at its address.
pub fn fill(_placed: &Placed, allocations: &[Allocation]) {
    for a in allocations {
        // SAFETY: `_placed` maps every byte of every allocation, writable.
        unsafe {
            std::ptr::copy_nonoverlapping(
                a.bytes.as_ptr(),
                a.base as usize as *mut u8,
                a.bytes.len(),
            )
        };
    }
}

/// The first byte where allocation memory differs from `expected` (per allocation, the
/// bytes after the launch): (allocation index, offset, expected, found).
pub fn first_difference(
    _placed: &Placed,
    allocations: &[Allocation],
    expected: &[Vec<u8>],
) -> Option<(usize, usize, u8, u8)> {
    for (i, (a, want)) in allocations.iter().zip(expected).enumerate() {
        // SAFETY: `_placed` maps every byte of every allocation.
        let now = unsafe { std::slice::from_raw_parts(a.base as usize as *const u8, want.len()) };
        if let Some(k) = now.iter().zip(want).position(|(x, y)| x != y) {
            return Some((i, k, want[k], now[k]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: u64, size: usize) -> Allocation {
        Allocation {
            base,
            kind: 0,
            bytes: vec![0; size],
        }
    }

    #[test]
    fn allocations_sharing_pages_are_mapped_once() {
        let ranges =
            page_ranges(&[at(0x10010, 16), at(0x10100, 64), at(0x13000, 4097)], 4096).unwrap();
        assert_eq!(ranges, vec![(0x10000, 0x1000), (0x13000, 0x2000)]);
        let touching = page_ranges(&[at(0x20000, 4096), at(0x21000, 1)], 4096).unwrap();
        assert_eq!(touching, vec![(0x20000, 0x2000)]);
    }

    #[test]
    fn an_address_this_process_uses_is_refused() {
        let mine = Box::new([7u8; 64]);
        let a = Allocation {
            base: mine.as_ptr() as u64,
            kind: 0,
            bytes: vec![1; 64],
        };
        let e = place(&[a]).err().unwrap();
        assert!(e.contains("cannot be placed there"), "{e}");
        assert_eq!(mine[0], 7);
    }
}
