//! The memory manager against a fake backend that counts its calls.

use offload::memory::{AllocationInfo, MemoryManager, PoolConfig};
use offload::plugin::foundation::error::{Error, ErrorCode, Result};
use offload::plugin::{AllocKind, Device, DeviceType};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

/// Hands out fresh, never reused, 64-byte-aligned addresses from a private range, checks
/// every free against what it handed out, and can run out of memory on demand.
struct FakeDevice {
    next: AtomicUsize,
    live: Mutex<HashMap<usize, (usize, AllocKind)>>,
    /// Bytes allocated now, and the most it will hand out (`usize::MAX`: no limit).
    used: AtomicUsize,
    capacity: AtomicUsize,
    allocs: AtomicUsize,
    frees: AtomicUsize,
    /// Frees of unknown addresses or with the wrong size or kind.
    bad_frees: AtomicUsize,
}

impl FakeDevice {
    fn new(base: usize) -> Arc<Self> {
        Arc::new(FakeDevice {
            next: AtomicUsize::new(base),
            live: Mutex::new(HashMap::new()),
            used: AtomicUsize::new(0),
            capacity: AtomicUsize::new(usize::MAX),
            allocs: AtomicUsize::new(0),
            frees: AtomicUsize::new(0),
            bad_frees: AtomicUsize::new(0),
        })
    }

    fn live_blocks(&self) -> usize {
        self.live.lock().len()
    }

    fn calls(&self) -> (usize, usize) {
        (self.allocs.load(SeqCst), self.frees.load(SeqCst))
    }
}

impl Device for FakeDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }

    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let mut live = self.live.lock();
        let used = self.used.load(SeqCst);
        if used + size > self.capacity.load(SeqCst) {
            return Err(Error::out_of_resources(format!(
                "{size} bytes: fake device full"
            )));
        }
        self.used.store(used + size, SeqCst);
        let addr = self.next.fetch_add(size.div_ceil(64) * 64, SeqCst);
        live.insert(addr, (size, kind));
        self.allocs.fetch_add(1, SeqCst);
        Ok(addr)
    }

    fn free(&self, addr: usize, size: usize, kind: AllocKind) -> Result<()> {
        let mut live = self.live.lock();
        match live.remove(&addr) {
            Some(entry) if entry == (size, kind) => {
                self.used.fetch_sub(size, SeqCst);
                self.frees.fetch_add(1, SeqCst);
                Ok(())
            }
            _ => {
                self.bad_frees.fetch_add(1, SeqCst);
                Err(Error::not_found("fake device: bad free"))
            }
        }
    }
}

fn manager_with(threshold: usize, devices: &[Arc<FakeDevice>]) -> MemoryManager {
    let config = PoolConfig {
        threshold,
        print_stats: false,
    };
    let devices = devices
        .iter()
        .map(|d| d.clone() as Arc<dyn Device>)
        .collect();
    MemoryManager::new(config, devices)
}

const MIB: usize = 1 << 20;

#[test]
fn repeated_sizes_reuse_without_backend_calls() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    for size in [1, 64, 100, 4096, MIB] {
        let first = mm.allocate(0, AllocKind::Device, size).unwrap();
        assert_eq!(first % 64, 0);
        mm.free(first).unwrap();
        let calls = dev.calls();
        for _ in 0..100 {
            let again = mm.allocate(0, AllocKind::Device, size).unwrap();
            assert_eq!(again, first);
            mm.free(again).unwrap();
        }
        assert_eq!(dev.calls(), calls, "size {size} reached the backend");
    }
    let s = mm.stats();
    // 1 and 64 bytes share the 64-byte class: 4 backend blocks in all.
    assert_eq!((s.hits, s.misses), (501, 4));
    assert_eq!(s.backend_allocs, 4);
    assert_eq!(s.blocks_live, 0);
    assert_eq!(s.blocks_cached, 4);
    assert_eq!(s.bytes_cached, (64 + 128 + 4096 + MIB) as u64);
    // Kinds do not share blocks.
    let host = mm.allocate(0, AllocKind::Host, 64).unwrap();
    assert_eq!(dev.calls().0, 5);
    mm.free(host).unwrap();
}

#[test]
fn blocks_freed_by_one_thread_serve_others() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = Arc::new(manager_with(MIB, std::slice::from_ref(&dev)));
    let freed: Vec<usize> = (0..8)
        .map(|_| {
            let mm = mm.clone();
            std::thread::spawn(move || {
                let p = mm.allocate(0, AllocKind::Device, 4096).unwrap();
                mm.free(p).unwrap();
                p
            })
            .join()
            .unwrap()
        })
        .collect();
    // Each thread in turn found the block the previous one freed, whatever its stripe.
    assert!(freed.iter().all(|&p| p == freed[0]));
    assert_eq!(dev.calls(), (1, 0));
    let s = mm.stats();
    assert_eq!(
        (s.hits, s.misses, s.blocks_live, s.blocks_cached),
        (7, 1, 0, 1)
    );
}

#[test]
fn class_rounding_shares_blocks() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    let a = mm.allocate(0, AllocKind::Device, 3000).unwrap();
    mm.free(a).unwrap();
    let b = mm.allocate(0, AllocKind::Device, 4096).unwrap();
    assert_eq!(a, b);
    assert_eq!(dev.live.lock()[&a], (4096, AllocKind::Device));
    assert_eq!(mm.find(b).unwrap().size, 4096);
}

#[test]
fn above_threshold_goes_straight_to_backend() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(4096, std::slice::from_ref(&dev));
    for round in 1..=3 {
        let p = mm.allocate(0, AllocKind::Device, 4097).unwrap();
        assert_eq!(dev.live.lock()[&p], (4097, AllocKind::Device));
        mm.free(p).unwrap();
        assert_eq!(dev.calls(), (round, round));
        assert_eq!(dev.live_blocks(), 0);
    }
    let pooled = mm.allocate(0, AllocKind::Device, 4096).unwrap();
    mm.free(pooled).unwrap();
    assert_eq!(dev.calls(), (4, 3));
    let s = mm.stats();
    assert_eq!((s.hits, s.misses, s.backend_frees), (0, 4, 3));
}

#[test]
fn threshold_zero_disables_pooling() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(0, std::slice::from_ref(&dev));
    for round in 1..=10 {
        let p = mm.allocate(0, AllocKind::Managed, 64).unwrap();
        mm.free(p).unwrap();
        assert_eq!(dev.calls(), (round, round));
    }
    assert_eq!(mm.stats().hits, 0);
    assert_eq!(mm.stats().blocks_cached, 0);
}

#[test]
fn config_from_lookup_drives_the_manager() {
    let config = PoolConfig::from_lookup(|name| {
        (name == "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD").then(|| "0".to_string())
    });
    assert_eq!(config.threshold, 0);
    let dev = FakeDevice::new(0x1000_0000);
    let mm = MemoryManager::new(config, vec![dev.clone() as Arc<dyn Device>]);
    let p = mm.allocate(0, AllocKind::Device, 64).unwrap();
    mm.free(p).unwrap();
    assert_eq!(dev.calls(), (1, 1));
}

#[test]
fn out_of_memory_releases_cache_and_retries() {
    let dev = FakeDevice::new(0x1000_0000);
    dev.capacity.store(3 * MIB, SeqCst);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    let a = mm.allocate(0, AllocKind::Device, MIB).unwrap();
    let b = mm.allocate(0, AllocKind::Host, MIB).unwrap();
    mm.free(a).unwrap();
    mm.free(b).unwrap();
    assert_eq!(mm.stats().bytes_cached, 2 * MIB as u64);
    // 2 MiB cached + 2 MiB asked > 3 MiB: the cache must go first.
    let big = mm.allocate(0, AllocKind::Device, 2 * MIB).unwrap();
    let s = mm.stats();
    assert_eq!((s.oom_retries, s.cache_releases), (1, 1));
    assert_eq!(s.bytes_cached, 0);
    assert_eq!(s.backend_frees, 2);
    assert_eq!(dev.live_blocks(), 1);
    // Still too big after releasing: the backend's error comes back.
    let err = mm.allocate(0, AllocKind::Device, 2 * MIB).unwrap_err();
    assert_eq!(err.code, ErrorCode::OutOfResources);
    assert_eq!(mm.stats().oom_retries, 2);
    mm.free(big).unwrap();
    assert_eq!(mm.live_allocations(), 0);
}

#[test]
fn out_of_memory_on_a_pooled_miss() {
    let dev = FakeDevice::new(0x1000_0000);
    dev.capacity.store(MIB, SeqCst);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    let a = mm.allocate(0, AllocKind::Device, 4096).unwrap();
    mm.free(a).unwrap();
    let b = mm.allocate(0, AllocKind::Device, MIB).unwrap();
    assert_eq!(mm.stats().oom_retries, 1);
    assert_eq!(mm.find(b + MIB - 1).unwrap().base, b);
    assert_eq!(
        mm.allocate(0, AllocKind::Device, 64).unwrap_err().code,
        ErrorCode::OutOfResources
    );
}

#[test]
fn bad_frees_are_not_found() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    let p = mm.allocate(0, AllocKind::Device, 256).unwrap();
    let interior = mm.free(p + 64).unwrap_err();
    assert_eq!(interior.code, ErrorCode::NotFound);
    assert!(interior.details.contains("64 bytes into"), "{interior}");
    assert_eq!(mm.free(p).unwrap().size, 256);
    let double = mm.free(p).unwrap_err();
    assert_eq!(double.code, ErrorCode::NotFound);
    assert!(double.details.contains("already freed"), "{double}");
    assert_eq!(mm.free(0xdead_beef).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(mm.free(0).unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(dev.bad_frees.load(SeqCst), 0);
}

#[test]
fn bad_arguments() {
    let dev = FakeDevice::new(0x1000_0000);
    let mm = manager_with(MIB, std::slice::from_ref(&dev));
    assert_eq!(
        mm.allocate(0, AllocKind::Device, 0).unwrap_err().code,
        ErrorCode::InvalidSize
    );
    assert_eq!(
        mm.allocate(1, AllocKind::Device, 64).unwrap_err().code,
        ErrorCode::InvalidDevice
    );
    assert_eq!(mm.device_stats(7), Default::default());
    assert_eq!(dev.calls(), (0, 0));
}

#[test]
fn interior_lookup_across_devices() {
    let d0 = FakeDevice::new(0x1000_0000);
    let d1 = FakeDevice::new(0x9000_0000);
    let mm = manager_with(4096, &[d0, d1]);
    let a = mm.allocate(0, AllocKind::Host, 100).unwrap();
    let b = mm.allocate(1, AllocKind::Device, 10_000).unwrap();
    let info_a = AllocationInfo {
        base: a,
        size: 100,
        kind: AllocKind::Host,
        device: 0,
    };
    assert_eq!(mm.find(a), Some(info_a));
    assert_eq!(mm.find(a + 99), Some(info_a));
    // Beyond the requested size, even if inside the 128-byte block.
    assert_eq!(mm.find(a + 100), None);
    assert_eq!(mm.find(a - 1), None);
    let info_b = mm.find(b + 9_999).unwrap();
    assert_eq!(
        (info_b.base, info_b.device, info_b.kind),
        (b, 1, AllocKind::Device)
    );
    assert_eq!(mm.free(b).unwrap(), info_b);
    assert_eq!(mm.find(b + 1), None);
    assert_eq!(mm.device_stats(0).blocks_live, 1);
    assert_eq!(mm.device_stats(1).blocks_live, 0);
}

#[test]
fn duplicate_backend_address_is_refused() {
    // Two devices whose address ranges coincide.
    let d0 = FakeDevice::new(0x1000_0000);
    let d1 = FakeDevice::new(0x1000_0000);
    let mm = manager_with(MIB, &[d0.clone(), d1.clone()]);
    let a = mm.allocate(0, AllocKind::Device, 64).unwrap();
    let err = mm.allocate(1, AllocKind::Device, 64).unwrap_err();
    assert_eq!(err.code, ErrorCode::BackendFailure);
    assert_eq!(d1.live_blocks(), 0);
    assert_eq!(mm.device_stats(1).blocks_live, 0);
    assert_eq!(mm.find(a).unwrap().device, 0);
}

#[test]
fn concurrent_mixed_sizes_keep_blocks_distinct() {
    const THREADS: usize = 16;
    const ROUNDS: usize = 3000;
    let devs = [
        FakeDevice::new(0x1_0000_0000),
        FakeDevice::new(0x9_0000_0000),
    ];
    let mm = Arc::new(manager_with(64 * 1024, &devs));
    // Every range handed out and not yet freed, across all threads: base -> end.
    let ranges = Arc::new(Mutex::new(BTreeMap::<usize, usize>::new()));
    let sizes = [
        1,
        64,
        65,
        200,
        4096,
        5000,
        64 * 1024,
        64 * 1024 + 1,
        300_000,
    ];
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (mm, ranges) = (mm.clone(), ranges.clone());
            std::thread::spawn(move || {
                let mut mine: Vec<(usize, usize)> = Vec::new();
                let mut seed = t as u64 * 0x9E37_79B9 + 1;
                for _ in 0..ROUNDS {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let r = seed as usize;
                    if mine.len() < 8 && (r % 3 != 0 || mine.is_empty()) {
                        let size = sizes[r % sizes.len()];
                        let kind = AllocKind::ALL[(r >> 8) % 3];
                        let device = (r >> 12) % 2;
                        let base = mm.allocate(device, kind, size).unwrap();
                        assert_eq!(base % 64, 0);
                        let mut live = ranges.lock();
                        if let Some((&b, &e)) = live.range(..=base).next_back() {
                            assert!(e <= base, "{base:#x} inside [{b:#x}, {e:#x})");
                        }
                        if let Some((&b, _)) = live.range(base..).next() {
                            assert!(base + size <= b, "[{base:#x}+{size}) overlaps {b:#x}");
                        }
                        live.insert(base, base + size);
                        drop(live);
                        mine.push((base, size));
                    } else {
                        let (base, size) = mine.swap_remove(r % mine.len());
                        assert_eq!(ranges.lock().remove(&base), Some(base + size));
                        let info = mm.free(base).unwrap();
                        assert_eq!((info.base, info.size), (base, size));
                    }
                }
                mine
            })
        })
        .collect();
    let mut left = 0;
    for t in threads {
        for (base, size) in t.join().unwrap() {
            assert_eq!(mm.find(base + size - 1).unwrap().base, base);
            left += 1;
        }
    }
    assert_eq!(mm.live_allocations(), left);
    assert_eq!(mm.stats().blocks_live as usize, left);
    let s = mm.stats();
    assert!(s.hits > 0 && s.misses > 0, "{s}");
    assert_eq!(s.hits + s.misses, s.backend_allocs + s.hits);
    let stats = mm.shutdown();
    assert_eq!((stats.blocks_live, stats.blocks_cached), (0, 0));
    for d in &devs {
        assert_eq!(d.live_blocks(), 0);
        assert_eq!(d.bad_frees.load(SeqCst), 0);
        let (allocs, frees) = d.calls();
        assert_eq!(allocs, frees);
    }
    assert_eq!(stats.backend_allocs, stats.backend_frees);
}

#[test]
fn shutdown_returns_every_block() {
    let devs = [FakeDevice::new(0x1000_0000), FakeDevice::new(0x9000_0000)];
    let mm = manager_with(MIB, &devs);
    let mut kept = Vec::new();
    for (i, size) in [64, 4096, MIB, 2 * MIB, 3].into_iter().enumerate() {
        let kind = AllocKind::ALL[i % 3];
        let freed = mm.allocate(i % 2, kind, size).unwrap();
        kept.push(mm.allocate(i % 2, kind, size).unwrap());
        mm.free(freed).unwrap();
    }
    assert!(devs.iter().map(|d| d.live_blocks()).sum::<usize>() > 0);
    let stats = mm.shutdown();
    for d in &devs {
        assert_eq!(d.live_blocks(), 0);
        assert_eq!(d.bad_frees.load(SeqCst), 0);
    }
    assert_eq!(stats.blocks_live + stats.blocks_cached, 0);
    assert_eq!(stats.bytes_live + stats.bytes_cached, 0);
    assert_eq!(stats.backend_allocs, stats.backend_frees);
    assert_eq!(mm.live_allocations(), 0);
    assert_eq!(mm.free(kept[0]).unwrap_err().code, ErrorCode::NotFound);
    // Still usable afterwards.
    let p = mm.allocate(0, AllocKind::Device, 64).unwrap();
    mm.free(p).unwrap();
}

/// Like a C allocator: hands the address freed last out again at once, and on its first
/// free runs `during_free` (another thread allocating while the cache is released).
struct ReusingDevice {
    next: AtomicUsize,
    freed: Mutex<Vec<usize>>,
    during_free: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Device for ReusingDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Host
    }

    fn allocate(&self, size: usize, _: AllocKind) -> Result<usize> {
        Ok(match self.freed.lock().pop() {
            Some(addr) => addr,
            None => self.next.fetch_add(size.div_ceil(64) * 64, SeqCst),
        })
    }

    fn free(&self, addr: usize, _: usize, _: AllocKind) -> Result<()> {
        self.freed.lock().push(addr);
        let hook = self.during_free.lock().take();
        if let Some(hook) = hook {
            hook();
        }
        Ok(())
    }
}

#[test]
fn an_address_reused_while_the_cache_is_released_stays_found() {
    let dev = Arc::new(ReusingDevice {
        next: AtomicUsize::new(0x4000_0000),
        freed: Mutex::new(Vec::new()),
        during_free: Mutex::new(None),
    });
    let config = PoolConfig {
        threshold: 4096,
        print_stats: false,
    };
    let mm = Arc::new(MemoryManager::new(config, vec![dev.clone()]));
    let cached = mm.allocate(0, AllocKind::Host, 4096).unwrap();
    mm.free(cached).unwrap();
    // The cached block goes back to the backend; before the manager has done with the
    // release, another thread is given the same address for a large allocation.
    let reused = Arc::new(AtomicUsize::new(0));
    let (mm2, reused2) = (mm.clone(), reused.clone());
    *dev.during_free.lock() = Some(Box::new(move || {
        let t = std::thread::spawn(move || mm2.allocate(0, AllocKind::Host, 10_000).unwrap());
        reused2.store(t.join().unwrap(), SeqCst);
    }));
    mm.release_cache();
    let big = reused.load(SeqCst);
    assert_eq!(
        big, cached,
        "the backend handed the freed address out again"
    );
    let found = mm
        .find(big + 5_000)
        .expect("an interior pointer of a live allocation");
    assert_eq!((found.base, found.size), (big, 10_000));
    mm.free(big).unwrap();
}
