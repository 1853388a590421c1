//! Filling device memory with a pattern of any size, planned as a list of driver calls.
//!
//! The driver fills natively only with 1-, 2- and 4-byte values (`cuMemsetD8/16/32`,
//! the wider ones at their alignment). A pattern is first reduced to its shortest period
//! (8 zero bytes are 1 zero byte); a period of 1, 2 or 4 bytes is one native fill, with
//! at most 3 single bytes before and after where the address or size is not aligned.
//! Any other pattern is uploaded once, repeated to a few KiB, and then doubled in place
//! with device-to-device copies (each copies everything written so far), so a fill of
//! N bytes costs one small upload and about log2(N / 4 KiB) copies.
//!
//! The plan is pure, so it is tested here without a GPU; `CudaDevice::fill` runs it
//! synchronously, and a stream can run the same steps asynchronously.

/// One driver call of a fill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FillStep {
    /// `cuMemsetD8`: `count` bytes of `value`.
    Set8 { dst: u64, value: u8, count: usize },
    /// `cuMemsetD16`: `count` 16-bit values (`dst` 2-byte aligned).
    Set16 { dst: u64, value: u16, count: usize },
    /// `cuMemsetD32`: `count` 32-bit values (`dst` 4-byte aligned).
    Set32 { dst: u64, value: u32, count: usize },
    /// A host-to-device copy of `repeated(pattern, size)`.
    Upload { dst: u64, size: usize },
    /// A device-to-device copy of `size` bytes already filled at `src` to `dst`.
    Replicate { dst: u64, src: u64, size: usize },
}

/// Bytes uploaded from the host to start a general fill (rounded down to whole
/// repetitions of the pattern, at least one).
pub const UPLOAD_SEED: usize = 4096;

/// The shortest prefix of `pattern` that `pattern` repeats exactly.
pub fn period(pattern: &[u8]) -> &[u8] {
    let n = pattern.len();
    (1..n)
        .filter(|p| n % p == 0)
        .find(|&p| pattern.chunks(p).all(|c| c == &pattern[..p]))
        .map_or(pattern, |p| &pattern[..p])
}

/// `size` bytes of `pattern` repeated from its first byte (the data of an `Upload`).
pub fn repeated(pattern: &[u8], size: usize) -> Vec<u8> {
    pattern.iter().copied().cycle().take(size).collect()
}

/// The calls that fill `size` bytes at `dst` with repetitions of `pattern` (the last
/// one cut short if `size` is not a multiple of its length).
pub fn plan_fill(dst: u64, pattern: &[u8], size: usize) -> Vec<FillStep> {
    if pattern.is_empty() || size == 0 {
        return Vec::new();
    }
    let pattern = period(pattern);
    match pattern.len() {
        1 => vec![FillStep::Set8 {
            dst,
            value: pattern[0],
            count: size,
        }],
        p @ (2 | 4) => plan_native(dst, pattern, size, p),
        p => plan_general(dst, p, size),
    }
}

/// A 2- or 4-byte period: single bytes up to the first aligned address, one native fill
/// of the pattern as it stands there (rotated), single bytes after.
fn plan_native(dst: u64, pattern: &[u8], size: usize, p: usize) -> Vec<FillStep> {
    let misalignment = (dst % p as u64) as usize;
    let head = ((p - misalignment) % p).min(size);
    let body = (size - head) / p * p;
    let byte = |i: usize| pattern[i % p];
    let mut steps: Vec<FillStep> = (0..head)
        .map(|i| FillStep::Set8 {
            dst: dst + i as u64,
            value: byte(i),
            count: 1,
        })
        .collect();
    if body > 0 {
        let at = dst + head as u64;
        let rotated: Vec<u8> = (head..head + p).map(byte).collect();
        steps.push(if p == 2 {
            FillStep::Set16 {
                dst: at,
                // NVIDIA GPUs are little-endian: the first byte is the low one.
                value: u16::from_le_bytes([rotated[0], rotated[1]]),
                count: body / 2,
            }
        } else {
            FillStep::Set32 {
                dst: at,
                value: u32::from_le_bytes([rotated[0], rotated[1], rotated[2], rotated[3]]),
                count: body / 4,
            }
        });
    }
    steps.extend((head + body..size).map(|i| FillStep::Set8 {
        dst: dst + i as u64,
        value: byte(i),
        count: 1,
    }));
    steps
}

/// Any other period: upload a seed of whole repetitions, then double what is written.
fn plan_general(dst: u64, p: usize, size: usize) -> Vec<FillStep> {
    let seed = size.min((UPLOAD_SEED / p).max(1) * p);
    let mut steps = vec![FillStep::Upload { dst, size: seed }];
    let mut done = seed;
    while done < size {
        // What is written so far starts at a repetition boundary, so a copy of it
        // continues the pattern; the last copy is cut to the end.
        let n = done.min(size - done);
        steps.push(FillStep::Replicate {
            dst: dst + done as u64,
            src: dst,
            size: n,
        });
        done += n;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a plan on a byte array standing for device memory at `base`.
    fn run(plan: &[FillStep], pattern: &[u8], memory: &mut [u8], base: u64) {
        let at = |a: u64| (a - base) as usize;
        for step in plan {
            match *step {
                FillStep::Set8 { dst, value, count } => {
                    memory[at(dst)..at(dst) + count].fill(value);
                }
                FillStep::Set16 { dst, value, count } => {
                    assert_eq!(dst % 2, 0, "cuMemsetD16 needs 2-byte alignment");
                    for i in 0..count {
                        let o = at(dst) + 2 * i;
                        memory[o..o + 2].copy_from_slice(&value.to_le_bytes());
                    }
                }
                FillStep::Set32 { dst, value, count } => {
                    assert_eq!(dst % 4, 0, "cuMemsetD32 needs 4-byte alignment");
                    for i in 0..count {
                        let o = at(dst) + 4 * i;
                        memory[o..o + 4].copy_from_slice(&value.to_le_bytes());
                    }
                }
                FillStep::Upload { dst, size } => {
                    memory[at(dst)..at(dst) + size].copy_from_slice(&repeated(pattern, size));
                }
                FillStep::Replicate { dst, src, size } => {
                    assert!(src + size as u64 <= dst, "copies never overlap");
                    memory.copy_within(at(src)..at(src) + size, at(dst));
                }
            }
        }
    }

    fn check(dst: u64, pattern: &[u8], size: usize) -> Vec<FillStep> {
        let base = dst - dst % 64;
        let mut memory = vec![0xEEu8; size + 128];
        let plan = plan_fill(dst, pattern, size);
        run(&plan, pattern, &mut memory, base);
        let start = (dst - base) as usize;
        assert_eq!(
            &memory[start..start + size],
            &repeated(pattern, size)[..],
            "dst {dst:#x} pattern {pattern:?} size {size}"
        );
        assert!(memory[..start].iter().all(|&b| b == 0xEE), "nothing before");
        assert!(
            memory[start + size..].iter().all(|&b| b == 0xEE),
            "nothing after"
        );
        plan
    }

    #[test]
    fn periods() {
        assert_eq!(period(&[0; 8]), &[0]);
        assert_eq!(period(&[1, 2, 1, 2]), &[1, 2]);
        assert_eq!(period(&[1, 2, 3, 4, 1, 2, 3, 4]), &[1, 2, 3, 4]);
        assert_eq!(period(&[1, 2, 3]), &[1, 2, 3]);
        assert_eq!(period(&[1, 2, 1]), &[1, 2, 1]);
        assert_eq!(period(&[5]), &[5]);
    }

    #[test]
    fn native_sizes_are_one_call_when_aligned() {
        assert_eq!(
            check(0x1000, &[0xAB], 1000),
            vec![FillStep::Set8 {
                dst: 0x1000,
                value: 0xAB,
                count: 1000
            }]
        );
        assert_eq!(
            check(0x1000, &[0x34, 0x12], 64),
            vec![FillStep::Set16 {
                dst: 0x1000,
                value: 0x1234,
                count: 32
            }]
        );
        assert_eq!(
            check(0x1000, &[1, 2, 3, 4], 64),
            vec![FillStep::Set32 {
                dst: 0x1000,
                value: 0x04030201,
                count: 16
            }]
        );
        // A wider pattern with a short period is the narrow fill.
        assert_eq!(
            check(0x1000, &[0; 16], 4096),
            vec![FillStep::Set8 {
                dst: 0x1000,
                value: 0,
                count: 4096
            }]
        );
        assert_eq!(
            check(0x1000, &[9, 8, 7, 6, 9, 8, 7, 6], 64),
            vec![FillStep::Set32 {
                dst: 0x1000,
                value: 0x06070809,
                count: 16
            }]
        );
    }

    #[test]
    fn misaligned_native_fills_use_single_bytes_at_the_edges() {
        let plan = check(0x1001, &[1, 2, 3, 4], 40);
        assert_eq!(plan.len(), 3 + 1 + 1, "3 head bytes, one fill, 1 tail byte");
        assert!(matches!(
            plan[3],
            FillStep::Set32 {
                dst: 0x1004,
                value: 0x03020104,
                count: 9
            }
        ));
        let plan = check(0x1001, &[0xAA, 0xBB], 10);
        assert!(matches!(
            plan[1],
            FillStep::Set16 {
                dst: 0x1002,
                value: 0xAABB,
                count: 4
            }
        ));
        for offset in 0..8 {
            for size in 0..24 {
                check(0x2000 + offset, &[1, 2], size);
                check(0x2000 + offset, &[1, 2, 3, 4], size);
            }
        }
    }

    #[test]
    fn other_patterns_upload_once_and_double() {
        let pattern: Vec<u8> = (1..=12).collect();
        let plan = check(0x4000, &pattern, 1 << 16);
        assert_eq!(
            plan[0],
            FillStep::Upload {
                dst: 0x4000,
                size: 4092
            }
        );
        assert!(plan[1..]
            .iter()
            .all(|s| matches!(s, FillStep::Replicate { src: 0x4000, .. })));
        assert!(
            plan.len() <= 1 + 5,
            "log2(64 KiB / 4 KiB) + 1 copies: {}",
            plan.len()
        );
        // Odd sizes and offsets, sizes below one seed, patterns larger than the seed.
        for (offset, pattern, size) in [
            (3u64, vec![1u8, 2, 3], 10usize),
            (1, vec![1, 2, 3], 3 * 5000 + 2),
            (0, (0..=255).collect::<Vec<u8>>(), 256 * 40),
            (
                5,
                vec![7u8; 3].into_iter().chain([1]).chain([2; 4]).collect(),
                1000,
            ),
            (
                0,
                (0..=255)
                    .cycle()
                    .take(10_000)
                    .map(|b: u8| b ^ 0x5A)
                    .collect(),
                25_000,
            ),
        ] {
            check(0x8000 + offset, &pattern, size);
        }
    }

    #[test]
    fn nothing_to_do() {
        assert!(plan_fill(0x1000, &[1, 2, 3], 0).is_empty());
        assert!(plan_fill(0x1000, &[], 16).is_empty());
    }
}
