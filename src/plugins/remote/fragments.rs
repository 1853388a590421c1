//! Transfers of any size cut into fragments a single MPI message can carry (MPI counts
//! are `int`: one message holds less than 2 GiB), posted together and reassembled in
//! order (MPI does not overtake messages of one sender, tag and communicator). Sizes and
//! offsets are 64-bit throughout, so 2 GiB and more work, unlike LLVM's proposal.

/// The default fragment: 64 MiB, big enough that per-message overhead vanishes, small
/// enough that several stay in flight.
pub const DEFAULT_FRAGMENT: u64 = 64 << 20;

/// The largest fragment MPI can carry in one message of bytes.
pub const MAX_FRAGMENT: u64 = i32::MAX as u64;

/// The `(offset, length)` pieces of a `size`-byte transfer, each at most `fragment`
/// bytes (clamped to 1..=`MAX_FRAGMENT`); none for 0 bytes.
pub fn pieces(size: u64, fragment: u64) -> impl Iterator<Item = (u64, u64)> {
    let step = fragment.clamp(1, MAX_FRAGMENT);
    (0..size.div_ceil(step)).map(move |i| {
        let offset = i * step;
        (offset, step.min(size - offset))
    })
}

/// The number of fragments of a `size`-byte transfer.
pub fn count(size: u64, fragment: u64) -> u64 {
    size.div_ceil(fragment.clamp(1, MAX_FRAGMENT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_transfer_exactly() {
        let p: Vec<_> = pieces(10, 4).collect();
        assert_eq!(p, vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(pieces(0, 4).count(), 0);
        assert_eq!(pieces(8, 4).collect::<Vec<_>>(), vec![(0, 4), (4, 4)]);
    }

    #[test]
    fn two_gib_and_one_byte_needs_more_than_one_message() {
        let size = (2u64 << 30) + 1;
        let p: Vec<_> = pieces(size, u64::MAX).collect();
        assert_eq!(p.len(), 2, "one MPI message holds at most i32::MAX bytes");
        assert!(p.iter().all(|&(_, len)| len <= MAX_FRAGMENT));
        assert_eq!(p.iter().map(|&(_, len)| len).sum::<u64>(), size);
        assert_eq!(count(size, DEFAULT_FRAGMENT), 33);
        assert_eq!(
            count(size, 0),
            size,
            "a zero fragment size is clamped to one byte"
        );
    }
}
