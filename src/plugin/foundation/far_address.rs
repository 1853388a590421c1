//! Addresses no process is likely to use by itself: a random place between 2^45 and
//! 2^46 (32-64 TiB). On x86_64 Linux the kernel hands out mappings top-down from just
//! below the stack (near 2^47), a program's own image and heap sit near the bottom, and
//! AddressSanitizer's shadow ends just above 2^44 and its allocator starts at 0x6000 <<
//! 32 (above 2^46). Memory that another process must later find free at the same
//! address (a recording's region, replayed elsewhere; a remote server's memory, mirrored
//! by the application) goes there rather than where the kernel would pick, which lies
//! among the next process's libraries and thread stacks by chance of its layout.

/// The band's first address.
pub const FAR_START: usize = 1 << 45;
/// The band's end (exclusive).
pub const FAR_END: usize = 1 << 46;

/// A random start for `size` bytes, aligned to `align` (a power of two), that keeps the
/// range inside the band; `None` when the band cannot hold it. Each call picks anew, so
/// a caller whose pick is taken tries again somewhere else.
pub fn pick(size: usize, align: usize) -> Option<usize> {
    use std::hash::{BuildHasher, Hasher};
    debug_assert!(align.is_power_of_two());
    let last_start = FAR_END.checked_sub(size)? & !(align - 1);
    if last_start < FAR_START {
        return None;
    }
    // RandomState's keys differ per process and per call's hasher: enough spread, no
    // random-number crate.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_usize(size);
    let span = last_start - FAR_START + align;
    Some((FAR_START + (hasher.finish() as usize % span)) & !(align - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_fit_the_band_aligned_and_spread() {
        let picks: Vec<usize> = (0..16).map(|_| pick(64 << 30, 2 << 20).unwrap()).collect();
        for &at in &picks {
            assert_eq!(at % (2 << 20), 0, "{at:#x}");
            assert!(at >= FAR_START && at + (64 << 30) <= FAR_END, "{at:#x}");
        }
        // Sixteen picks in 32 TiB: not all within one gigabyte of the first.
        assert!(
            picks.iter().any(|&p| p.abs_diff(picks[0]) > 1 << 30),
            "{picks:x?}"
        );
    }

    #[test]
    fn a_size_the_band_cannot_hold_gets_no_pick() {
        assert_eq!(pick(FAR_END - FAR_START + 1, 4096), None);
        assert_eq!(pick(usize::MAX, 4096), None);
        assert_eq!(pick(FAR_END - FAR_START, 4096), Some(FAR_START));
    }
}
