//! What a CUDA device reports about itself: read from the driver once, when the device
//! is found, and turned into the answers of `olGetDeviceInfo` by pure functions.

use super::driver::Driver;
use super::ffi::{device_attribute as attr, CuDevice};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{fp, DeviceInfo, DeviceType, InfoValue};

/// `OL_DEVICE_INFO_VENDOR` of every NVIDIA device.
pub const VENDOR: &str = "NVIDIA Corporation";
/// The PCI vendor id of NVIDIA.
pub const VENDOR_ID: u32 = 0x10de;

/// The IEEE 754 behaviour every NVIDIA GPU has in hardware: all four rounding modes (as
/// instruction modifiers), infinities and NaNs, denormals (single precision flushes them
/// only when a kernel is built with -ftz).
const IEEE: u32 =
    fp::ROUND_TO_NEAREST | fp::ROUND_TO_ZERO | fp::ROUND_TO_INF | fp::INF_NAN | fp::DENORM;

/// The readings of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFacts {
    pub ordinal: i32,
    pub name: String,
    pub uuid: [u8; 16],
    pub total_memory: u64,
    /// `cuDriverGetVersion` (12080 for 12.8).
    pub driver_version: i32,
    pub compute_capability: (i32, i32),
    pub max_threads_per_block: i32,
    pub max_block_dim: [i32; 3],
    pub max_grid_dim: [i32; 3],
    pub multiprocessors: i32,
    /// kHz; 0 where the driver does not say (CUDA 13 deprecates the attribute).
    pub clock_khz: i32,
    pub memory_clock_khz: i32,
    pub shared_per_block: i32,
    /// What a kernel may opt in to (above 48 KiB needs `cuFuncSetAttribute`).
    pub shared_per_block_optin: i32,
    pub warp_size: i32,
    /// PCI domain, bus, device.
    pub pci: (i32, i32, i32),
    pub cooperative_launch: bool,
    pub managed_memory: bool,
    pub unified_addressing: bool,
}

impl DeviceFacts {
    /// Reads every fact of `device` from the driver.
    pub fn read(driver: &Driver, ordinal: i32, device: CuDevice) -> Result<DeviceFacts> {
        let get = |a| driver.device_attribute(device, a);
        // Optional readings: 0 (unknown) rather than no device.
        let maybe = |a| driver.device_attribute(device, a).unwrap_or(0);
        Ok(DeviceFacts {
            ordinal,
            name: driver.device_name(device)?,
            uuid: driver.device_uuid(device)?,
            total_memory: driver.device_total_mem(device)? as u64,
            driver_version: driver.version(),
            compute_capability: (
                get(attr::COMPUTE_CAPABILITY_MAJOR)?,
                get(attr::COMPUTE_CAPABILITY_MINOR)?,
            ),
            max_threads_per_block: get(attr::MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                get(attr::MAX_BLOCK_DIM_X)?,
                get(attr::MAX_BLOCK_DIM_Y)?,
                get(attr::MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                get(attr::MAX_GRID_DIM_X)?,
                get(attr::MAX_GRID_DIM_Y)?,
                get(attr::MAX_GRID_DIM_Z)?,
            ],
            multiprocessors: get(attr::MULTIPROCESSOR_COUNT)?,
            clock_khz: maybe(attr::CLOCK_RATE),
            memory_clock_khz: maybe(attr::MEMORY_CLOCK_RATE),
            shared_per_block: get(attr::MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_per_block_optin: maybe(attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            warp_size: get(attr::WARP_SIZE)?,
            pci: (
                maybe(attr::PCI_DOMAIN_ID),
                maybe(attr::PCI_BUS_ID),
                maybe(attr::PCI_DEVICE_ID),
            ),
            cooperative_launch: maybe(attr::COOPERATIVE_LAUNCH) != 0,
            managed_memory: maybe(attr::MANAGED_MEMORY) != 0,
            unified_addressing: maybe(attr::UNIFIED_ADDRESSING) != 0,
        })
    }

    /// The SM number images are built for: 90 for compute capability 9.0.
    pub fn sm(&self) -> u32 {
        sm_number(self.compute_capability.0, self.compute_capability.1)
    }

    /// The most dynamic shared memory one block may have.
    pub fn local_memory(&self) -> u64 {
        self.shared_per_block
            .max(self.shared_per_block_optin)
            .max(0) as u64
    }

    /// How messages name the device: "CUDA device 0 (NVIDIA H100 80GB HBM3)" (image
    /// messages add the architecture themselves).
    pub fn label(&self) -> String {
        format!("CUDA device {} ({})", self.ordinal, self.name)
    }

    /// The answer to one info query.
    pub fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        use DeviceInfo as K;
        let sm = self.sm();
        let block = self.max_block_dim.map(non_negative);
        let grid = self.max_grid_dim.map(non_negative);
        Ok(match key {
            K::Type => InfoValue::U32(DeviceType::Gpu as u32),
            K::Platform => return Err(Error::unknown("the runtime answers PLATFORM")),
            K::NativeHandle | K::NativeContext => {
                return Err(Error::unknown("the device answers its native handles"))
            }
            K::Name | K::ProductName => InfoValue::Str(self.name.clone()),
            K::Uid => InfoValue::Str(format_uuid(&self.uuid)),
            K::Vendor => InfoValue::Str(VENDOR.to_string()),
            K::DriverVersion => InfoValue::Str(driver_version_string(self.driver_version)),
            K::MaxWorkGroupSize => InfoValue::U32(non_negative(self.max_threads_per_block)),
            K::MaxWorkGroupSizePerDimension => InfoValue::Dims(block),
            K::MaxWorkSize => InfoValue::U32(max_work_size(grid, self.max_threads_per_block)),
            K::MaxWorkSizePerDimension => InfoValue::Dims(max_work_size_per_dimension(grid, block)),
            K::VendorId => InfoValue::U32(VENDOR_ID),
            K::NumComputeUnits => InfoValue::U32(non_negative(self.multiprocessors)),
            // 0 means unknown, an answer rather than an error (as for the host device).
            K::MaxClockFrequency => InfoValue::U32(khz_to_mhz(self.clock_khz)),
            K::MemoryClockRate => InfoValue::U32(khz_to_mhz(self.memory_clock_khz)),
            K::AddressBits => InfoValue::U32(64),
            K::MaxMemAllocSize | K::GlobalMemSize => InfoValue::U64(self.total_memory),
            K::WorkGroupLocalMemSize => InfoValue::U64(self.local_memory()),
            K::SingleFpConfig | K::DoubleFpConfig => InfoValue::U32(full_fp_config()),
            K::HalfFpConfig => InfoValue::U32(half_fp_config(sm)),
            K::NativeVectorWidthChar
            | K::NativeVectorWidthShort
            | K::NativeVectorWidthInt
            | K::NativeVectorWidthLong
            | K::NativeVectorWidthFloat
            | K::NativeVectorWidthDouble => InfoValue::U32(1),
            K::NativeVectorWidthHalf => InfoValue::U32(native_half_width(sm)),
            K::NumLanes => InfoValue::U32(non_negative(self.warp_size)),
        })
    }
}

fn non_negative(v: i32) -> u32 {
    v.max(0) as u32
}

/// 9.0 -> 90, 8.6 -> 86, 10.0 -> 100, 12.1 -> 121.
pub fn sm_number(major: i32, minor: i32) -> u32 {
    (major.max(0) * 10 + minor.max(0)) as u32
}

/// The driver's kHz as MHz, to the nearest; 0 stays 0 (unknown).
pub fn khz_to_mhz(khz: i32) -> u32 {
    (non_negative(khz) + 500) / 1000
}

/// The UUID as `nvidia-smi -L` shows it: "GPU-" then 8-4-4-4-12 lowercase hex digits.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex = |range: std::ops::Range<usize>| -> String {
        bytes[range].iter().map(|b| format!("{b:02x}")).collect()
    };
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// `cuDriverGetVersion`'s 1000 * major + 10 * minor as "12.8".
pub fn driver_version_string(version: i32) -> String {
    let v = version.max(0);
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Work-items per dimension: blocks times threads per block, where the product fits.
pub fn max_work_size_per_dimension(grid: [u32; 3], block: [u32; 3]) -> [u32; 3] {
    [0, 1, 2].map(|i| grid[i].saturating_mul(block[i]))
}

/// Work-items of one launch: every block of the largest grid, each as large as a block
/// may be; more than 2^32 on every NVIDIA GPU, so `u32::MAX` in practice.
pub fn max_work_size(grid: [u32; 3], max_threads_per_block: i32) -> u32 {
    let blocks = grid.iter().fold(1u64, |n, &g| n.saturating_mul(g as u64));
    let items = blocks.saturating_mul(non_negative(max_threads_per_block) as u64);
    items.min(u32::MAX as u64) as u32
}

/// Single and double precision: IEEE 754 in hardware on every supported GPU, with fused
/// multiply-add and correctly rounded division and square root (the default of CUDA C and
/// of LLVM's NVPTX backend; the approximate forms are opt-in).
pub fn full_fp_config() -> u32 {
    IEEE | fp::FMA | fp::CORRECTLY_ROUNDED_DIVIDE_SQRT
}

/// Half precision arithmetic arrived with sm_53 (`add.f16`, `fma.rn.f16`); before it
/// half is a storage format only, so no capabilities. Division and square root of half
/// values go through single precision, so they are not claimed as correctly rounded.
pub fn half_fp_config(sm: u32) -> u32 {
    if sm >= 53 {
        IEEE | fp::FMA
    } else {
        0
    }
}

/// The GPU's registers are 32 bits wide and its ISA is scalar per thread, so the native
/// vector width of every type is 1; half is the exception from sm_53, where `f16x2`
/// instructions work on two halves in one register. 0 means no native half arithmetic.
pub fn native_half_width(sm: u32) -> u32 {
    if sm >= 53 {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceFacts {
        DeviceFacts {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: [
                0x5d, 0x4a, 0x0f, 0x2e, 0x9b, 0x11, 0x47, 0x3c, 0x8e, 0x01, 0x00, 0xa1, 0xb2, 0xc3,
                0xd4, 0xe5,
            ],
            total_memory: 85_031_714_816,
            driver_version: 12080,
            compute_capability: (9, 0),
            max_threads_per_block: 1024,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [2_147_483_647, 65535, 65535],
            multiprocessors: 132,
            clock_khz: 1_980_000,
            memory_clock_khz: 2_619_000,
            shared_per_block: 49152,
            shared_per_block_optin: 232_448,
            warp_size: 32,
            pci: (0, 0x18, 0),
            cooperative_launch: true,
            managed_memory: true,
            unified_addressing: true,
        }
    }

    #[test]
    fn unit_conversions() {
        assert_eq!(khz_to_mhz(1_980_000), 1980);
        assert_eq!(khz_to_mhz(1_410_500), 1411);
        assert_eq!(khz_to_mhz(1_410_499), 1410);
        assert_eq!(khz_to_mhz(0), 0);
        assert_eq!(khz_to_mhz(-5), 0);
        assert_eq!(driver_version_string(12080), "12.8");
        assert_eq!(driver_version_string(12020), "12.2");
        assert_eq!(driver_version_string(11040), "11.4");
        assert_eq!(driver_version_string(13000), "13.0");
        assert_eq!(sm_number(9, 0), 90);
        assert_eq!(sm_number(8, 6), 86);
        assert_eq!(sm_number(10, 0), 100);
        assert_eq!(sm_number(12, 1), 121);
    }

    #[test]
    fn uuid_is_formatted_like_nvidia_smi() {
        assert_eq!(
            format_uuid(&h100().uuid),
            "GPU-5d4a0f2e-9b11-473c-8e01-00a1b2c3d4e5"
        );
        assert_eq!(format_uuid(&[0; 16]).len(), 4 + 36);
    }

    #[test]
    fn fp_capabilities_by_architecture() {
        assert_eq!(full_fp_config(), 0x7f, "every flag but SOFT_FLOAT");
        assert_eq!(half_fp_config(52), 0);
        assert_eq!(
            half_fp_config(53),
            0x7e,
            "IEEE flags and FMA, no CR div/sqrt"
        );
        assert_eq!(half_fp_config(90), 0x7e);
        assert_eq!(native_half_width(52), 0);
        assert_eq!(native_half_width(80), 2);
    }

    #[test]
    fn work_sizes_saturate() {
        let grid = [2_147_483_647, 65535, 65535];
        let block = [1024, 1024, 64];
        assert_eq!(
            max_work_size_per_dimension(grid, block),
            [u32::MAX, 65535 * 1024, 65535 * 64]
        );
        assert_eq!(max_work_size(grid, 1024), u32::MAX);
        assert_eq!(max_work_size([4, 1, 1], 256), 1024);
    }

    #[test]
    fn every_key_has_an_answer_of_the_right_type() {
        let facts = h100();
        for key in DeviceInfo::all() {
            let answer = facts.info(key);
            if key == DeviceInfo::Platform || key.is_native() {
                assert!(answer.is_err());
                continue;
            }
            let value = answer.unwrap_or_else(|e| panic!("{key:?}: {e}"));
            let expected_type = match key {
                DeviceInfo::Name
                | DeviceInfo::ProductName
                | DeviceInfo::Uid
                | DeviceInfo::Vendor
                | DeviceInfo::DriverVersion => "str",
                DeviceInfo::MaxWorkGroupSizePerDimension | DeviceInfo::MaxWorkSizePerDimension => {
                    "dims"
                }
                DeviceInfo::MaxMemAllocSize
                | DeviceInfo::GlobalMemSize
                | DeviceInfo::WorkGroupLocalMemSize => "u64",
                _ => "u32",
            };
            let actual = match value {
                InfoValue::Str(_) => "str",
                InfoValue::Dims(_) => "dims",
                InfoValue::U64(_) => "u64",
                InfoValue::U32(_) => "u32",
                _ => "other",
            };
            assert_eq!(actual, expected_type, "{key:?}");
        }
        assert_eq!(
            facts.info(DeviceInfo::Type).unwrap(),
            InfoValue::U32(DeviceType::Gpu as u32)
        );
        assert_eq!(
            facts.info(DeviceInfo::MaxClockFrequency).unwrap(),
            InfoValue::U32(1980)
        );
        assert_eq!(
            facts.info(DeviceInfo::MemoryClockRate).unwrap(),
            InfoValue::U32(2619)
        );
        assert_eq!(
            facts.info(DeviceInfo::DriverVersion).unwrap(),
            InfoValue::Str("12.8".into())
        );
        assert_eq!(
            facts.info(DeviceInfo::VendorId).unwrap(),
            InfoValue::U32(0x10de)
        );
        assert_eq!(
            facts.info(DeviceInfo::WorkGroupLocalMemSize).unwrap(),
            InfoValue::U64(232_448)
        );
        assert_eq!(
            facts.info(DeviceInfo::NumLanes).unwrap(),
            InfoValue::U32(32)
        );
        assert_eq!(
            facts.info(DeviceInfo::NativeVectorWidthHalf).unwrap(),
            InfoValue::U32(2)
        );
        assert_eq!(facts.sm(), 90);
        assert_eq!(facts.label(), "CUDA device 0 (NVIDIA H100 80GB HBM3)");
    }
}
