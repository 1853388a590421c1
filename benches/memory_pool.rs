//! Alloc+free pairs through the memory manager: pooled vs threshold 0 (every call reaches
//! the backend), against a backend that uses the system allocator with 64-byte alignment.
//!
//! `cargo bench --bench memory_pool`. Each case runs `BATCHES` batches of `PAIRS` pairs
//! per thread and reports the median batch's nanoseconds per pair (per thread).
//! `MEMORY_POOL_BENCH_QUICK=1` runs fewer batches.

use offload::memory::{MemoryManager, PoolConfig, DEFAULT_THRESHOLD};
use offload::plugin::foundation::error::{Error, Result};
use offload::plugin::{AllocKind, Device, DeviceType};
use std::alloc::{alloc, dealloc, Layout};
use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// A host "device" whose memory comes from the system allocator.
struct SystemDevice;

fn layout(size: usize) -> Result<Layout> {
    Layout::from_size_align(size, 64).map_err(|e| Error::invalid_size(e.to_string()))
}

impl Device for SystemDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Host
    }

    fn allocate(&self, size: usize, _kind: AllocKind) -> Result<usize> {
        // SAFETY: the layout has a non-zero size (the manager never asks for 0 bytes).
        let ptr = unsafe { alloc(layout(size)?) };
        if ptr.is_null() {
            Err(Error::out_of_resources(format!("{size} bytes")))
        } else {
            Ok(ptr as usize)
        }
    }

    fn free(&self, addr: usize, size: usize, _kind: AllocKind) -> Result<()> {
        // SAFETY: `addr` came from `allocate` with this same size and alignment.
        unsafe { dealloc(addr as *mut u8, layout(size)?) };
        Ok(())
    }
}

const PAIRS: usize = 2000;

fn batches() -> usize {
    if std::env::var_os("MEMORY_POOL_BENCH_QUICK").is_some() {
        11
    } else {
        101
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median ns per alloc+free pair; thread `t` allocates `size` bytes of `kinds[t]`.
fn run(mm: &Arc<MemoryManager>, size: usize, kinds: &[AllocKind]) -> f64 {
    let batches = batches();
    let barrier = Arc::new(Barrier::new(kinds.len()));
    let threads: Vec<_> = kinds
        .iter()
        .map(|&kind| {
            let (mm, barrier) = (mm.clone(), barrier.clone());
            std::thread::spawn(move || {
                // Warm up: the first pair fills the cache.
                for _ in 0..PAIRS {
                    let p = mm.allocate(0, kind, size).unwrap();
                    mm.free(black_box(p)).unwrap();
                }
                barrier.wait();
                (0..batches)
                    .map(|_| {
                        let start = Instant::now();
                        for _ in 0..PAIRS {
                            let p = mm.allocate(0, kind, black_box(size)).unwrap();
                            mm.free(black_box(p)).unwrap();
                        }
                        start.elapsed().as_nanos() as f64 / PAIRS as f64
                    })
                    .collect::<Vec<f64>>()
            })
        })
        .collect();
    median(
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect(),
    )
}

/// The backend alone, no manager: the floor of threshold 0.
fn run_raw(size: usize) -> f64 {
    let dev = SystemDevice;
    let samples = (0..batches())
        .map(|_| {
            let start = Instant::now();
            for _ in 0..PAIRS {
                let p = dev.allocate(black_box(size), AllocKind::Host).unwrap();
                dev.free(black_box(p), size, AllocKind::Host).unwrap();
            }
            start.elapsed().as_nanos() as f64 / PAIRS as f64
        })
        .collect();
    median(samples)
}

fn manager(threshold: usize) -> Arc<MemoryManager> {
    let config = PoolConfig {
        threshold,
        print_stats: false,
    };
    Arc::new(MemoryManager::new(config, vec![Arc::new(SystemDevice)]))
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to filter.
    let cases: [(&str, &[AllocKind]); 3] = [
        ("1 thread", &[AllocKind::Device]),
        (
            "2 threads, same class",
            &[AllocKind::Device, AllocKind::Device],
        ),
        (
            "2 threads, own classes",
            &[AllocKind::Device, AllocKind::Host],
        ),
    ];
    println!(
        "ns per alloc+free pair (median of {} batches of {PAIRS}, per thread)",
        batches()
    );
    println!(
        "{:<8} {:<24} {:>10} {:>12} {:>8} {:>10}",
        "size", "threads", "pooled", "threshold 0", "ratio", "raw backend"
    );
    for (label, size) in [("64 B", 64), ("4 KiB", 4096), ("1 MiB", 1 << 20)] {
        let raw = run_raw(size);
        for (case, kinds) in cases {
            let pooled_mm = manager(DEFAULT_THRESHOLD);
            let pooled = run(&pooled_mm, size, kinds);
            let stats = pooled_mm.shutdown();
            assert!(stats.backend_allocs as usize <= kinds.len(), "{stats}");
            let direct = run(&manager(0), size, kinds);
            println!(
                "{label:<8} {case:<24} {pooled:>10.1} {direct:>12.1} {:>7.1}x {raw:>10.1}",
                direct / pooled
            );
        }
    }
}
