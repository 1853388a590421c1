//! The agents and memory pools of the HSA runtime: which agents are devices (GPUs with
//! kernel dispatch), the CPU agent that owns system memory, and what each pool is for.
//!
//! Pools are classified from their info values by a pure function: a coarse-grained
//! global pool of a GPU is its DEVICE memory; a fine-grained global pool of the CPU agent
//! is HOST and MANAGED memory (the GPUs reach it over the bus, coherently), and the one
//! with KERNARG_INIT holds kernel arguments; a GPU's group segment is its LDS.

use super::ffi::*;
use super::hsa::Hsa;
use crate::plugin::foundation::error::{Error, Result};

/// What a pool reports about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolFacts {
    pub segment: u32,
    pub global_flags: u32,
    pub alloc_allowed: bool,
    pub size: usize,
}

/// What a pool is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolRole {
    /// Coarse-grained global memory: fast for the agent, coherent only at kernel
    /// boundaries.
    CoarseGrained,
    /// Fine-grained global memory; `kernarg` when the runtime initialises kernel
    /// arguments in it.
    FineGrained { kernarg: bool },
    /// Work-group local memory (LDS); not allocatable, its size is the LDS size.
    Group,
    /// Anything the runtime may not allocate from, or another segment.
    Unused,
}

pub fn classify_pool(facts: &PoolFacts) -> PoolRole {
    if facts.segment == SEGMENT_GROUP {
        return PoolRole::Group;
    }
    if facts.segment != SEGMENT_GLOBAL || !facts.alloc_allowed {
        return PoolRole::Unused;
    }
    if facts.global_flags & GLOBAL_FLAG_COARSE_GRAINED != 0 {
        PoolRole::CoarseGrained
    } else if facts.global_flags & GLOBAL_FLAG_FINE_GRAINED != 0 {
        PoolRole::FineGrained {
            kernarg: facts.global_flags & GLOBAL_FLAG_KERNARG_INIT != 0,
        }
    } else {
        PoolRole::Unused
    }
}

/// A pool with what it reported.
#[derive(Clone, Copy, Debug)]
pub struct Pool {
    pub pool: MemoryPool,
    pub facts: PoolFacts,
    /// The most one allocation may take (ALLOC_MAX_SIZE, or the size where not told).
    pub alloc_max: usize,
}

/// The pools of one agent, by role: the first of each kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgentPools {
    pub coarse: Option<Pool>,
    pub fine: Option<Pool>,
    pub kernarg: Option<Pool>,
    /// The LDS size in bytes (0 where the agent has no group segment).
    pub group_size: usize,
}

impl AgentPools {
    /// Sorts `pools` by role (pure, for tests).
    pub fn from_pools(pools: impl IntoIterator<Item = Pool>) -> AgentPools {
        let mut out = AgentPools::default();
        for p in pools {
            match classify_pool(&p.facts) {
                PoolRole::CoarseGrained => {
                    out.coarse.get_or_insert(p);
                }
                PoolRole::FineGrained { kernarg } => {
                    if kernarg {
                        out.kernarg.get_or_insert(p);
                    } else {
                        out.fine.get_or_insert(p);
                    }
                }
                PoolRole::Group => out.group_size = out.group_size.max(p.facts.size),
                PoolRole::Unused => {}
            }
        }
        // A runtime that marks only one fine-grained pool: kernel arguments may live in
        // any fine-grained memory, and host memory in the kernarg pool.
        if out.fine.is_none() {
            out.fine = out.kernarg;
        }
        if out.kernarg.is_none() {
            out.kernarg = out.fine;
        }
        out
    }

    pub fn read(hsa: &Hsa, agent: Agent) -> Result<AgentPools> {
        let mut pools = Vec::new();
        for pool in hsa.pools(agent)? {
            let facts = PoolFacts {
                segment: hsa.pool_u32(pool, pool_info::SEGMENT)?,
                global_flags: hsa.pool_u32(pool, pool_info::GLOBAL_FLAGS).unwrap_or(0),
                alloc_allowed: hsa
                    .pool_bool(pool, pool_info::RUNTIME_ALLOC_ALLOWED)
                    .unwrap_or(false),
                size: hsa.pool_usize(pool, pool_info::SIZE).unwrap_or(0),
            };
            let alloc_max = hsa
                .pool_usize(pool, pool_info::ALLOC_MAX_SIZE)
                .ok()
                .filter(|&m| m > 0)
                .unwrap_or(facts.size);
            pools.push(Pool {
                pool,
                facts,
                alloc_max,
            });
        }
        Ok(AgentPools::from_pools(pools))
    }
}

/// Every agent that matters, found once.
pub struct Agents {
    /// GPUs with kernel dispatch, in the runtime's order.
    pub gpus: Vec<Agent>,
    /// The CPU agent whose fine-grained pools give host memory.
    pub cpu: Agent,
    pub cpu_pools: AgentPools,
}

impl Agents {
    pub fn find(hsa: &Hsa) -> std::result::Result<Agents, String> {
        let all = hsa.agents().map_err(|e| e.details.clone())?;
        let mut gpus = Vec::new();
        let mut cpu = None;
        for agent in all {
            let Ok(kind) = hsa.agent_u32(agent, agent_info::DEVICE) else {
                continue;
            };
            match kind {
                DEVICE_TYPE_GPU => {
                    let features = hsa.agent_u32(agent, agent_info::FEATURE).unwrap_or(0);
                    if features & AGENT_FEATURE_KERNEL_DISPATCH != 0 {
                        gpus.push(agent);
                    }
                }
                DEVICE_TYPE_CPU if cpu.is_none() => cpu = Some(agent),
                _ => {}
            }
        }
        if gpus.is_empty() {
            return Err("the HSA runtime reports no GPU agent with kernel dispatch".into());
        }
        let cpu = cpu.ok_or("the HSA runtime reports no CPU agent (host memory has no pool)")?;
        let cpu_pools = AgentPools::read(hsa, cpu).map_err(|e| e.details.clone())?;
        if cpu_pools.fine.is_none() {
            return Err("the CPU agent has no fine-grained pool for host memory".into());
        }
        Ok(Agents {
            gpus,
            cpu,
            cpu_pools,
        })
    }

    /// The GPUs that can reach `gpu`'s device memory (`pool`), `gpu` left out: its
    /// peers, given access to each of its allocations. (A GPU reaches its own memory
    /// without asking; the CPU is not asked for: VRAM is not host-visible in general.)
    pub fn peers_of(&self, hsa: &Hsa, gpu: Agent, pool: MemoryPool) -> Vec<Agent> {
        self.gpus
            .iter()
            .copied()
            .filter(|&other| other != gpu && hsa.can_reach(other, pool))
            .collect()
    }
}

/// A GPU's ISA from its name: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" is gfx90a with
/// SRAM ECC on and XNACK off; a feature not named is one the processor lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsaName {
    pub processor: String,
    pub xnack: Option<bool>,
    pub sramecc: Option<bool>,
}

pub fn parse_isa_name(name: &str) -> Result<IsaName> {
    let bad = || {
        Error::invalid_value(format!(
            "the ISA name '{name}' is not of the form amdgcn-amd-amdhsa--gfxNNN[:feature±]..."
        ))
    };
    let target = name.strip_prefix("amdgcn-amd-amdhsa--").ok_or_else(bad)?;
    let mut parts = target.split(':');
    let processor = parts
        .next()
        .filter(|p| p.starts_with("gfx"))
        .ok_or_else(bad)?;
    let mut isa = IsaName {
        processor: processor.to_owned(),
        xnack: None,
        sramecc: None,
    };
    for feature in parts {
        let (flag, on) = if let Some(f) = feature.strip_suffix('+') {
            (f, true)
        } else if let Some(f) = feature.strip_suffix('-') {
            (f, false)
        } else {
            return Err(bad());
        };
        match flag {
            "xnack" => isa.xnack = Some(on),
            "sramecc" => isa.sramecc = Some(on),
            _ => {} // a feature images are not built for
        }
    }
    Ok(isa)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(handle: u64, segment: u32, flags: u32, allowed: bool, size: usize) -> Pool {
        Pool {
            pool: MemoryPool { handle },
            facts: PoolFacts {
                segment,
                global_flags: flags,
                alloc_allowed: allowed,
                size,
            },
            alloc_max: size,
        }
    }

    #[test]
    fn pools_are_classified_by_segment_flags_and_permission() {
        let role =
            |segment, flags, allowed| classify_pool(&pool(0, segment, flags, allowed, 1).facts);
        assert_eq!(
            role(SEGMENT_GLOBAL, GLOBAL_FLAG_COARSE_GRAINED, true),
            PoolRole::CoarseGrained
        );
        assert_eq!(
            role(SEGMENT_GLOBAL, GLOBAL_FLAG_FINE_GRAINED, true),
            PoolRole::FineGrained { kernarg: false }
        );
        assert_eq!(
            role(
                SEGMENT_GLOBAL,
                GLOBAL_FLAG_FINE_GRAINED | GLOBAL_FLAG_KERNARG_INIT,
                true
            ),
            PoolRole::FineGrained { kernarg: true }
        );
        assert_eq!(
            role(SEGMENT_GLOBAL, GLOBAL_FLAG_COARSE_GRAINED, false),
            PoolRole::Unused
        );
        assert_eq!(role(SEGMENT_GROUP, 0, false), PoolRole::Group);
        assert_eq!(role(1, GLOBAL_FLAG_FINE_GRAINED, true), PoolRole::Unused);
        assert_eq!(role(SEGMENT_GLOBAL, 0, true), PoolRole::Unused);
    }

    #[test]
    fn the_first_pool_of_each_role_is_kept() {
        let gpu = AgentPools::from_pools([
            pool(
                1,
                SEGMENT_GLOBAL,
                GLOBAL_FLAG_COARSE_GRAINED,
                true,
                64 << 30,
            ),
            pool(2, SEGMENT_GLOBAL, GLOBAL_FLAG_COARSE_GRAINED, true, 1 << 20),
            pool(3, SEGMENT_GROUP, 0, false, 65536),
        ]);
        assert_eq!(gpu.coarse.unwrap().pool.handle, 1);
        assert_eq!(gpu.group_size, 65536);
        assert!(gpu.fine.is_none() && gpu.kernarg.is_none());

        let cpu = AgentPools::from_pools([
            pool(
                4,
                SEGMENT_GLOBAL,
                GLOBAL_FLAG_FINE_GRAINED | GLOBAL_FLAG_KERNARG_INIT,
                true,
                8,
            ),
            pool(5, SEGMENT_GLOBAL, GLOBAL_FLAG_FINE_GRAINED, true, 8),
            pool(6, SEGMENT_GLOBAL, GLOBAL_FLAG_COARSE_GRAINED, true, 8),
        ]);
        assert_eq!(cpu.kernarg.unwrap().pool.handle, 4);
        assert_eq!(cpu.fine.unwrap().pool.handle, 5);

        let only_kernarg = AgentPools::from_pools([pool(
            7,
            SEGMENT_GLOBAL,
            GLOBAL_FLAG_FINE_GRAINED | GLOBAL_FLAG_KERNARG_INIT,
            true,
            8,
        )]);
        assert_eq!(only_kernarg.fine.unwrap().pool.handle, 7);
    }

    #[test]
    fn isa_names_give_processor_and_modes() {
        assert_eq!(
            parse_isa_name("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").unwrap(),
            IsaName {
                processor: "gfx90a".into(),
                xnack: Some(false),
                sramecc: Some(true)
            }
        );
        assert_eq!(
            parse_isa_name("amdgcn-amd-amdhsa--gfx1030").unwrap(),
            IsaName {
                processor: "gfx1030".into(),
                xnack: None,
                sramecc: None
            }
        );
        assert_eq!(
            parse_isa_name("amdgcn-amd-amdhsa--gfx908:xnack+")
                .unwrap()
                .xnack,
            Some(true)
        );
        for bad in [
            "",
            "gfx90a",
            "amdgcn-amd-amdhsa--",
            "amdgcn-amd-amdhsa--gfx90a:xnack",
        ] {
            let e = parse_isa_name(bad).unwrap_err();
            assert!(
                e.details.contains("amdgcn-amd-amdhsa--gfxNNN"),
                "{}",
                e.details
            );
        }
    }
}
