//! What the host device reports about itself: real readings of this machine, taken once.

use super::cpu_features::{self, CpuFeatures};
use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{DeviceInfo, InfoValue};

#[derive(Clone, Debug)]
pub struct HostFacts {
    pub model_name: String,
    pub vendor: String,
    pub vendor_id: u32,
    pub uid: String,
    pub kernel_release: String,
    pub logical_cores: u32,
    pub max_clock_mhz: Option<u32>,
    pub total_memory: u64,
    pub local_memory: u64,
    /// Floating point capabilities and native vector widths of this CPU.
    pub cpu: CpuFeatures,
    /// The memory clock in MHz, where the firmware tables are readable (root, usually).
    pub memory_clock_mhz: Option<u32>,
}

/// Work-items of one group on the host run one after another on one core; the limit is
/// the one kernels written for GPUs expect.
pub const MAX_GROUP_SIZE: u32 = 1024;

impl HostFacts {
    /// This machine's facts, read once per process: they do not change while it runs, and
    /// reading /proc/cpuinfo costs the kernel more than the rest of olInit together.
    pub fn get() -> &'static HostFacts {
        static FACTS: std::sync::OnceLock<HostFacts> = std::sync::OnceLock::new();
        FACTS.get_or_init(HostFacts::read)
    }

    pub fn read() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let vendor_tag = cpuinfo_field(&cpuinfo, "vendor_id").unwrap_or_default();
        let (vendor, vendor_id) = match vendor_tag.as_str() {
            "GenuineIntel" => ("Intel".to_string(), 0x8086),
            "AuthenticAMD" => ("AMD".to_string(), 0x1022),
            "" => (cpu_implementer(&cpuinfo), 0),
            other => (other.to_string(), 0),
        };
        let model_name = cpuinfo_field(&cpuinfo, "model name")
            .or_else(|| cpuinfo_field(&cpuinfo, "Hardware"))
            .or_else(|| cpuinfo_field(&cpuinfo, "Processor"))
            .unwrap_or_else(|| format!("{} processor", std::env::consts::ARCH));
        let machine_id = read_trimmed("/etc/machine-id")
            .or_else(|| read_trimmed("/proc/sys/kernel/hostname"))
            .unwrap_or_default();
        HostFacts {
            uid: format!(
                "host-{:016x}",
                fnv1a(format!("{machine_id}/{model_name}").as_bytes())
            ),
            model_name,
            vendor,
            vendor_id,
            kernel_release: read_trimmed("/proc/sys/kernel/osrelease")
                .map(|r| format!("Linux {r}"))
                .unwrap_or_else(|| std::env::consts::OS.to_string()),
            logical_cores: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            max_clock_mhz: max_clock_mhz(&cpuinfo),
            total_memory: total_memory().unwrap_or(0),
            local_memory: l2_cache_bytes().unwrap_or(256 << 10).into(),
            cpu: cpu_features::detect(),
            memory_clock_mhz: cpu_features::memory_clock_mhz(),
        }
    }

    pub fn info(&self, key: DeviceInfo) -> Result<InfoValue> {
        use DeviceInfo as K;
        Ok(match key {
            K::Type => InfoValue::U32(crate::plugin::DeviceType::Host as u32),
            K::Platform => return Err(Error::unknown("the runtime answers PLATFORM")),
            K::NativeHandle | K::NativeContext => {
                return Err(crate::plugin::unsupported(
                    "a native handle (the host device uses no vendor library)",
                ))
            }
            K::Name | K::ProductName => InfoValue::Str(self.model_name.clone()),
            K::Uid => InfoValue::Str(self.uid.clone()),
            K::Vendor => InfoValue::Str(self.vendor.clone()),
            K::DriverVersion => InfoValue::Str(self.kernel_release.clone()),
            K::MaxWorkGroupSize => InfoValue::U32(MAX_GROUP_SIZE),
            K::MaxWorkGroupSizePerDimension => InfoValue::Dims([MAX_GROUP_SIZE; 3]),
            K::MaxWorkSize => InfoValue::U32(u32::MAX),
            K::MaxWorkSizePerDimension => InfoValue::Dims([u32::MAX; 3]),
            K::VendorId => InfoValue::U32(self.vendor_id),
            K::NumComputeUnits => InfoValue::U32(self.logical_cores),
            // 0 means unknown (no cpufreq, no 'cpu MHz' in /proc/cpuinfo), an answer rather
            // than an error, so callers that query every key do not stop here.
            K::MaxClockFrequency => InfoValue::U32(self.max_clock_mhz.unwrap_or(0)),
            // 0 means unknown: Linux shows the SMBIOS memory tables to root only, and
            // callers that query every key must not stop on this one.
            K::MemoryClockRate => InfoValue::U32(self.memory_clock_mhz.unwrap_or(0)),
            K::AddressBits => InfoValue::U32(usize::BITS),
            K::MaxMemAllocSize | K::GlobalMemSize => InfoValue::U64(self.total_memory),
            K::WorkGroupLocalMemSize => InfoValue::U64(self.local_memory),
            K::SingleFpConfig => InfoValue::U32(self.cpu.single_fp),
            K::DoubleFpConfig => InfoValue::U32(self.cpu.double_fp),
            K::HalfFpConfig => InfoValue::U32(self.cpu.half_fp),
            K::NativeVectorWidthChar => InfoValue::U32(self.cpu.vector_width.char),
            K::NativeVectorWidthShort => InfoValue::U32(self.cpu.vector_width.short),
            K::NativeVectorWidthInt => InfoValue::U32(self.cpu.vector_width.int),
            K::NativeVectorWidthLong => InfoValue::U32(self.cpu.vector_width.long),
            K::NativeVectorWidthFloat => InfoValue::U32(self.cpu.vector_width.float),
            K::NativeVectorWidthDouble => InfoValue::U32(self.cpu.vector_width.double),
            K::NativeVectorWidthHalf => InfoValue::U32(self.cpu.vector_width.half),
            K::NumLanes => InfoValue::U32(1),
        })
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The value of the first `key : value` line of /proc/cpuinfo.
fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
    })
}

/// Arm's implementer codes, for machines whose cpuinfo has no vendor string.
fn cpu_implementer(cpuinfo: &str) -> String {
    match cpuinfo_field(cpuinfo, "CPU implementer").as_deref() {
        Some("0x41") => "Arm".into(),
        Some("0x61") => "Apple".into(),
        Some("0x51") => "Qualcomm".into(),
        Some("0x4e") => "NVIDIA".into(),
        Some("0xc0") => "Ampere".into(),
        Some(other) => format!("implementer {other}"),
        None => "unknown".into(),
    }
}

fn max_clock_mhz(cpuinfo: &str) -> Option<u32> {
    if let Some(khz) = read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .and_then(|s| s.parse::<u64>().ok())
    {
        return Some((khz / 1000) as u32);
    }
    let mhz = cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim() == "cpu MHz")
        .filter_map(|(_, v)| v.trim().parse::<f64>().ok())
        .fold(0.0f64, f64::max);
    (mhz > 0.0).then(|| mhz.round() as u32)
}

fn total_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

fn l2_cache_bytes() -> Option<u32> {
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        if read_trimmed(&format!("{dir}/level")).as_deref() != Some("2") {
            continue;
        }
        let size = read_trimmed(&format!("{dir}/size"))?;
        let (num, unit) = size.split_at(size.trim_end_matches(char::is_alphabetic).len());
        let n: u32 = num.parse().ok()?;
        return Some(match unit {
            "K" => n * 1024,
            "M" => n * 1024 * 1024,
            _ => n,
        });
    }
    None
}

/// A stable, dependency-free hash for the UID.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_plausible() {
        let f = HostFacts::read();
        assert!(!f.model_name.is_empty());
        assert!(f.logical_cores >= 1);
        assert!(f.total_memory > 1 << 20);
        assert!(f.uid.starts_with("host-"));
        assert_eq!(f.uid, HostFacts::read().uid, "the UID is stable");
    }

    #[test]
    fn cpuinfo_fields_parse() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU @ 2.00GHz\ncpu MHz\t\t: 1999.6\n";
        assert_eq!(
            cpuinfo_field(text, "model name").unwrap(),
            "Test CPU @ 2.00GHz"
        );
        assert_eq!(cpuinfo_field(text, "nothing"), None);
        if read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").is_none() {
            assert_eq!(max_clock_mhz(text), Some(2000));
        }
    }
}
