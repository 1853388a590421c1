//! Copying bytes without memcpy's worst case.
//!
//! glibc copies blocks of some kilobytes up to a few hundred with `rep movsb`. On CPUs
//! with fast short `rep movsb` (AMD Zen 3 and 4 among them) that instruction slows down
//! 5 to 40 times when the destination lies a few bytes past the source modulo a page
//! (the loads alias the stores just made); glibc avoids it on AMD only from 2.39
//! (sourceware bug 30994), Debian 12 has 2.36. Measured here (AMD EPYC, glibc 2.36):
//! 4 KiB at a distance of 9 bytes 1.5 us against 0.06 us, 64 KiB 24 us against 1.4 us.
//! Buffers from `malloc` (a reply's data after its header, a received message) land at
//! such distances by chance, and a copy's speed then depends on where the allocator put
//! them. `copy_bytes` cuts such a copy into pieces below glibc's `rep movsb` threshold,
//! which it copies with vector loads and stores, as fast as the good case.
//!
//! Only copies below the size where glibc stops using `rep movsb` are cut: on AMD CPUs
//! glibc 2.36 stops at the L2 cache's size (its `rep_movsb_stop_threshold`), and above
//! it copies with vector stores at full speed whatever the distance, faster than 2 KiB
//! pieces would (64 MiB in 1 MiB pieces at a distance of 16 bytes: 13.0 ms whole,
//! 16.2 ms in 2 KiB pieces; in 448 KiB pieces: 34.7 ms whole, 12.1 in 2 KiB pieces).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Pieces a copy at a bad distance is cut into: below every glibc's `rep movsb`
/// threshold (at least 2,048 + 1 bytes).
const PIECE: usize = 2048;

/// Destination-past-source distances (modulo a page) at which `rep movsb` is slow.
const SLOW_DISTANCE: std::ops::Range<usize> = 1..64;

/// Where glibc stops using `rep movsb` when the C library does not give the L2 cache's
/// size: the L2 of the CPUs concerned is 512 KiB (Zen 2, 3) or 1 MiB (Zen 4).
const REP_MOVSB_STOP_UNKNOWN: usize = 1 << 20;

/// Whether a copy of `len` bytes from `src` to `dst` would take memcpy's slow path.
fn at_slow_distance(dst: usize, src: usize, len: usize) -> bool {
    let distance = dst.wrapping_sub(src) % 4096;
    len > PIECE && len < rep_movsb_stop() && SLOW_DISTANCE.contains(&distance)
}

/// The size from which memcpy no longer uses `rep movsb`: the L2 cache's (read once).
fn rep_movsb_stop() -> usize {
    static STOP: AtomicUsize = AtomicUsize::new(0);
    match STOP.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf has no preconditions.
            let l2 = unsafe { libc::sysconf(libc::_SC_LEVEL2_CACHE_SIZE) };
            let stop = if l2 > 0 {
                l2 as usize
            } else {
                REP_MOVSB_STOP_UNKNOWN
            };
            STOP.store(stop, Ordering::Relaxed);
            stop
        }
        stop => stop,
    }
}

/// Copies `len` bytes from `src` to `dst`, as `ptr::copy_nonoverlapping` does.
///
/// # Safety
/// As `ptr::copy_nonoverlapping`: `src` readable and `dst` writable for `len` bytes, the
/// two ranges disjoint.
pub unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    if !at_slow_distance(dst as usize, src as usize, len) {
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        return;
    }
    let mut at = 0;
    while at < len {
        let n = PIECE.min(len - at);
        // `black_box` keeps the compiler from joining the pieces back into one memcpy.
        let (to, from) = std::hint::black_box((dst.wrapping_add(at), src.wrapping_add(at)));
        // SAFETY: each piece lies inside the caller's ranges.
        unsafe { std::ptr::copy_nonoverlapping(from, to, n) };
        at += n;
    }
}

/// Copies `len` bytes from `src` to `dst`, as `ptr::copy` (memmove) does: the ranges may
/// overlap; disjoint ones go through `copy_bytes`.
///
/// # Safety
/// As `ptr::copy`: `src` readable and `dst` writable for `len` bytes.
pub unsafe fn move_bytes(dst: *mut u8, src: *const u8, len: usize) {
    if (dst as usize).abs_diff(src as usize) >= len {
        // SAFETY: the caller's promise; the ranges are disjoint.
        unsafe { copy_bytes(dst, src, len) }
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy(src, dst, len) }
    }
}

/// `dst.copy_from_slice(src)` through `copy_bytes`.
pub fn copy_slice(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy_slice: lengths differ");
    // SAFETY: two slices of equal length; `&mut` excludes overlap.
    unsafe { copy_bytes(dst.as_mut_ptr(), src.as_ptr(), src.len()) };
}

/// `src.to_vec()` through `copy_bytes`.
pub fn to_vec(src: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(src.len());
    extend_from(&mut v, src);
    v
}

/// `v.extend_from_slice(src)` through `copy_bytes`.
pub fn extend_from(v: &mut Vec<u8>, src: &[u8]) {
    v.reserve(src.len());
    let start = v.len();
    // SAFETY: `reserve` made room for `src.len()` bytes past `start`; a `&[u8]` cannot
    // point into the spare capacity of `v`, which we hold mutably.
    unsafe {
        copy_bytes(v.as_mut_ptr().add(start), src.as_ptr(), src.len());
        v.set_len(start + src.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_exact_at_every_distance_and_length() {
        let src: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut dst = vec![0u8; 20_100];
        for offset in [0, 1, 9, 16, 63, 64, 100] {
            for len in [0, 1, 2048, 2049, 4096, 4105, 10_007] {
                dst.fill(0);
                copy_slice(&mut dst[offset..offset + len], &src[..len]);
                assert_eq!(&dst[offset..offset + len], &src[..len], "{offset} {len}");
                assert!(dst[..offset].iter().all(|&b| b == 0));
                assert!(dst[offset + len..].iter().all(|&b| b == 0));
            }
        }
        assert_eq!(to_vec(&src[1..5000]), &src[1..5000]);
        let mut v = vec![5u8; 9];
        extend_from(&mut v, &src[..4096]);
        assert_eq!(&v[..9], &[5; 9]);
        assert_eq!(&v[9..], &src[..4096]);
    }

    #[test]
    fn only_long_copies_a_little_past_their_source_are_cut() {
        assert!(at_slow_distance(4096 + 9, 0, 4096));
        assert!(at_slow_distance(9, 4096 * 3, 4096));
        assert!(!at_slow_distance(64, 0, 4096));
        assert!(!at_slow_distance(0, 9, 4096)); // destination before the source
        assert!(!at_slow_distance(9, 0, 2048)); // short: no rep movsb
        let stop = rep_movsb_stop();
        assert!(stop >= 64 << 10, "{stop}");
        assert!(at_slow_distance(9, 0, stop - 1));
        assert!(!at_slow_distance(9, 0, stop)); // long: vector stores, no rep movsb
    }
}
