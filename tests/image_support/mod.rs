//! Shared helpers for the image tests: fixtures, crafted images, a deterministic PRNG.
#![allow(dead_code)]

use offload::image::{
    minimal_cubin, write_fatbin, write_offload_binary_v2, FatbinEntryKind, OffloadImageKind,
    OffloadImageSpec, OffloadKind,
};

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/images/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every committed fixture file.
pub const FIXTURES: &[&str] = &[
    "amdgpu_gfx1030.co",
    "amdgpu_gfx90a_xnack_on.co",
    "cuda_sm_80.ptx",
    "host_aarch64.so",
    "host_lib.bc",
    "host_x86_64.o",
    "host_x86_64.so",
    "multi.offload",
    "omp_x86_64.offload",
    "omp_x86_64_host.o",
    "omp_x86_64_host.so",
];

/// A fatbin with PTX for sm_70, cubins for sm_80 and sm_86, and a compressed sm_90 cubin.
pub fn crafted_fatbin() -> Vec<u8> {
    let ptx = fixture("cuda_sm_80.ptx");
    let ptx70 = String::from_utf8(ptx)
        .unwrap()
        .replace(".target sm_80", ".target sm_70");
    write_fatbin(&[
        (FatbinEntryKind::Ptx, 70, ptx70.as_bytes(), false),
        (
            FatbinEntryKind::Cubin,
            80,
            &minimal_cubin(80, &["vector_add"]),
            false,
        ),
        (
            FatbinEntryKind::Cubin,
            86,
            &minimal_cubin(86, &["vector_add"]),
            false,
        ),
        (
            FatbinEntryKind::Cubin,
            90,
            &[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4],
            true,
        ),
    ])
}

/// A version-2 OffloadBinary with several entries (clang 19 writes only version 1).
pub fn crafted_offload_binary_v2() -> Vec<u8> {
    let gfx1030 = fixture("amdgpu_gfx1030.co");
    let ptx = fixture("cuda_sm_80.ptx");
    let cubin = minimal_cubin(90, &["k"]);
    write_offload_binary_v2(&[
        OffloadImageSpec {
            kind: OffloadImageKind::Object,
            offload_kind: OffloadKind::HIP,
            strings: &[("triple", "amdgcn-amd-amdhsa"), ("arch", "gfx1030")],
            image: &gfx1030,
        },
        OffloadImageSpec {
            kind: OffloadImageKind::Cubin,
            offload_kind: OffloadKind::CUDA,
            strings: &[("triple", "nvptx64-nvidia-cuda"), ("arch", "sm_90")],
            image: &cubin,
        },
        OffloadImageSpec {
            kind: OffloadImageKind::Ptx,
            offload_kind: OffloadKind::CUDA,
            strings: &[("triple", "nvptx64-nvidia-cuda"), ("arch", "sm_80")],
            image: &ptx,
        },
    ])
}

/// Fixtures plus crafted images: every format the readers know.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = FIXTURES
        .iter()
        .map(|n| (n.to_string(), fixture(n)))
        .collect();
    out.push(("crafted.fatbin".into(), crafted_fatbin()));
    out.push(("crafted_v2.offload".into(), crafted_offload_binary_v2()));
    out.push((
        "crafted_sm_86.cubin".into(),
        minimal_cubin(86, &["vector_add", "fill"]),
    ));
    out
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Values that tend to break readers: sizes near limits, offsets past the end.
const INTERESTING: &[u64] = &[
    0,
    1,
    7,
    8,
    0x7f,
    0xff,
    0x100,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0xffff_ffff,
    u64::MAX,
    u64::MAX - 7,
];

/// One random mutation of `input`: byte flips, interesting words, splices, truncation.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut b = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(6) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            2 if b.len() >= 8 => {
                let width = [2usize, 4, 8][rng.below(3)];
                let i = rng.below(b.len() - width + 1);
                let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
                b[i..i + width].copy_from_slice(&v[..width]);
            }
            3 => {
                let cut = rng.below(b.len() + 1);
                b.truncate(cut);
            }
            4 if !b.is_empty() => {
                // Copy a chunk of the input over another place (duplicates headers, tables).
                let len = 1 + rng.below(b.len().min(64));
                let from = rng.below(b.len() - len + 1);
                let to = rng.below(b.len() - len + 1);
                let chunk = b[from..from + len].to_vec();
                b[to..to + len].copy_from_slice(&chunk);
            }
            _ => {
                let n = rng.below(16);
                for _ in 0..n {
                    b.push(rng.next() as u8);
                }
            }
        }
    }
    b
}
