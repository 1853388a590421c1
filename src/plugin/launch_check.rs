//! The one check of a kernel launch: its argument buffer, its grid against API.md's
//! rules and the limits of the device and kernel, and a cooperative launch's residency.
//! The runtime runs it when `olLaunchKernel` is called (queued or not), the device
//! server when a request names a launch, and `Kernel::launch` for a caller of the plugin
//! interface itself; backends then run launches unchecked (`Kernel::run`).

use super::program::{Kernel, KernelArgs, LaunchConfig};
use super::types::{DeviceInfo, InfoValue};
use crate::plugin::foundation::error::{Error, Result};

/// What a launch may ask of a device (or a kernel): `None` where it does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchLimits {
    /// Work-items in one work-group.
    pub max_group_items: Option<u64>,
    /// Bytes of dynamic shared memory one work-group may have.
    pub local_memory: Option<u64>,
}

impl LaunchLimits {
    /// The stricter of two sets of limits (a device's and a kernel's own).
    pub fn tighter(self, other: LaunchLimits) -> LaunchLimits {
        let least = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        LaunchLimits {
            max_group_items: least(self.max_group_items, other.max_group_items),
            local_memory: least(self.local_memory, other.local_memory),
        }
    }

    /// The limits a device states in its answers to `MaxWorkGroupSize` and
    /// `WorkGroupLocalMemSize` (`info` asks them).
    pub fn from_info(info: impl Fn(DeviceInfo) -> Result<InfoValue>) -> LaunchLimits {
        LaunchLimits {
            max_group_items: match info(DeviceInfo::MaxWorkGroupSize) {
                Ok(InfoValue::U32(n)) => Some(u64::from(n)),
                _ => None,
            },
            local_memory: match info(DeviceInfo::WorkGroupLocalMemSize) {
                Ok(InfoValue::U64(n)) => Some(n),
                _ => None,
            },
        }
    }
}

/// Checks the grid of `config` against API.md's rules and `limits`; `whose` names what
/// the limits are of ("the host device", "kernel 'saxpy'") in a refusal.
pub fn check_grid(
    limits: LaunchLimits,
    config: &LaunchConfig,
    whose: &dyn Fn() -> String,
) -> Result<()> {
    if !(1..=3).contains(&config.dimensions) {
        return Err(Error::invalid_argument(format!(
            "LaunchSizeArgs->Dimensions is {}; expected 1, 2 or 3",
            config.dimensions
        )));
    }
    let used = config.dimensions as usize;
    for (what, dims) in [
        ("NumGroups", config.num_groups),
        ("GroupSize", config.group_size),
    ] {
        if let Some(axis) = dims[..used].iter().position(|&n| n == 0) {
            return Err(Error::invalid_argument(format!(
                "LaunchSizeArgs->{what}.{} is 0; every used dimension needs at least 1",
                ["x", "y", "z"][axis]
            )));
        }
    }
    let items: u64 = config.group_size[..used]
        .iter()
        .map(|&n| u64::from(n))
        .product();
    if let Some(max) = limits.max_group_items.filter(|&max| items > max) {
        return Err(Error::invalid_argument(format!(
            "a work-group of {items} work-items ({:?}) is more than {} allows: at most {max}",
            &config.group_size[..used],
            whose()
        )));
    }
    if let Some(max) = limits
        .local_memory
        .filter(|&max| config.dyn_shared_memory as u64 > max)
    {
        return Err(Error::out_of_resources(format!(
            "DynSharedMemory is {} bytes but {} offers {max} bytes per work-group",
            config.dyn_shared_memory,
            whose()
        )));
    }
    Ok(())
}

/// Checks a whole launch of `kernel`: its argument buffer, its grid (`check_grid`), and
/// for a cooperative launch whether that many groups can be resident at once.
pub fn check_launch<K: Kernel + ?Sized>(
    kernel: &K,
    limits: LaunchLimits,
    config: &LaunchConfig,
    args: &KernelArgs,
    whose: &dyn Fn() -> String,
) -> Result<()> {
    kernel.check_args(args)?;
    check_grid(limits, config, whose)?;
    if config.cooperative {
        let used = config.dimensions as usize;
        let groups: u64 = config.num_groups[..used]
            .iter()
            .map(|&n| u64::from(n))
            .product();
        let most = kernel.max_cooperative_groups(config)?;
        if groups > u64::from(most) {
            return Err(Error::invalid_argument(format!(
                "a cooperative launch of {groups} work-groups of kernel '{}' cannot run: at most {most} can be resident at once on {}",
                kernel.name(),
                whose()
            )));
        }
    }
    Ok(())
}
