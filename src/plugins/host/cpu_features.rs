//! What the CPU the host device runs on really supports, for the device-info
//! queries `OL_DEVICE_INFO_{SINGLE,DOUBLE,HALF}_FP_CONFIG`,
//! `OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_*` and `OL_DEVICE_INFO_MEMORY_CLOCK_RATE`.
//!
//! The host device's kernels are native code for this CPU, so the honest answer
//! depends on the features detected at run time, not on the build target.
//! Detection is split in two so the policy is testable on any machine:
//! `from_isa` is a pure function from a small `Isa` of booleans to the
//! answers, and `isa_of_this_cpu` fills the booleans from the running CPU.
//! Nothing here needs `unsafe`: `is_*_feature_detected!` already checks that
//! the OS saves the wide register state (XCR0 via xgetbv for AVX / AVX-512),
//! and `__cpuid` is a safe function in Rust 1.95.

use crate::plugin::fp;
use std::path::Path;

/// Full IEEE 754 hardware arithmetic: correctly rounded `/` and `sqrt`, all
/// four rounding modes, inf/NaN and denormals (FMA is reported separately).
const IEEE: u32 = fp::CORRECTLY_ROUNDED_DIVIDE_SQRT
    | fp::ROUND_TO_NEAREST
    | fp::ROUND_TO_ZERO
    | fp::ROUND_TO_INF
    | fp::INF_NAN
    | fp::DENORM;

/// The answers to the FP-config and native-vector-width queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFeatures {
    pub single_fp: u32,
    pub double_fp: u32,
    /// 0 when the CPU has no native half-precision arithmetic.
    pub half_fp: u32,
    pub vector_width: NativeVectorWidths,
}

/// OpenCL meaning: how many elements of each type fit in the widest native
/// vector register that has arithmetic for that element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeVectorWidths {
    pub char: u32,
    pub short: u32,
    pub int: u32,
    pub long: u32,
    pub float: u32,
    pub double: u32,
    /// 0 exactly when `half_fp` is 0.
    pub half: u32,
}

// Each target builds only its own variant outside tests.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Arch {
    X86_64,
    Aarch64,
    #[default]
    Other,
}

/// The CPU features the answers depend on (each already checked for OS support).
#[derive(Clone, Copy, Debug, Default)]
struct Isa {
    arch: Arch,
    avx: bool,
    avx2: bool,
    avx512f: bool,
    avx512bw: bool,
    /// FMA3 or AMD's FMA4.
    fma: bool,
    avx512fp16: bool,
    neon: bool,
    /// AArch64 FEAT_FP16: half-precision data-processing instructions.
    fp16: bool,
}

/// Element counts for register widths in bytes: `(char/short, int/long,
/// float/double, half)`; a half width of 0 means no half arithmetic.
fn widths(int8_16: u32, int32_64: u32, fp: u32, half: u32) -> NativeVectorWidths {
    NativeVectorWidths {
        char: int8_16,
        short: int8_16 / 2,
        int: int32_64 / 4,
        long: int32_64 / 8,
        float: fp / 4,
        double: fp / 8,
        half: half / 2,
    }
}

/// The pure policy: what to answer for a given set of CPU features.
///
/// - x86_64: SSE2 (baseline) is IEEE single and double with all rounding
///   modes, inf/NaN and denormals; FMA only with FMA3 or FMA4. Half precision
///   needs AVX512-FP16 (F16C only converts). Registers: 64 bytes with
///   AVX-512F (byte/word ops need AVX512BW, else 32 bytes), 32 bytes with
///   AVX2 (integers) / AVX (floats), else 16 bytes.
/// - aarch64: IEEE single and double, FMA is part of the base FP ISA; half
///   arithmetic with FEAT_FP16. NEON registers are 16 bytes; SVE may be wider
///   but its length is a run-time property we do not read, so 16 is reported.
/// - anything else: the OpenCL floor for an FP-capable device (round to
///   nearest, inf/NaN), no half, and scalar (width 1) vectors.
fn from_isa(isa: &Isa) -> CpuFeatures {
    // The width of the first choice whose feature is present, else 16 bytes.
    let pick = |choices: &[(bool, u32)]| choices.iter().find(|c| c.0).map_or(16, |c| c.1);
    let full_half = |has: bool| if has { IEEE | fp::FMA } else { 0 };
    let (fp, half_fp, vector_width) = match isa.arch {
        Arch::X86_64 => {
            let int = pick(&[(isa.avx512f, 64), (isa.avx2, 32)]);
            let small = pick(&[
                (isa.avx512f && isa.avx512bw, 64),
                (isa.avx2 || isa.avx512f, 32),
            ]);
            let float = pick(&[(isa.avx512f, 64), (isa.avx, 32)]);
            let half = if isa.avx512fp16 { 64 } else { 0 };
            let fp = IEEE | if isa.fma { fp::FMA } else { 0 };
            (
                fp,
                full_half(isa.avx512fp16),
                widths(small, int, float, half),
            )
        }
        Arch::Aarch64 if isa.neon => {
            let half = if isa.fp16 { 16 } else { 0 };
            (
                IEEE | fp::FMA,
                full_half(isa.fp16),
                widths(16, 16, 16, half),
            )
        }
        Arch::Aarch64 => (IEEE | fp::FMA, full_half(isa.fp16), SCALAR),
        Arch::Other => (fp::ROUND_TO_NEAREST | fp::INF_NAN, 0, SCALAR),
    };
    CpuFeatures {
        single_fp: fp,
        double_fp: fp,
        half_fp,
        vector_width,
    }
}

const SCALAR: NativeVectorWidths = NativeVectorWidths {
    char: 1,
    short: 1,
    int: 1,
    long: 1,
    float: 1,
    double: 1,
    half: 0,
};

#[cfg(target_arch = "x86_64")]
fn isa_of_this_cpu() -> Isa {
    use std::arch::is_x86_feature_detected as has;
    use std::arch::x86_64::__cpuid;
    // FMA4 (AMD family 15h) is not a name std knows: CPUID 0x8000_0001 ECX bit 16,
    // usable only when the OS saves the YMM state, which the "avx" check covers.
    let fma4 = has!("avx")
        && __cpuid(0x8000_0000).eax >= 0x8000_0001
        && __cpuid(0x8000_0001).ecx & (1 << 16) != 0;
    Isa {
        arch: Arch::X86_64,
        avx: has!("avx"),
        avx2: has!("avx2"),
        avx512f: has!("avx512f"),
        avx512bw: has!("avx512bw"),
        fma: has!("fma") || fma4,
        avx512fp16: has!("avx512fp16"),
        ..Isa::default()
    }
}

#[cfg(target_arch = "aarch64")]
fn isa_of_this_cpu() -> Isa {
    use std::arch::is_aarch64_feature_detected as has;
    Isa {
        arch: Arch::Aarch64,
        neon: has!("neon"),
        fp16: has!("fp16"),
        ..Isa::default()
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn isa_of_this_cpu() -> Isa {
    Isa::default()
}

/// Detects the running CPU's features (a few CPUID reads; cache the result).
pub fn detect() -> CpuFeatures {
    from_isa(&isa_of_this_cpu())
}

/// The memory clock in MHz (the unit of `OL_DEVICE_INFO_MEMORY_CLOCK_RATE` in
/// OffloadAPI.h), from the SMBIOS type-17 entries Linux exposes under
/// `/sys/firmware/dmi/entries/17-*/raw`: the highest of any populated module.
///
/// `None` when nothing is readable: those files are usually root-only, and VMs
/// often have no type-17 entries. The caller then answers 0 ("unknown").
pub fn memory_clock_mhz() -> Option<u32> {
    max_memory_clock_in(Path::new("/sys/firmware/dmi/entries"))
}

fn max_memory_clock_in(dir: &Path) -> Option<u32> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("17-"))
        .filter_map(|e| std::fs::read(e.path().join("raw")).ok())
        .filter_map(|raw| parse_smbios_memory_device(&raw))
        .max()
}

/// One SMBIOS type-17 (Memory Device) structure -> its memory clock in MHz.
///
/// SMBIOS gives speeds as data rates in MT/s; DDR memory moves two transfers
/// per I/O clock, so the clock in MHz is MT/s / 2 (DDR4-3200 -> 1600). That is
/// also what CUDA's memory clock rate means (half the per-pin data rate), so
/// host and GPU answers compare like with like. The configured speed (offset
/// 0x20, SMBIOS 2.7+) is preferred over the module's rated maximum (0x15);
/// either may hold 0xFFFF to point at its 32-bit extended field (0x58 / 0x54).
/// `None` for anything else, malformed or truncated: wrong type, an empty
/// slot (size 0), or speeds unknown (0).
pub fn parse_smbios_memory_device(raw: &[u8]) -> Option<u32> {
    if raw.first() != Some(&17) {
        return None;
    }
    let formatted = raw.get(..usize::from(*raw.get(1)?))?;
    // Little-endian field of `n` bytes at `off`, if the structure has it.
    let field = |off: usize, n: usize| {
        let bytes = formatted.get(off..off + n)?;
        Some(
            bytes
                .iter()
                .rev()
                .fold(0u32, |acc, &b| acc << 8 | u32::from(b)),
        )
    };
    let speed = |off: usize, extended: usize| -> Option<u32> {
        match field(off, 2)? {
            0 => None,
            0xFFFF => field(extended, 4)
                .map(|v| v & 0x7FFF_FFFF)
                .filter(|&v| v != 0),
            v => Some(v),
        }
    };
    if field(0x0C, 2)? == 0 {
        return None; // size 0: no module installed in this slot
    }
    let mts = speed(0x20, 0x58).or_else(|| speed(0x15, 0x54))?;
    Some(mts / 2).filter(|&mhz| mhz != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_64_policy() {
        const F: bool = false;
        const T: bool = true;
        let half = IEEE | fp::FMA;
        #[rustfmt::skip]
        let cases = [
            // (avx, avx2, avx512f, avx512bw, fma, avx512fp16) -> answers
            ((F, F, F, F, F, F), IEEE, 0, widths(16, 16, 16, 0)), // SSE2 baseline
            ((T, F, F, F, F, F), IEEE, 0, widths(16, 16, 32, 0)), // AVX: floats only
            ((T, T, F, F, T, F), IEEE | fp::FMA, 0, widths(32, 32, 32, 0)), // AVX2+FMA(+F16C)
            ((T, T, T, F, T, F), IEEE | fp::FMA, 0, widths(32, 64, 64, 0)), // no AVX512BW
            ((T, T, T, T, T, F), IEEE | fp::FMA, 0, widths(64, 64, 64, 0)),
            ((T, T, T, T, T, T), IEEE | fp::FMA, half, widths(64, 64, 64, 64)),
        ];
        for ((avx, avx2, avx512f, avx512bw, fma, avx512fp16), fp, half_fp, vw) in cases {
            let isa = Isa {
                arch: Arch::X86_64,
                avx,
                avx2,
                avx512f,
                avx512bw,
                fma,
                avx512fp16,
                ..Isa::default()
            };
            let want = CpuFeatures {
                single_fp: fp,
                double_fp: fp,
                half_fp,
                vector_width: vw,
            };
            assert_eq!(from_isa(&isa), want, "{isa:?}");
        }
        let w = widths(64, 64, 64, 64);
        assert_eq!(
            (w.char, w.short, w.int, w.long, w.float, w.double, w.half),
            (64, 32, 16, 8, 16, 8, 32)
        );
    }

    #[test]
    fn aarch64_and_other() {
        let arm = |neon, fp16| {
            from_isa(&Isa {
                arch: Arch::Aarch64,
                neon,
                fp16,
                ..Isa::default()
            })
        };
        let neon = arm(true, false);
        assert_eq!(neon.double_fp, IEEE | fp::FMA);
        assert_eq!((neon.half_fp, neon.vector_width.half), (0, 0));
        assert_eq!((neon.vector_width.char, neon.vector_width.long), (16, 2));
        let fp16 = arm(true, true);
        assert_eq!((fp16.half_fp, fp16.vector_width.half), (IEEE | fp::FMA, 8));
        assert_eq!(arm(false, false).vector_width, SCALAR);
        let other = from_isa(&Isa::default());
        assert_eq!(other.single_fp, fp::ROUND_TO_NEAREST | fp::INF_NAN);
        assert_eq!((other.half_fp, other.vector_width.int), (0, 1));
    }

    #[test]
    fn detect_is_consistent() {
        let c = detect();
        assert_eq!(c.half_fp == 0, c.vector_width.half == 0);
        assert!(c.vector_width.char >= c.vector_width.long);
    }

    /// A type-17 structure of `len` formatted bytes with a string-set tail.
    fn entry(len: u8, size: u16, speed: u16, configured: u16) -> Vec<u8> {
        let mut v = vec![0u8; 0x5C];
        (v[0], v[1]) = (17, len);
        v[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
        v[0x15..0x17].copy_from_slice(&speed.to_le_bytes());
        v[0x20..0x22].copy_from_slice(&configured.to_le_bytes());
        v.truncate(usize::from(len));
        v.extend_from_slice(b"DIMM 0\0\0");
        v
    }

    #[test]
    fn parses_speeds_and_never_panics() {
        let parse = parse_smbios_memory_device;
        let cases = [
            // (length, size, speed, configured speed) -> MHz
            ((0x28, 8192, 3200, 2933), Some(1466)),
            ((0x28, 8192, 3200, 0), Some(1600)), // configured unknown: rated
            ((0x1B, 8192, 2666, 0), Some(1333)), // SMBIOS 2.3: no 0x20 field
            ((0x28, 0, 3200, 3200), None),       // empty slot
            ((0x28, 8192, 0, 0), None),          // speeds unknown
            ((0x28, 8192, 0xFFFF, 0xFFFF), None), // too short for 0x54/0x58
        ];
        for ((len, size, speed, configured), want) in cases {
            assert_eq!(parse(&entry(len, size, speed, configured)), want);
        }
        let mut ext = entry(0x5C, 0x7FFF, 0xFFFF, 0xFFFF);
        ext[0x54..0x58].copy_from_slice(&70_000u32.to_le_bytes());
        ext[0x58..0x5C].copy_from_slice(&(0x8000_0000u32 | 66_000).to_le_bytes());
        assert_eq!(parse(&ext), Some(33_000));
        let good = entry(0x28, 8192, 3200, 3200);
        for n in 0..0x28 {
            assert_eq!(parse(&good[..n]), None, "truncated to {n}");
        }
        assert_eq!((parse(&[]), parse(&[17, 0xFF])), (None, None));
        let mut wrong_type = good;
        wrong_type[0] = 16;
        assert_eq!(parse(&wrong_type), None);
    }

    #[test]
    fn takes_the_fastest_populated_module() {
        let dir = std::env::temp_dir().join(format!("cpuf-dmi-{}", std::process::id()));
        let modules = [
            ("17-0", entry(0x28, 8192, 3200, 2400)),
            ("17-1", entry(0x28, 8192, 3200, 3200)),
            ("17-2", entry(0x28, 0, 4800, 4800)),
            ("16-0", entry(0x28, 8192, 6400, 6400)),
        ];
        for (name, raw) in &modules {
            std::fs::create_dir_all(dir.join(name)).expect("create temp dir");
            std::fs::write(dir.join(name).join("raw"), raw).expect("write temp file");
        }
        assert_eq!(max_memory_clock_in(&dir), Some(1600));
        assert_eq!(max_memory_clock_in(&dir.join("missing")), None);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = memory_clock_mhz(); // must not panic without permission
    }
}
