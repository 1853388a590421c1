//! What LLVM's GPU plugins do when a device image is loaded, done through liboffload:
//! the device environment global `__omp_rtl_device_environment` is written (the device
//! runtime reads the number of devices, its own number, the debug kind, the clock and
//! dynamic memory size from it), and each region's `<kernel>_kernel_environment` is read
//! for its launches (`launch_plan`).

use crate::plugin::device_memory;
use crate::plugin::gpu_limits::GpuLimits;
use crate::plugin::kernel_env::{self, ExecMode, KernelEnv, KERNEL_ENV_SIZE};
use crate::plugin::ol::{self, Device, Program};
use offload::plugin::foundation::int_hash::IntMap;
use std::sync::LazyLock;

/// What a GPU's OpenMP device keeps for launches.
pub struct GpuDevice {
    pub limits: GpuLimits,
    /// Where the device sits among its platform's devices (LLVM's plugin-local number,
    /// which the device environment carries) and how many that platform has.
    pub platform_index: u32,
    pub platform_devices: u32,
    /// Each loaded region's kernel environment, by region ID (host entry address).
    pub kernels: IntMap<usize, KernelEnv>,
}

/// The size of `DeviceEnvironmentTy`, the same in LLVM 19 and 22.
const DEVICE_ENV_SIZE: usize = 48;
const DEVICE_ENV_GLOBAL: &str = "__omp_rtl_device_environment";
/// The clock `omp_get_wtime` counts on NVIDIA GPUs: `%globaltimer`, in nanoseconds.
const NVIDIA_CLOCK_HZ: u64 = 1_000_000_000;
/// Resident threads per multiprocessor (sm_80 and sm_90; LLVM reads the attribute):
/// with the warp size, the device environment's hardware parallelism.
const THREADS_PER_MULTIPROCESSOR: u64 = 2048;

/// `LIBOMPTARGET_SHARED_MEMORY_SIZE`: dynamic shared memory every launch gets at least,
/// which the device environment carries too. Read once, as LLVM does (launches are a hot
/// path).
pub fn shared_memory_size() -> u32 {
    static SIZE: LazyLock<u32> = LazyLock::new(|| env_number("LIBOMPTARGET_SHARED_MEMORY_SIZE"));
    *SIZE
}

/// A numeric variable of LLVM's, 0 where unset or not a number.
fn env_number(name: &str) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(0)
}

impl GpuDevice {
    /// A GPU's launch limits, or `None` for a device whose kernels follow the host
    /// convention (the host device, remote devices).
    pub fn probe(device: Device, all: &[Device]) -> Option<GpuDevice> {
        let kind: u32 = ol::device_info(device, offload::capi::OL_DEVICE_INFO_TYPE).ok()?;
        if kind != offload::capi::OL_DEVICE_TYPE_GPU {
            return None;
        }
        let warp: u32 =
            ol::device_info(device, offload::capi::OL_DEVICE_INFO_NUM_LANES).unwrap_or(32);
        let max_threads: [u32; 3] = ol::device_info(
            device,
            offload::capi::OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION,
        )
        .unwrap_or([1024, 1024, 64]);
        let platform = ol::platform_of(device).ok();
        let siblings: Vec<Device> = all
            .iter()
            .copied()
            .filter(|d| ol::platform_of(*d).ok() == platform)
            .collect();
        Some(GpuDevice {
            // Grids reach 2^31 - 1 teams in x on every GPU LLVM's plugins drive.
            limits: GpuLimits::new(warp, max_threads[0], i32::MAX as u32, |name| {
                std::env::var(name).ok()
            }),
            platform_index: siblings.iter().position(|d| *d == device).unwrap_or(0) as u32,
            platform_devices: siblings.len() as u32,
            kernels: IntMap::default(),
        })
    }

    /// After `program` was loaded on `device`: writes its device environment (with the
    /// table of its `indirect` functions, host and device address pairs) and reads the
    /// environments of the kernels named in `kernels` (region ID, symbol name).
    pub fn image_loaded(
        &mut self,
        device: Device,
        host: Device,
        program: Program,
        kernels: &[(usize, &str)],
        indirect: &[(usize, usize)],
    ) -> Result<(), String> {
        if let Some((address, size)) = ol::global_info(program, DEVICE_ENV_GLOBAL)? {
            // LLVM goes on without it when the sizes differ, and so does this.
            if size == DEVICE_ENV_SIZE {
                let table = self.indirect_call_table(device, host, indirect)?;
                let bytes = self.device_environment(device, table, indirect.len());
                ol::memcpy(address, device, bytes.as_ptr() as usize, host, bytes.len())?;
            }
        }
        for &(region, name) in kernels {
            let env = match ol::global_info(program, &kernel_env::global_name(name))? {
                Some((address, size)) if size >= KERNEL_ENV_SIZE => {
                    let mut bytes = [0u8; KERNEL_ENV_SIZE];
                    ol::memcpy(
                        bytes.as_mut_ptr() as usize,
                        host,
                        address,
                        device,
                        KERNEL_ENV_SIZE,
                    )?;
                    kernel_env::parse(&bytes).map_err(|e| format!("kernel '{name}': {e}"))?
                }
                // Not made by OpenMP codegen: launched as the clauses say.
                _ => KernelEnv::unbounded(ExecMode::Bare),
            };
            self.kernels.insert(region, env);
        }
        Ok(())
    }

    /// The device runtime's table of `indirect` functions (looked up by
    /// `__llvm_omp_indirect_call_lookup` when a region calls through a host function
    /// pointer): the pairs sorted by host address, in device memory kept for the
    /// program's lifetime; 0 with none.
    fn indirect_call_table(
        &mut self,
        device: Device,
        host: Device,
        indirect: &[(usize, usize)],
    ) -> Result<usize, String> {
        if indirect.is_empty() {
            return Ok(0);
        }
        let mut pairs = indirect.to_vec();
        pairs.sort_unstable();
        let bytes: Vec<u8> = pairs
            .iter()
            .flat_map(|&(h, d)| [h.to_ne_bytes(), d.to_ne_bytes()].concat())
            .collect();
        let table = device_memory::alloc(device, bytes.len())?;
        ol::memcpy(table, device, bytes.as_ptr() as usize, host, bytes.len())?;
        Ok(table)
    }

    /// LLVM's `DeviceEnvironmentTy` for this device, as the device reads it.
    fn device_environment(
        &self,
        device: Device,
        indirect_table: usize,
        indirect_count: usize,
    ) -> [u8; DEVICE_ENV_SIZE] {
        let units: u32 =
            ol::device_info(device, offload::capi::OL_DEVICE_INFO_NUM_COMPUTE_UNITS).unwrap_or(0);
        DeviceEnvironment {
            debug_kind: env_number("LIBOMPTARGET_DEVICE_RTL_DEBUG"),
            num_devices: self.platform_devices,
            device_num: self.platform_index,
            dynamic_mem_size: shared_memory_size(),
            clock_hz: NVIDIA_CLOCK_HZ,
            indirect_table: indirect_table as u64,
            indirect_count: indirect_count as u64,
            hardware_parallelism: u64::from(units)
                * (THREADS_PER_MULTIPROCESSOR / u64::from(self.limits.warp_size)),
        }
        .to_bytes()
    }
}

/// The fields of LLVM's `DeviceEnvironmentTy`, in its order.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceEnvironment {
    pub debug_kind: u32,
    pub num_devices: u32,
    pub device_num: u32,
    pub dynamic_mem_size: u32,
    pub clock_hz: u64,
    pub indirect_table: u64,
    pub indirect_count: u64,
    pub hardware_parallelism: u64,
}

impl DeviceEnvironment {
    /// The 48 bytes the device runtime reads: four `uint32_t`, four 64-bit fields.
    pub fn to_bytes(&self) -> [u8; DEVICE_ENV_SIZE] {
        let mut bytes = [0u8; DEVICE_ENV_SIZE];
        let words = [
            self.debug_kind,
            self.num_devices,
            self.device_num,
            self.dynamic_mem_size,
        ];
        for (i, w) in words.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        let longs = [
            self.clock_hz,
            self.indirect_table,
            self.indirect_count,
            self.hardware_parallelism,
        ];
        for (i, l) in longs.iter().enumerate() {
            bytes[16 + 8 * i..24 + 8 * i].copy_from_slice(&l.to_le_bytes());
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_environment_has_llvms_layout() {
        let bytes = DeviceEnvironment {
            debug_kind: 1,
            num_devices: 2,
            device_num: 1,
            dynamic_mem_size: 4096,
            clock_hz: NVIDIA_CLOCK_HZ,
            indirect_table: 0xdead_0000,
            indirect_count: 3,
            hardware_parallelism: 132 * 64,
        }
        .to_bytes();
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        assert_eq!(
            (u32_at(0), u32_at(4), u32_at(8), u32_at(12)),
            (1, 2, 1, 4096)
        );
        assert_eq!(u64_at(16), 1_000_000_000);
        assert_eq!((u64_at(24), u64_at(32)), (0xdead_0000, 3));
        assert_eq!(u64_at(40), 8448);
    }
}
