//! Raw host memory for the host device: aligned allocation, copies and fills.

use super::block_cache::{block_size, BlockCache};
use super::huge_pages;
use crate::plugin::foundation::copy;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::foundation::parallel::{helpers_paused, in_pieces};
use std::alloc::Layout;

/// Every block is aligned to a cache line. Not more: glibc serves page-aligned requests
/// of a MiB or so with a fresh mmap each time (8 us a pair instead of 0.17 us). Blocks of
/// 2 MiB and more are mapped on huge-page boundaries (`huge_pages`) and kept by
/// `block_cache`, so their mapping is paid once.
fn layout(size: usize) -> Result<Layout> {
    let align = 64;
    Layout::from_size_align(size, align).map_err(|_| {
        Error::out_of_resources(format!(
            "{size} bytes is larger than any allocation the host can make"
        ))
    })
}

/// Allocates `size` bytes (`size > 0`), reusing a kept block of the same size when there
/// is one (`block_cache`); when the system has no memory left, the kept blocks are freed
/// and the allocation tried once more.
pub fn allocate(cache: &BlockCache, size: usize) -> Result<usize> {
    let block = block_size(size);
    if let Some(addr) = cache.take(block) {
        return Ok(addr);
    }
    let layout = layout(block)?;
    let fresh = || {
        if block >= huge_pages::HUGE_MIN {
            huge_pages::map(block)
        } else {
            // SAFETY: `layout` has a non-zero size (the runtime refuses size 0 before
            // calling in).
            let ptr = unsafe { std::alloc::alloc(layout) };
            (!ptr.is_null()).then_some(ptr as usize)
        }
    };
    fresh()
        .or_else(|| {
            release(cache);
            fresh()
        })
        .ok_or_else(|| Error::out_of_resources(format!("the host could not allocate {size} bytes")))
}

/// Frees a block `allocate` returned for `size` bytes: large ones go to the cache.
pub fn free(cache: &BlockCache, addr: usize, size: usize) -> Result<()> {
    for (addr, block) in cache.put(addr, block_size(size)) {
        free_block(addr, block)?;
    }
    Ok(())
}

/// Frees every kept block (out of memory, or the device is going away).
pub fn release(cache: &BlockCache) {
    for (addr, block) in cache.drain() {
        let _ = free_block(addr, block);
    }
}

fn free_block(addr: usize, block: usize) -> Result<()> {
    if block >= huge_pages::HUGE_MIN {
        huge_pages::unmap(addr, block);
        return Ok(());
    }
    let layout = layout(block)?;
    // SAFETY: every block below `HUGE_MIN` was allocated by `allocate` with `block_size`
    // of its request, which is `block` here, so the layout matches; each is freed once
    // (the cache hands a block out or back, never both).
    unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
    Ok(())
}

/// Copies and fills at least this large are split over the worker pool: one core alone
/// does not use all of the memory bandwidth.
const PARALLEL_MIN: usize = 8 << 20;
/// About the piece each thread takes at a time.
const PARALLEL_CHUNK: usize = 1 << 20;
/// The pieces toward the end are this much smaller, so the threads finish close
/// together: the caller's wait for a helper's last piece is a quarter as long.
const TAIL_DIVISOR: usize = 4;

pub fn copy(dst: usize, src: usize, size: usize) {
    copy_split_unless(dst, src, size, helpers_paused)
}

/// `copy`, with `paused` saying whether helpers are paused (asked only of a copy large
/// enough to split).
fn copy_split_unless(dst: usize, src: usize, size: usize, paused: impl FnOnce() -> bool) {
    let whole = || {
        // SAFETY: the C caller guarantees both ranges are valid host memory of `size`
        // bytes (the runtime has checked the ranges of known allocations); `copy` allows
        // overlap.
        unsafe { copy::move_bytes(dst as *mut u8, src as *const u8, size) };
    };
    let disjoint = dst.abs_diff(src) >= size;
    if !disjoint || size < PARALLEL_MIN || paused() {
        return whole();
    }
    let small = PARALLEL_CHUNK / TAIL_DIVISOR;
    let done = in_pieces(size, PARALLEL_CHUNK, small, &|at, n| {
        // SAFETY: as above, and the ranges do not overlap; each piece lies inside them
        // and is copied by exactly one thread.
        unsafe { copy::copy_bytes((dst + at) as *mut u8, (src + at) as *const u8, n) };
    });
    if !done {
        whole();
    }
}

pub fn fill(dst: usize, pattern: &[u8], size: usize) {
    fill_split_unless(dst, pattern, size, helpers_paused)
}

/// `fill`, with `paused` as in `copy_split_unless`.
fn fill_split_unless(dst: usize, pattern: &[u8], size: usize, paused: impl FnOnce() -> bool) {
    if size < PARALLEL_MIN || pattern.is_empty() || paused() {
        return fill_serial(dst, pattern, size);
    }
    // Pieces hold whole repetitions of the pattern, so each starts with its first byte.
    let chunk = PARALLEL_CHUNK / pattern.len() * pattern.len();
    let chunk = chunk.max(pattern.len());
    let small = (chunk / TAIL_DIVISOR / pattern.len() * pattern.len()).max(pattern.len());
    if !in_pieces(size, chunk, small, &|at, n| {
        fill_serial(dst + at, pattern, n)
    }) {
        fill_serial(dst, pattern, size);
    }
}

fn fill_serial(dst: usize, pattern: &[u8], size: usize) {
    // SAFETY: the C caller guarantees `[dst, dst + size)` is valid, writable host memory;
    // the runtime has checked that `size` is a multiple of the pattern's length.
    let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, size) };
    if size == 0 || pattern.is_empty() {
        return;
    }
    if let [byte] = pattern {
        out.fill(*byte);
        return;
    }
    if let Some(word) = repeated_word(pattern) {
        if size >= WORD_FILL_MIN && store_words(out, word) {
            return;
        }
    }
    // Write the pattern once, then double the filled prefix up to a block that stays in
    // the L1 cache, then copy that block over the rest: each step is one memcpy, and past
    // the first block every copy reads from the cache, so the fill moves about as many
    // bytes through memory as memset (doubling all the way read the growing prefix back
    // from memory: 1.5x memset's time at 64 MiB).
    let step = pattern.len().min(size);
    out[..step].copy_from_slice(&pattern[..step]);
    let block = (FILL_BLOCK / step * step).max(step).min(size);
    let mut filled = step;
    while filled < block {
        let n = filled.min(block - filled);
        out.copy_within(..n, filled);
        filled += n;
    }
    let (first, rest) = out.split_at_mut(block);
    for piece in rest.chunks_mut(block) {
        piece.copy_from_slice(&first[..piece.len()]);
    }
}

/// The repeating block of a fill with a pattern longer than a byte (half an L1 cache).
const FILL_BLOCK: usize = 16 << 10;

/// From this size a fill with a 2-, 4- or 8-byte pattern is done with string stores.
const WORD_FILL_MIN: usize = 4096;

/// A 2-, 4- or 8-byte pattern repeated into 8 bytes (memory order), for word stores.
fn repeated_word(pattern: &[u8]) -> Option<u64> {
    if !matches!(pattern.len(), 2 | 4 | 8) {
        return None;
    }
    let mut bytes = [0u8; 8];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = pattern[i % pattern.len()];
    }
    Some(u64::from_ne_bytes(bytes))
}

/// Fills `out` (its length a multiple of the pattern's, which `word` repeats) with `rep
/// stosq`: the same fast-string stores glibc's memset uses for large blocks, which write
/// whole cache lines without reading them first (a fill by copies reads each line before
/// writing it: 64 MiB took 1.6x memset's time). Returns false where there is no such
/// instruction.
#[cfg(target_arch = "x86_64")]
fn store_words(out: &mut [u8], word: u64) -> bool {
    let words = out.len() / 8;
    // SAFETY: `rep stosq` writes `words` 8-byte values from `out`'s start, inside `out`;
    // the direction flag is clear (the ABI guarantees it at every call), and the
    // instruction changes no flags and only the registers named here.
    unsafe {
        std::arch::asm!(
            "rep stosq",
            inout("rcx") words => _,
            inout("rdi") out.as_mut_ptr() => _,
            in("rax") word,
            options(nostack, preserves_flags)
        );
    }
    // The rest is shorter than a word and starts at a whole number of words, so at the
    // pattern's start (the pattern's length divides 8).
    let tail = out.len() % 8;
    let at = out.len() - tail;
    out[at..].copy_from_slice(&word.to_ne_bytes()[..tail]);
    true
}

#[cfg(not(target_arch = "x86_64"))]
fn store_words(_: &mut [u8], _: u64) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device server hands fills over unchecked (a fuzzer's request included): no
    /// size may panic, and a size that is no multiple of the pattern ends mid-pattern.
    #[test]
    fn fills_of_any_size_stay_in_bounds() {
        for pattern in [&[][..], &[1u8, 2, 3, 4], &[1, 2, 3]] {
            for size in [0, 1, 3, 4095, 4097, FILL_BLOCK + 5] {
                let mut out = vec![0u8; size + 1];
                fill_serial(out.as_mut_ptr() as usize, pattern, size);
                assert_eq!(out[size], 0, "wrote past {size} bytes");
                for (i, b) in out[..size].iter().enumerate() {
                    let expected = if pattern.is_empty() {
                        0
                    } else {
                        pattern[i % pattern.len()]
                    };
                    assert_eq!(*b, expected);
                }
            }
        }
    }

    #[test]
    fn fills_repeat_any_pattern_exactly() {
        for pattern in [
            &[7u8][..],
            &[1, 2],
            &[1, 2, 3],
            &[9, 8, 7, 6],
            &[1, 2, 3, 4, 5, 6, 7, 8],
            &[5; 13],
        ] {
            let len = pattern.len();
            for reps in [
                1,
                2,
                5,
                FILL_BLOCK / len,
                FILL_BLOCK / len + 1,
                3 * FILL_BLOCK / len + 7,
            ] {
                let mut out = vec![0u8; reps * len];
                fill_serial(out.as_mut_ptr() as usize, pattern, out.len());
                assert!(
                    out.chunks(len).all(|c| c == pattern),
                    "{len}-byte pattern, {reps} times"
                );
            }
        }
    }

    #[test]
    fn large_copies_and_fills_split_over_cores_are_exact() {
        let size = 3 * 7_000_000; // above PARALLEL_MIN, a multiple of 3, not of the chunk
        let src: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut dst = vec![0u8; size];
        // Split whatever the machine's load (busy cores would pause the helpers and make
        // these whole copies).
        let split = || false;
        copy_split_unless(
            dst.as_mut_ptr() as usize,
            src.as_ptr() as usize,
            size,
            split,
        );
        assert!(dst == src);

        fill_split_unless(dst.as_mut_ptr() as usize, &[1, 2, 3], size, split);
        assert!(dst.chunks(3).all(|c| c == [1, 2, 3]));

        // And whole, as on busy cores.
        let mut whole = vec![0u8; size];
        copy_split_unless(
            whole.as_mut_ptr() as usize,
            src.as_ptr() as usize,
            size,
            || true,
        );
        assert!(whole == src);
        fill_split_unless(whole.as_mut_ptr() as usize, &[4, 5, 6], size, || true);
        assert!(whole.chunks(3).all(|c| c == [4, 5, 6]));

        // Overlapping ranges keep memmove's meaning.
        let mut buf: Vec<u8> = (0..PARALLEL_MIN * 2).map(|i| i as u8).collect();
        let base = buf.as_mut_ptr() as usize;
        copy(base + 1000, base, PARALLEL_MIN);
        assert!((0..PARALLEL_MIN).all(|i| buf[1000 + i] == i as u8));
    }
}
