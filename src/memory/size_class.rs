//! Size classes: which requests are pooled, and the block size each is rounded to.

/// Smallest block, and the alignment every block keeps (the backend guarantees 64).
pub const MIN_BLOCK: usize = 64;
const MIN_SHIFT: u32 = MIN_BLOCK.trailing_zeros();
/// Largest threshold honoured; larger ones are clamped so block sizes cannot overflow.
const MAX_THRESHOLD: usize = 1 << (usize::BITS - 2);

/// Power-of-two classes from [`MIN_BLOCK`] up to the class holding the threshold.
///
/// Class `c` holds blocks of `MIN_BLOCK << c` bytes. A request of `size` bytes,
/// `0 < size <= threshold`, uses the smallest class that fits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeClasses {
    threshold: usize,
    count: usize,
}

impl SizeClasses {
    pub fn new(threshold: usize) -> Self {
        let threshold = threshold.min(MAX_THRESHOLD);
        let count = if threshold == 0 {
            0
        } else {
            index(threshold) + 1
        };
        SizeClasses { threshold, count }
    }

    /// Requests larger than this go to the backend.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Number of classes (0 when pooling is off).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The class of a `size`-byte request, or `None` when it bypasses the pool.
    #[inline]
    pub fn class_of(&self, size: usize) -> Option<usize> {
        if size == 0 || size > self.threshold {
            None
        } else {
            Some(index(size))
        }
    }

    /// Bytes in a block of class `class`.
    #[inline]
    pub fn block_size(class: usize) -> usize {
        MIN_BLOCK << class
    }
}

/// Index of the smallest power of two >= max(size, 64), counted from 64. `size > 0`.
#[inline]
fn index(size: usize) -> usize {
    let bits = usize::BITS - ((size - 1) | (MIN_BLOCK - 1)).leading_zeros();
    (bits - MIN_SHIFT) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        let c = SizeClasses::new(1 << 20);
        assert_eq!(c.count(), 15);
        for (size, block) in [
            (1, 64),
            (64, 64),
            (65, 128),
            (128, 128),
            (4095, 4096),
            (4096, 4096),
            (4097, 8192),
            (1 << 20, 1 << 20),
        ] {
            let class = c.class_of(size).unwrap();
            assert_eq!(SizeClasses::block_size(class), block, "size {size}");
        }
        assert_eq!(c.class_of(0), None);
        assert_eq!(c.class_of((1 << 20) + 1), None);
    }

    #[test]
    fn odd_and_extreme_thresholds() {
        let c = SizeClasses::new(1000);
        assert_eq!(c.count(), 5); // 64 .. 1024
        assert_eq!(SizeClasses::block_size(c.class_of(1000).unwrap()), 1024);
        assert_eq!(c.class_of(1001), None);

        let off = SizeClasses::new(0);
        assert_eq!(off.count(), 0);
        assert_eq!(off.class_of(1), None);

        let tiny = SizeClasses::new(1);
        assert_eq!(tiny.count(), 1);
        assert_eq!(tiny.class_of(1), Some(0));
        assert_eq!(tiny.class_of(2), None);

        let huge = SizeClasses::new(usize::MAX);
        assert_eq!(huge.threshold(), MAX_THRESHOLD);
        let last = huge.class_of(MAX_THRESHOLD).unwrap();
        assert_eq!(last + 1, huge.count());
        assert_eq!(SizeClasses::block_size(last), MAX_THRESHOLD);
        assert_eq!(huge.class_of(MAX_THRESHOLD + 1), None);
    }

    #[test]
    fn every_block_is_aligned_and_fits() {
        let c = SizeClasses::new(1 << 16);
        for size in 1..=(1 << 16) {
            let block = SizeClasses::block_size(c.class_of(size).unwrap());
            assert!(block >= size && block % MIN_BLOCK == 0);
            assert!(block == MIN_BLOCK || block / 2 < size);
        }
    }
}
