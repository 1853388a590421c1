//! No reader may panic, loop or allocate without bound on any input. Every fixture is fed
//! truncated at every length and with random mutations (deterministic PRNG); the ignored
//! `stress_*` test is the stable-Rust fuzz driver (≥ 10^6 inputs per run in release mode).

mod image_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use image_support::{corpus, mutate, Rng};
use offload::image::{
    decode_msgpack, detect_format, embedded_offload_binaries, host_symbols, identify,
    offload_entries, parse_amdgpu_code_object, parse_cubin, parse_fatbin, parse_offload_binaries,
    parse_ptx, select_for, DeviceTarget,
};

/// The readers, each called on the input: they may fail, never panic.
type Reader = fn(&[u8]);

fn devices() -> [DeviceTarget; 4] {
    [
        DeviceTarget::host(),
        DeviceTarget::amdgpu("gfx90a", Some(true), Some(false)),
        DeviceTarget::amdgpu("gfx1030", None, None),
        DeviceTarget::cuda(86),
    ]
}

const READERS: &[(&str, Reader)] = &[
    ("identify", |b| drop(identify(b))),
    ("select_for", |b| {
        for d in devices() {
            if let Ok(s) = select_for(b, &d) {
                assert!(
                    s.range.end <= b.len() && s.range.start <= s.range.end,
                    "range {:?} of {}",
                    s.range,
                    b.len()
                );
            }
        }
    }),
    ("host_elf", |b| {
        drop(host_symbols(b));
        drop(offload_entries(b));
        drop(embedded_offload_binaries(b));
    }),
    ("amdgpu", |b| drop(parse_amdgpu_code_object(b))),
    ("msgpack", |b| drop(decode_msgpack(b))),
    ("cubin", |b| drop(parse_cubin(b))),
    ("ptx", |b| drop(parse_ptx(b))),
    ("fatbin", |b| drop(parse_fatbin(b))),
    ("offload_binary", |b| drop(parse_offload_binaries(b))),
    ("detect", |b| {
        let _ = detect_format(b);
    }),
];

/// Runs every reader on `input`; on a panic, saves the input and fails with its path.
fn check_all(origin: &str, input: &[u8]) {
    for (name, reader) in READERS {
        if catch_unwind(AssertUnwindSafe(|| reader(input))).is_err() {
            let path = std::env::temp_dir().join(format!("image-crash-{name}-{origin}.bin"));
            std::fs::write(&path, input).unwrap();
            panic!(
                "reader {name} panicked on an input derived from {origin}; saved to {}",
                path.display()
            );
        }
    }
}

/// Panics are caught and reported with the input; the default hook's output is noise.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

#[test]
fn every_fixture_truncated_at_every_length() {
    quiet_panics();
    for (name, bytes) in corpus() {
        for len in 0..=bytes.len() {
            let cut = &bytes[..len];
            check_all(&format!("{name}-cut-{len}"), cut);
        }
    }
}

#[test]
fn every_fixture_with_random_byte_flips() {
    quiet_panics();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for (name, bytes) in corpus() {
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            check_all(&name, &b);
        }
    }
}

#[test]
fn random_bytes_and_magic_prefixes() {
    quiet_panics();
    let mut rng = Rng(42);
    let magics: [&[u8]; 6] = [
        b"\x7fELF\x02\x01\x01",
        b"\x7fELF\x01\x02\x01",
        &[0x10, 0xff, 0x10, 0xad],
        &[0x50, 0xed, 0x55, 0xba],
        b".version 7.0\n.target sm_80\n",
        b"",
    ];
    for i in 0..3000 {
        let mut b = magics[i % magics.len()].to_vec();
        let n = rng.below(512);
        b.extend((0..n).map(|_| rng.next() as u8));
        check_all("random", &b);
    }
}

/// Stable-Rust fuzz driver: `cargo test --release --test image_robustness stress -- --ignored
/// --nocapture`; `IMAGE_FUZZ_INPUTS` sets the number of inputs (default 1,000,000), each
/// given to every reader. Mutations start from the fixtures and crafted images.
#[test]
#[ignore]
fn stress_readers_with_mutated_and_random_inputs() {
    quiet_panics();
    let total: usize = std::env::var("IMAGE_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = std::env::var("IMAGE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed);
    let corpus = corpus();
    let mut rng = Rng(seed | 1);
    let started = Instant::now();
    let mut ok = 0usize;
    for i in 0..total {
        let input = if i % 10 == 9 {
            // Pure noise, sometimes long.
            let n = rng.below(if i % 1000 == 999 { 1 << 16 } else { 256 });
            (0..n).map(|_| rng.next() as u8).collect()
        } else {
            let (_, base) = &corpus[rng.below(corpus.len())];
            mutate(&mut rng, base)
        };
        check_all(&format!("stress-{seed}-{i}"), &input);
        ok += identify(&input).is_ok() as usize;
    }
    println!(
        "{total} inputs x {} readers in {:.1?}: no panics; identify accepted {ok}",
        READERS.len(),
        started.elapsed()
    );
}

/// Writes the corpus (fixtures and crafted images) as fuzzing seeds into
/// `$IMAGE_FUZZ_SEEDS` (used by `fuzz/run-all.sh`).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let Ok(dir) = std::env::var("IMAGE_FUZZ_SEEDS") else {
        println!("IMAGE_FUZZ_SEEDS is not set: no seeds written");
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in corpus() {
        std::fs::write(format!("{dir}/{name}"), bytes).unwrap();
    }
}
