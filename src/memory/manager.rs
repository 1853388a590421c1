//! The memory manager: pools per device and kind, a global registry, the backend calls.

use super::block_index::BlockIndex;
use super::config::PoolConfig;
use super::pool::{default_stripes, DevicePools};
use super::registry::{AllocationInfo, Registry};
use super::size_class::SizeClasses;
use super::stats::PoolStats;
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use crate::plugin::{AllocKind, Device};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The memory manager shared by all backends. See the [module docs](super).
///
/// Devices are named by their index in the list given to [`MemoryManager::new`].
pub struct MemoryManager {
    config: PoolConfig,
    classes: SizeClasses,
    devices: Box<[DevicePools]>,
    registry: Registry,
    blocks: BlockIndex,
    /// Allocations placed at an address (`allocate_at`): never pooled. Counted, so that
    /// a free looks only when there are some.
    placed: Mutex<HashSet<usize>>,
    any_placed: AtomicUsize,
}

impl MemoryManager {
    /// A manager for `devices` (index `i` names `devices[i]`; at most `u32::MAX` devices).
    pub fn new(config: PoolConfig, devices: Vec<Arc<dyn Device>>) -> Self {
        assert!(u32::try_from(devices.len()).is_ok(), "too many devices");
        let classes = SizeClasses::new(config.threshold);
        let stripes = default_stripes();
        MemoryManager {
            config,
            classes,
            devices: devices
                .into_iter()
                .map(|d| DevicePools::new(d, &classes, stripes))
                .collect(),
            registry: Registry::new(),
            blocks: BlockIndex::default(),
            placed: Mutex::new(HashSet::new()),
            any_placed: AtomicUsize::new(0),
        }
    }

    pub fn config(&self) -> PoolConfig {
        self.config
    }

    pub fn num_devices(&self) -> usize {
        self.devices.len()
    }

    /// Allocates `size` bytes of `kind` memory on `device`, aligned to at least 64 bytes.
    ///
    /// Errors: `InvalidSize` for 0 bytes, `InvalidDevice` for an unknown index, the
    /// backend's error otherwise (`OutOfResources` only after the device's cache was
    /// released and the allocation retried).
    pub fn allocate(&self, device: usize, kind: AllocKind, size: usize) -> Result<usize> {
        if size == 0 {
            return Err(Error::invalid_size("cannot allocate 0 bytes"));
        }
        let pools = self.devices.get(device).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidDevice,
                format!(
                    "device index {device} is out of range (the memory manager has {} devices)",
                    self.devices.len()
                ),
            )
        })?;
        let pool = pools.kind(kind);
        let class = self.classes.class_of(size);
        let addr = match class {
            Some(class) => match pool.take(class) {
                Some(addr) => addr,
                None => {
                    let addr =
                        self.backend_allocate(device, SizeClasses::block_size(class), kind)?;
                    pool.note_backend_alloc(class);
                    addr
                }
            },
            None => {
                pool.direct_miss();
                let addr = self.backend_allocate(device, size, kind)?;
                pool.direct_allocated(size);
                addr
            }
        };
        let info = AllocationInfo {
            base: addr,
            size,
            kind,
            device,
        };
        if !self.registry.insert(info) {
            // The backend handed out an address that is still live: do not let it be
            // used twice. Give the block back to its backend, bypassing the cache.
            self.discard(info, class);
            return Err(Error::backend_failure(format!(
                "the backend returned address {addr:#x} for a {size}-byte {kind:?} \
                 allocation on device {device}, but that address is already allocated"
            )));
        }
        Ok(addr)
    }

    /// Allocates `size` bytes of `kind` memory on `device` at exactly `at` (the backend
    /// places it, or says why not). Freed by `free`, straight back to the backend.
    pub fn allocate_at(
        &self,
        device: usize,
        kind: AllocKind,
        size: usize,
        at: usize,
    ) -> Result<usize> {
        if size == 0 {
            return Err(Error::invalid_size("cannot allocate 0 bytes"));
        }
        let pools = self.devices.get(device).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidDevice,
                format!("device index {device} is out of range"),
            )
        })?;
        if self.find(at).is_some() {
            return Err(Error::invalid_value(format!(
                "{size} bytes at {at:#x}: an allocation already lies there"
            )));
        }
        let addr = pools.device.allocate_at(at, size, kind)?;
        let info = AllocationInfo {
            base: addr,
            size,
            kind,
            device,
        };
        self.blocks.insert(addr, size);
        if !self.registry.insert(info) {
            self.blocks.remove(addr);
            let _ = pools.device.free_placed(addr, size, kind);
            return Err(Error::backend_failure(format!(
                "the backend placed {size} bytes at {addr:#x}, which is already allocated"
            )));
        }
        self.placed.lock().insert(addr);
        self.any_placed.fetch_add(1, Ordering::Release);
        Ok(addr)
    }

    /// Frees the allocation starting at `addr` and says what it was.
    ///
    /// `NotFound` when `addr` is not the start of a live allocation (a double free, an
    /// interior or a foreign pointer); nothing changes then.
    pub fn free(&self, addr: usize) -> Result<AllocationInfo> {
        let Some(info) = self.registry.remove(addr) else {
            return Err(self.not_live(addr));
        };
        if self.any_placed.load(Ordering::Acquire) > 0 {
            if let Some(freed) = self.free_if_placed(info) {
                return freed;
            }
        }
        self.give_back(info).map(|()| info)
    }

    /// Frees `info` straight to its backend when it was placed (`allocate_at`).
    #[cold]
    #[inline(never)]
    fn free_if_placed(&self, info: AllocationInfo) -> Option<Result<AllocationInfo>> {
        if !self.placed.lock().remove(&info.base) {
            return None;
        }
        self.any_placed.fetch_sub(1, Ordering::Release);
        self.blocks.remove(info.base);
        Some(
            self.devices[info.device]
                .device
                .free_placed(info.base, info.size, info.kind)
                .map(|()| info),
        )
    }

    /// The live allocation containing `ptr` (`base <= ptr < base + size`).
    pub fn find(&self, ptr: usize) -> Option<AllocationInfo> {
        if !self.blocks.may_hold(ptr) {
            return None;
        }
        if let Some(info) = self.registry.get(ptr) {
            return Some(info);
        }
        let info = self.registry.get(self.blocks.block_holding(ptr)?)?;
        (ptr - info.base < info.size).then_some(info)
    }

    /// The live allocations of device `device` (its index here), by base address.
    pub fn allocations_of(&self, device: usize) -> Vec<AllocationInfo> {
        self.registry.of_device(device)
    }

    /// Number of live allocations.
    pub fn live_allocations(&self) -> usize {
        self.registry.len()
    }

    /// Returns every cached block of every device to its backend.
    pub fn release_cache(&self) {
        for pools in self.devices.iter() {
            pools.release_cache(|bases| self.blocks.remove_all(bases));
        }
    }

    /// Returns the cached blocks of one device to its backend (no-op for a bad index).
    pub fn release_device_cache(&self, device: usize) {
        if let Some(pools) = self.devices.get(device) {
            pools.release_cache(|bases| self.blocks.remove_all(bases));
        }
    }

    /// Counters summed over all devices.
    pub fn stats(&self) -> PoolStats {
        let mut total = PoolStats::default();
        for pools in self.devices.iter() {
            total += pools.stats();
        }
        total
    }

    /// Counters of one device (all zero for a bad index).
    pub fn device_stats(&self, device: usize) -> PoolStats {
        self.devices
            .get(device)
            .map(DevicePools::stats)
            .unwrap_or_default()
    }

    /// Frees every live allocation and every cached block back to the backends, prints
    /// the statistics to stderr when [`PoolConfig::print_stats`] is set, and returns them.
    /// The manager stays usable (and empty) afterwards.
    pub fn shutdown(&self) -> PoolStats {
        for info in self.registry.drain() {
            // Best effort: a backend that refuses a free cannot be helped here.
            let _ = self.give_back(info);
        }
        self.release_cache();
        self.blocks.clear();
        let stats = self.stats();
        if self.config.print_stats {
            eprintln!("{stats}");
        }
        stats
    }

    /// Returns a block just removed from the registry to its cache or backend.
    fn give_back(&self, info: AllocationInfo) -> Result<()> {
        let pools = &self.devices[info.device];
        let pool = pools.kind(info.kind);
        match self.classes.class_of(info.size) {
            Some(class) => {
                pool.put(class, info.base);
                Ok(())
            }
            None => {
                self.blocks.remove(info.base);
                let result = pools.device.free(info.base, info.size, info.kind);
                pool.direct_released(info.size, result.is_ok());
                result
            }
        }
    }

    /// Returns a block that was never registered straight to the backend.
    fn discard(&self, info: AllocationInfo, class: Option<usize>) {
        let pools = &self.devices[info.device];
        let pool = pools.kind(info.kind);
        let size = class.map_or(info.size, SizeClasses::block_size);
        self.blocks.remove(info.base);
        let freed = pools.device.free(info.base, size, info.kind).is_ok();
        match class {
            Some(class) => pool.forget_live(class, freed),
            None => pool.direct_released(info.size, freed),
        }
    }

    /// Asks the backend; on out-of-memory releases the device's cache and asks once more.
    fn backend_allocate(&self, device: usize, size: usize, kind: AllocKind) -> Result<usize> {
        let pools = &self.devices[device];
        let addr = match pools.device.allocate(size, kind) {
            Err(e) if e.code == ErrorCode::OutOfResources => {
                pools.release_cache(|bases| self.blocks.remove_all(bases));
                pools.note_oom_retry();
                pools.device.allocate(size, kind)
            }
            other => other,
        }
        .map_err(|e| {
            e.context(format!(
                "allocating {size} bytes of {kind:?} memory on device {device}"
            ))
        })?;
        if addr == 0 {
            return Err(Error::backend_failure(format!(
                "the backend returned a null address for {size} bytes of {kind:?} memory \
                 on device {device}"
            )));
        }
        self.blocks.insert(addr, size);
        Ok(addr)
    }

    /// The error for freeing `addr` that is not the start of a live allocation.
    fn not_live(&self, addr: usize) -> Error {
        let detail = match self.find(addr) {
            Some(info) => format!(
                "it points {} bytes into the {}-byte allocation at {:#x}",
                addr - info.base,
                info.size,
                info.base
            ),
            None => "it was never allocated here or was already freed".to_string(),
        };
        Error::not_found(format!(
            "pointer {addr:#x} is not the start of a live allocation: {detail}"
        ))
    }
}
