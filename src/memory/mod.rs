//! The shared device memory manager (placeholder until the pooled manager lands).

use crate::plugin::{AllocKind, Device};
use crate::runtime::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationInfo {
    pub base: usize,
    pub size: usize,
    pub kind: AllocKind,
    pub device: usize,
}

#[derive(Clone, Debug, Default)]
pub struct PoolConfig {
    pub threshold: usize,
    pub print_stats: bool,
}

impl PoolConfig {
    pub fn from_env() -> Self {
        PoolConfig::default()
    }
}

pub struct MemoryManager {
    devices: Vec<Arc<dyn Device>>,
    live: Mutex<BTreeMap<usize, AllocationInfo>>,
}

impl MemoryManager {
    pub fn new(_config: PoolConfig, devices: Vec<Arc<dyn Device>>) -> Self {
        MemoryManager {
            devices,
            live: Mutex::new(BTreeMap::new()),
        }
    }
    pub fn allocate(&self, device: usize, kind: AllocKind, size: usize) -> Result<usize> {
        let base = self.devices[device].allocate(size, kind)?;
        self.live.lock().insert(
            base,
            AllocationInfo {
                base,
                size,
                kind,
                device,
            },
        );
        Ok(base)
    }
    pub fn free(&self, addr: usize) -> Result<AllocationInfo> {
        let info = self
            .live
            .lock()
            .remove(&addr)
            .ok_or_else(|| Error::not_found(format!("{addr:#x} is not live")))?;
        self.devices[info.device].free(addr, info.size, info.kind)?;
        Ok(info)
    }
    pub fn find(&self, ptr: usize) -> Option<AllocationInfo> {
        let live = self.live.lock();
        let (_, info) = live.range(..=ptr).next_back()?;
        (ptr < info.base + info.size).then_some(*info)
    }
    pub fn shutdown(&self) {
        let all: Vec<_> = std::mem::take(&mut *self.live.lock())
            .into_values()
            .collect();
        for info in all {
            let _ = self.devices[info.device].free(info.base, info.size, info.kind);
        }
    }
}
