//! What an AMD GPU reports about itself: read from the agent once, when the device is
//! found, and turned into the answers of `olGetDeviceInfo` by a pure function.

use super::agents::{parse_isa_name, AgentPools, IsaName};
use super::ffi::{agent_info as info, Agent};
use super::hsa::Hsa;
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{fp, DeviceInfo, DeviceType, InfoValue};

/// The PCI vendor id of AMD.
pub const VENDOR_ID: u32 = 0x1002;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFacts {
    /// Position among the platform's devices.
    pub ordinal: usize,
    pub isa: IsaName,
    /// HSA_AGENT_INFO_NAME: the gfx target ("gfx90a").
    pub name: String,
    /// The marketing name ("AMD Instinct MI210"), empty where the runtime has none.
    pub product_name: String,
    pub vendor: String,
    /// "GPU-" and 16 hex digits; "GPU-XX" where the GPU has no unique id.
    pub uuid: String,
    pub hsa_version: (u16, u16),
    pub compute_units: u32,
    pub wavefront_size: u32,
    pub workgroup_max_dim: [u16; 3],
    pub workgroup_max_size: u32,
    pub grid_max_dim: [u32; 3],
    pub grid_max_size: u32,
    pub clock_mhz: u32,
    pub memory_clock_mhz: u32,
    /// Bytes of device (coarse-grained) memory, and the most one allocation may take.
    pub global_memory: u64,
    pub max_alloc: u64,
    pub lds_size: u64,
    pub queues_max: u32,
    pub queue_max_size: u32,
}

impl DeviceFacts {
    pub fn read(
        hsa: &Hsa,
        agent: Agent,
        ordinal: usize,
        pools: &AgentPools,
    ) -> Result<DeviceFacts> {
        let name = hsa.agent_string(agent, info::NAME)?;
        let isa = hsa
            .agent_isa_names(agent)?
            .into_iter()
            .find_map(|n| parse_isa_name(&n).ok())
            .ok_or_else(|| Error::backend_failure(format!("agent {name} reports no amdgcn ISA")))?;
        let wavefront_size = hsa.agent_u32(agent, info::WAVEFRONT_SIZE)?;
        if wavefront_size != 32 && wavefront_size != 64 {
            return Err(Error::backend_failure(format!(
                "agent {name} reports a wavefront of {wavefront_size} lanes; expected 32 or 64"
            )));
        }
        let grid = hsa.agent_dim3(agent, info::GRID_MAX_DIM)?;
        let coarse = pools.coarse.ok_or_else(|| {
            Error::backend_failure(format!("agent {name} has no coarse-grained memory pool"))
        })?;
        Ok(DeviceFacts {
            ordinal,
            isa,
            product_name: hsa
                .agent_string(agent, info::AMD_PRODUCT_NAME)
                .unwrap_or_default(),
            vendor: hsa
                .agent_string(agent, info::VENDOR_NAME)
                .unwrap_or_else(|_| "AMD".into()),
            uuid: hsa.agent_string(agent, info::AMD_UUID).unwrap_or_default(),
            hsa_version: hsa.version(),
            compute_units: hsa.agent_u32(agent, info::AMD_COMPUTE_UNIT_COUNT)?,
            wavefront_size,
            workgroup_max_dim: hsa.agent_u16x3(agent, info::WORKGROUP_MAX_DIM)?,
            workgroup_max_size: hsa.agent_u32(agent, info::WORKGROUP_MAX_SIZE)?,
            grid_max_dim: [grid.x, grid.y, grid.z],
            grid_max_size: hsa.agent_u32(agent, info::GRID_MAX_SIZE)?,
            clock_mhz: hsa
                .agent_u32(agent, info::AMD_MAX_CLOCK_FREQUENCY)
                .unwrap_or(0),
            memory_clock_mhz: hsa
                .agent_u32(agent, info::AMD_MEMORY_MAX_FREQUENCY)
                .unwrap_or(0),
            global_memory: coarse.facts.size as u64,
            max_alloc: coarse.alloc_max as u64,
            lds_size: pools.group_size as u64,
            queues_max: hsa.agent_u32(agent, info::QUEUES_MAX)?,
            queue_max_size: hsa.agent_u32(agent, info::QUEUE_MAX_SIZE)?,
            name,
        })
    }

    /// How messages name the device.
    pub fn label(&self) -> String {
        format!("AMDGPU device {} ({})", self.ordinal, self.name)
    }

    /// gfx9 and later have packed half-precision math (v_pk_*_f16) in hardware.
    fn has_packed_half(&self) -> bool {
        gfx_major(&self.isa.processor) >= 9
    }

    pub fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        use DeviceInfo as K;
        let group = self.workgroup_max_dim.map(u32::from);
        Ok(match key {
            K::Type => InfoValue::U32(DeviceType::Gpu as u32),
            K::Platform => return Err(Error::unknown("the runtime answers PLATFORM")),
            K::NativeHandle => return Err(Error::unknown("the device answers its agent")),
            K::NativeContext => {
                return Err(crate::plugin::unsupported(
                    "OL_DEVICE_INFO_NATIVE_CONTEXT (HSA has no context; the agent is the device's handle)",
                ))
            }
            // LLVM's AMDGPU plugin names devices by their gfx target.
            K::Name => InfoValue::Str(self.name.clone()),
            K::ProductName if self.product_name.is_empty() => InfoValue::Str(self.name.clone()),
            K::ProductName => InfoValue::Str(self.product_name.clone()),
            K::Uid => InfoValue::Str(self.uuid.clone()),
            K::Vendor => InfoValue::Str(self.vendor.clone()),
            K::DriverVersion => {
                InfoValue::Str(format!("HSA {}.{}", self.hsa_version.0, self.hsa_version.1))
            }
            K::MaxWorkGroupSize => InfoValue::U32(self.workgroup_max_size),
            K::MaxWorkGroupSizePerDimension => InfoValue::Dims(group),
            // HSA's grid sizes count work-items already (not groups as CUDA's do).
            K::MaxWorkSize => InfoValue::U32(self.grid_max_size),
            K::MaxWorkSizePerDimension => InfoValue::Dims(self.grid_max_dim),
            K::VendorId => InfoValue::U32(VENDOR_ID),
            K::NumComputeUnits => InfoValue::U32(self.compute_units),
            K::MaxClockFrequency => InfoValue::U32(self.clock_mhz),
            K::MemoryClockRate => InfoValue::U32(self.memory_clock_mhz),
            K::AddressBits => InfoValue::U32(64),
            K::MaxMemAllocSize => InfoValue::U64(self.max_alloc),
            K::GlobalMemSize => InfoValue::U64(self.global_memory),
            K::WorkGroupLocalMemSize => InfoValue::U64(self.lds_size),
            K::SingleFpConfig | K::DoubleFpConfig => InfoValue::U32(
                fp::ROUND_TO_NEAREST
                    | fp::ROUND_TO_ZERO
                    | fp::ROUND_TO_INF
                    | fp::INF_NAN
                    | fp::DENORM
                    | fp::FMA
                    | fp::CORRECTLY_ROUNDED_DIVIDE_SQRT,
            ),
            K::HalfFpConfig => InfoValue::U32(
                fp::ROUND_TO_NEAREST
                    | fp::ROUND_TO_ZERO
                    | fp::ROUND_TO_INF
                    | fp::INF_NAN
                    | fp::DENORM
                    | fp::FMA,
            ),
            K::NativeVectorWidthChar
            | K::NativeVectorWidthShort
            | K::NativeVectorWidthInt
            | K::NativeVectorWidthLong
            | K::NativeVectorWidthFloat
            | K::NativeVectorWidthDouble => InfoValue::U32(1),
            K::NativeVectorWidthHalf => InfoValue::U32(if self.has_packed_half() { 2 } else { 1 }),
            K::NumLanes => InfoValue::U32(self.wavefront_size),
        })
    }
}

/// The major generation of a gfx target: gfx90a → 9, gfx1030 → 10, gfx1100 → 11.
pub fn gfx_major(processor: &str) -> u32 {
    let digits = processor.strip_prefix("gfx").unwrap_or("");
    // The last two characters are minor and stepping (stepping may be a hex letter).
    let major = digits.get(..digits.len().saturating_sub(2)).unwrap_or("");
    major.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn mi210() -> DeviceFacts {
        DeviceFacts {
            ordinal: 0,
            isa: IsaName {
                processor: "gfx90a".into(),
                xnack: Some(false),
                sramecc: Some(true),
            },
            name: "gfx90a".into(),
            product_name: "AMD Instinct MI210".into(),
            vendor: "AMD".into(),
            uuid: "GPU-0123456789abcdef".into(),
            hsa_version: (1, 1),
            compute_units: 104,
            wavefront_size: 64,
            workgroup_max_dim: [1024, 1024, 1024],
            workgroup_max_size: 1024,
            grid_max_dim: [u32::MAX; 3],
            grid_max_size: u32::MAX,
            clock_mhz: 1700,
            memory_clock_mhz: 1600,
            global_memory: 64 << 30,
            max_alloc: 64 << 30,
            lds_size: 65536,
            queues_max: 128,
            queue_max_size: 131072,
        }
    }

    #[test]
    fn info_answers_come_from_the_agent() {
        let f = mi210();
        let s = |k| match f.info(k).unwrap() {
            InfoValue::Str(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(s(DeviceInfo::Name), "gfx90a");
        assert_eq!(s(DeviceInfo::ProductName), "AMD Instinct MI210");
        assert_eq!(s(DeviceInfo::DriverVersion), "HSA 1.1");
        assert_eq!(s(DeviceInfo::Uid), "GPU-0123456789abcdef");
        assert_eq!(
            f.info(DeviceInfo::NumComputeUnits).unwrap(),
            InfoValue::U32(104)
        );
        assert_eq!(f.info(DeviceInfo::NumLanes).unwrap(), InfoValue::U32(64));
        assert_eq!(
            f.info(DeviceInfo::VendorId).unwrap(),
            InfoValue::U32(0x1002)
        );
        assert_eq!(
            f.info(DeviceInfo::MaxWorkGroupSizePerDimension).unwrap(),
            InfoValue::Dims([1024; 3])
        );
        assert_eq!(
            f.info(DeviceInfo::WorkGroupLocalMemSize).unwrap(),
            InfoValue::U64(65536)
        );
        assert_eq!(
            f.info(DeviceInfo::GlobalMemSize).unwrap(),
            InfoValue::U64(64 << 30)
        );
        assert_eq!(
            f.info(DeviceInfo::Type).unwrap(),
            InfoValue::U32(DeviceType::Gpu as u32)
        );
        assert_eq!(
            f.info(DeviceInfo::NativeVectorWidthHalf).unwrap(),
            InfoValue::U32(2)
        );
        assert!(f.info(DeviceInfo::Platform).is_err());
        for key in DeviceInfo::all().filter(|&k| k != DeviceInfo::Platform && !k.is_native()) {
            assert!(f.info(key).is_ok(), "{key:?}");
        }
        let unnamed = DeviceFacts {
            product_name: String::new(),
            ..mi210()
        };
        assert_eq!(
            unnamed.info(DeviceInfo::ProductName).unwrap(),
            InfoValue::Str("gfx90a".into())
        );
        assert_eq!(f.label(), "AMDGPU device 0 (gfx90a)");
    }

    #[test]
    fn gfx_generations() {
        assert_eq!(gfx_major("gfx90a"), 9);
        assert_eq!(gfx_major("gfx803"), 8);
        assert_eq!(gfx_major("gfx1030"), 10);
        assert_eq!(gfx_major("gfx1100"), 11);
        assert_eq!(gfx_major("gfx942"), 9);
        assert_eq!(gfx_major("nonsense"), 0);
    }
}
