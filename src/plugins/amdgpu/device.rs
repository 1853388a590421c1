//! One AMD GPU: its agent, pools, facts, queues and the per-device helpers streams
//! share (signal pool, kernarg cache, host-step thread, fault slot); raw memory,
//! synchronous copies and fills, host memory locking and program loading.

use super::agents::{AgentPools, Agents, Pool};
use super::buffers::{BlockCache, Staging};
use super::copy_plan::lock_threshold_from;
use super::facts::DeviceFacts;
use super::fault::{watch_device, ErrorSlot};
use super::ffi::Agent;
use super::hsa::Hsa;
use super::placement::Placements;
use super::program::AmdgpuProgram;
use super::queue::{queue_count, ring_size, AqlQueue, DEFAULT_QUEUES, DEFAULT_QUEUE_SIZE};
use super::signal::SignalPool;
use crate::image::{select_for, DeviceTarget};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{self, AllocKind, DeviceInfo, DeviceType, InfoValue, Program};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// What the device's streams, programs and kernels share.
pub struct DeviceShared {
    pub hsa: Arc<Hsa>,
    pub agent: Agent,
    pub cpu: Agent,
    /// Every GPU: host memory (HOST, MANAGED, kernel arguments, staging) is made
    /// visible to all of them (the CPU owns it already).
    pub gpus: Vec<Agent>,
    /// The other GPUs that can reach this one's device memory; each DEVICE allocation
    /// is made visible to them, so copies between GPUs go directly.
    pub peers: Vec<Agent>,
    pub facts: Arc<DeviceFacts>,
    pub coarse: Pool,
    pub host_pool: Pool,
    pub kernargs: Arc<BlockCache>,
    /// Staging buffers of pageable copies and fills, recycled.
    staging: Arc<BlockCache>,
    pub signals: Arc<SignalPool>,
    pub faults: Arc<ErrorSlot>,
    pub lock_threshold: usize,
    queues: Vec<OnceLock<Arc<AqlQueue>>>,
    queue_size: u32,
    next_queue: AtomicUsize,
}

fn env_u32(name: &str) -> Option<u32> {
    std::env::var(name).ok()?.trim().parse().ok()
}

impl DeviceShared {
    /// The next queue, round-robin; created on first use.
    pub fn queue(&self) -> Result<Arc<AqlQueue>> {
        let i = self.next_queue.fetch_add(1, Ordering::Relaxed) % self.queues.len();
        if let Some(q) = self.queues[i].get() {
            return Ok(q.clone());
        }
        let q = Arc::new(AqlQueue::create(
            self.hsa.clone(),
            self.agent,
            self.queue_size,
        )?);
        // Two threads may create one at once; the loser's queue is dropped.
        Ok(self.queues[i].get_or_init(|| q).clone())
    }

    pub fn staging(&self, size: usize) -> Result<Staging> {
        self.staging.block(size, &self.gpus)
    }

    pub fn label(&self) -> String {
        self.facts.label()
    }
}

pub struct AmdgpuDevice {
    shared: Arc<DeviceShared>,
    /// The device as image selection sees it (made once: its label is formatted).
    target: DeviceTarget,
    /// Memory placed at an address (`allocate_at`).
    placements: Placements,
}

impl AmdgpuDevice {
    pub fn open(hsa: Arc<Hsa>, agents: &Agents, ordinal: usize) -> Result<AmdgpuDevice> {
        let agent = agents.gpus[ordinal];
        let pools = AgentPools::read(&hsa, agent)?;
        let facts = Arc::new(DeviceFacts::read(&hsa, agent, ordinal, &pools)?);
        let missing =
            |what: &str| Error::backend_failure(format!("{} has no {what}", facts.label()));
        let coarse = pools
            .coarse
            .ok_or_else(|| missing("coarse-grained memory pool"))?;
        let host_pool = agents
            .cpu_pools
            .fine
            .ok_or_else(|| missing("fine-grained host memory pool"))?;
        let kernarg_pool = agents.cpu_pools.kernarg.unwrap_or(host_pool);
        let faults = Arc::new(ErrorSlot::default());
        watch_device(&hsa, agent.handle, faults.clone());
        let wanted = env_u32("OFFLOAD_AMDGPU_NUM_QUEUES").unwrap_or(DEFAULT_QUEUES);
        let count = queue_count(wanted, facts.queues_max);
        let size = env_u32("OFFLOAD_AMDGPU_QUEUE_SIZE").unwrap_or(DEFAULT_QUEUE_SIZE);
        let shared = DeviceShared {
            kernargs: BlockCache::kernargs(hsa.clone(), kernarg_pool.pool),
            staging: BlockCache::staging(hsa.clone(), host_pool.pool),
            signals: SignalPool::new(hsa.clone()),
            agent,
            cpu: agents.cpu,
            gpus: agents.gpus.clone(),
            peers: agents.peers_of(&hsa, agent, coarse.pool),
            queue_size: ring_size(size, facts.queue_max_size),
            facts,
            coarse,
            host_pool,
            faults,
            lock_threshold: lock_threshold_from(
                std::env::var("OFFLOAD_AMDGPU_LOCK_THRESHOLD")
                    .ok()
                    .as_deref(),
            ),
            queues: (0..count).map(|_| OnceLock::new()).collect(),
            next_queue: AtomicUsize::new(0),
            hsa,
        };
        let isa = &shared.facts.isa;
        let target = DeviceTarget::amdgpu(isa.processor.clone(), isa.xnack, isa.sramecc)
            .with_label(shared.label());
        Ok(AmdgpuDevice {
            shared: Arc::new(shared),
            target,
            placements: Placements::default(),
        })
    }

    pub fn shared(&self) -> &Arc<DeviceShared> {
        &self.shared
    }

    /// The device as image selection sees it.
    pub fn target(&self) -> &DeviceTarget {
        &self.target
    }

    fn hsa(&self) -> &Hsa {
        &self.shared.hsa
    }
}

fn kind_name(kind: AllocKind) -> &'static str {
    match kind {
        AllocKind::Host => "pinned host",
        AllocKind::Device => "device",
        AllocKind::Managed => "managed",
    }
}

impl plugin::Device for AmdgpuDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }

    fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        match key {
            DeviceInfo::NativeHandle => Ok(InfoValue::Handle(self.shared.agent.handle as usize)),
            _ => self.shared.facts.info(key),
        }
    }

    /// DEVICE memory from the GPU's coarse-grained pool, visible to its peers; HOST and
    /// MANAGED from the CPU agent's fine-grained pool, which every GPU reaches
    /// coherently.
    fn allocate(&self, size: usize, kind: AllocKind) -> Result<usize> {
        let (pool, visible_to) = match kind {
            AllocKind::Device => (self.shared.coarse, &self.shared.peers),
            AllocKind::Host | AllocKind::Managed => (self.shared.host_pool, &self.shared.gpus),
        };
        let what = || {
            format!(
                "allocating {size} bytes of {} memory on {}",
                kind_name(kind),
                self.shared.label()
            )
        };
        if size > pool.alloc_max {
            return Err(Error::out_of_resources(format!(
                "{}: the pool allows at most {} bytes in one allocation",
                what(),
                pool.alloc_max
            )));
        }
        let addr = self
            .hsa()
            .pool_allocate(pool.pool, size)
            .map_err(|e| e.context(what()))?;
        if let Err(e) = self.hsa().allow_access(visible_to, addr) {
            let _ = self.hsa().pool_free(addr);
            return Err(e.context(what()));
        }
        Ok(addr)
    }

    fn allocate_at(&self, at: usize, size: usize, kind: AllocKind) -> Result<usize> {
        if kind != AllocKind::Device {
            return Err(Error::unsupported(format!(
                "only device memory can be placed at an address on {}, not {} memory",
                self.shared.label(),
                kind_name(kind)
            )));
        }
        self.placements
            .place(&self.shared, at, size)
            .map(|()| at)
            .map_err(|e| {
                e.context(format!(
                    "placing {size} bytes at {at:#x} on {}",
                    self.shared.label()
                ))
            })
    }

    fn free_placed(&self, addr: usize, _size: usize, _kind: AllocKind) -> Result<()> {
        self.placements.remove(&self.shared, addr)
    }

    fn free(&self, addr: usize, _size: usize, _kind: AllocKind) -> Result<()> {
        self.hsa().pool_free(addr)
    }

    fn copy_to_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        self.hsa()
            .copy(dst, src, size)
            .map_err(|e| e.context("copying to the device"))
    }

    fn copy_from_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        self.hsa()
            .copy(dst, src, size)
            .map_err(|e| e.context("copying from the device"))
    }

    fn copy_within_device(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        self.hsa()
            .copy(dst, src, size)
            .map_err(|e| e.context("copying within the device"))
    }

    /// Device memory is visible to the peers that can reach it (`allow_access`), so
    /// copies between them go directly; a GPU without peers leaves the copy to the
    /// runtime, which stages it through host memory.
    fn copy_to_peer(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        if self.shared.peers.is_empty() {
            return Err(plugin::unsupported(
                "a copy to a GPU that cannot reach this one",
            ));
        }
        self.hsa()
            .copy(dst, src, size)
            .map_err(|e| e.context("copying to another GPU"))
    }

    fn fill(&self, dst: usize, pattern: &[u8], size: usize) -> Result<()> {
        if let Some(word) = fill_word(dst, pattern, size) {
            return self.hsa().fill_u32(dst, word, size / 4);
        }
        let mut staging = self.shared.staging(size)?;
        fill_repeated(staging.as_mut_slice(), pattern);
        self.hsa()
            .copy(dst, staging.address(), size)
            .map_err(|e| e.context("filling device memory"))
    }

    fn lock_host_memory(&self, addr: usize, size: usize) -> Result<usize> {
        self.hsa().lock(addr, size, &self.shared.gpus)
    }

    fn unlock_host_memory(&self, addr: usize) -> Result<()> {
        self.hsa().unlock(addr)
    }

    fn check_image(&self, image: &[u8]) -> Result<()> {
        select_for(image, self.target()).map(|_| ())
    }

    /// `load_program` chooses the image with the same `select_for`.
    fn load_checks_image(&self) -> bool {
        true
    }

    fn load_program(&self, image: &[u8]) -> Result<Arc<dyn Program>> {
        let selected = select_for(image, self.target())?;
        let program = AmdgpuProgram::load(
            self.shared.clone(),
            selected.bytes(image),
            &selected.description,
        )?;
        Ok(Arc::new(program))
    }

    fn create_stream(&self) -> Result<Arc<dyn plugin::Stream>> {
        Ok(Arc::new(super::stream::new_stream(self.shared.clone())?))
    }
}

/// The 32-bit word `hsa_amd_memory_fill` repeats, where the fill is one: a pattern of 1,
/// 2 or 4 bytes over whole, aligned words.
pub fn fill_word(dst: usize, pattern: &[u8], size: usize) -> Option<u32> {
    if dst % 4 != 0 || size % 4 != 0 || !matches!(pattern.len(), 1 | 2 | 4) {
        return None;
    }
    let mut word = [0u8; 4];
    fill_repeated(&mut word, pattern);
    Some(u32::from_ne_bytes(word))
}

/// Fills `out` with repetitions of `pattern` (the last one cut short).
pub fn fill_repeated(out: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    for (i, b) in out.iter_mut().enumerate() {
        *b = pattern[i % pattern.len()];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_of_words_use_the_runtime_fill() {
        assert_eq!(
            fill_word(0x1000, &[0xab], 64),
            Some(u32::from_ne_bytes([0xab; 4]))
        );
        assert_eq!(
            fill_word(0x1000, &[1, 2], 8),
            Some(u32::from_ne_bytes([1, 2, 1, 2]))
        );
        assert_eq!(
            fill_word(0x1000, &[1, 2, 3, 4], 8),
            Some(u32::from_ne_bytes([1, 2, 3, 4]))
        );
        assert_eq!(fill_word(0x1001, &[1], 8), None, "unaligned");
        assert_eq!(fill_word(0x1000, &[1], 7), None, "a partial word");
        assert_eq!(fill_word(0x1000, &[1, 2, 3], 12), None, "3-byte pattern");
        assert_eq!(fill_word(0x1000, &[0; 8], 16), None, "8-byte pattern");
        let mut out = [0u8; 7];
        fill_repeated(&mut out, &[1, 2, 3]);
        assert_eq!(out, [1, 2, 3, 1, 2, 3, 1]);
    }
}
