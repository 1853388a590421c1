//! Programs (device images loaded on a device) and their kernels, as backends provide them.

use super::arg_bytes::ArgBytes;
use super::launch_check::{check_launch, LaunchLimits};
use crate::plugin::foundation::c_enum::c_enum;
use crate::plugin::foundation::error::Result;
use std::sync::Arc;

c_enum! {
    /// `ol_symbol_kind_t`.
    pub enum SymbolKind {
        Kernel = 0,
        GlobalVariable = 1,
    }
}

/// A global variable of a loaded program: its address in device memory and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalVariable {
    pub address: usize,
    pub size: usize,
}

/// A device image loaded on a device. Dropping the last reference unloads it; kernels
/// hold a reference while they run, so a program is never unloaded under a kernel.
pub trait Program: Send + Sync {
    /// The kind of the named symbol, or `None` if the image has no such symbol.
    fn symbol_kind(&self, name: &str) -> Option<SymbolKind>;
    /// The named kernel; `NotFound` if absent, `SymbolKind` if it is data.
    fn kernel(&self, name: &str) -> Result<Arc<dyn Kernel>>;
    /// The named global variable; `NotFound` if absent, `SymbolKind` if it is a function.
    fn global(&self, name: &str) -> Result<GlobalVariable>;
}

/// How a kernel is launched: the grid, per-group scratch and properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// 1 to 3; unused dimensions have extent 1.
    pub dimensions: u32,
    pub num_groups: [u32; 3],
    pub group_size: [u32; 3],
    /// Bytes of dynamic shared memory per work-group.
    pub dyn_shared_memory: usize,
    /// Every group must be resident at once.
    pub cooperative: bool,
}

impl LaunchConfig {
    /// A launch of `dimensions` dimensions; extents past them are 1 whatever was given
    /// (the one place they are set so: the C API and the device server build launches
    /// here, and a backend reads the extents as the driver takes them).
    pub fn new(
        dimensions: u32,
        num_groups: [u32; 3],
        group_size: [u32; 3],
        dyn_shared_memory: usize,
        cooperative: bool,
    ) -> LaunchConfig {
        let used = |extents: [u32; 3]| {
            std::array::from_fn(|i| {
                if (i as u32) < dimensions {
                    extents[i]
                } else {
                    1
                }
            })
        };
        LaunchConfig {
            dimensions,
            num_groups: used(num_groups),
            group_size: used(group_size),
            dyn_shared_memory,
            cooperative,
        }
    }

    /// The same launch with the extents past `dimensions` set to 1 (for a caller that
    /// built it by hand).
    pub fn normalized(&self) -> LaunchConfig {
        LaunchConfig::new(
            self.dimensions,
            self.num_groups,
            self.group_size,
            self.dyn_shared_memory,
            self.cooperative,
        )
    }

    pub fn total_groups(&self) -> u64 {
        self.num_groups.iter().map(|&n| n as u64).product()
    }
    pub fn items_per_group(&self) -> u64 {
        self.group_size.iter().map(|&n| n as u64).product()
    }
}

/// A launch's argument buffer, copied from the caller at enqueue time: the kernel's
/// parameters laid out as a C struct, exactly as `olLaunchKernel` received them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KernelArgs {
    pub bytes: ArgBytes,
    /// The launch said the bytes are the kernel's parameters as a C struct whatever the
    /// device's own convention (`OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS`): on the host
    /// device, a kernel of LLVM's convention is then called with the platform's C calling
    /// convention, from its parameter types. GPU kernels take their parameters so anyway.
    pub c_parameters: bool,
}

impl KernelArgs {
    /// Copies `bytes` (in place when they are few: launches are a hot path).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        KernelArgs {
            bytes: ArgBytes::copy_of(bytes),
            c_parameters: false,
        }
    }

    /// Lays `values` out one after another, each at its alignment (a power of two), as a C
    /// compiler lays out a struct of them, trailing padding included; for Rust callers
    /// building a buffer.
    pub fn from_values<'a>(values: impl IntoIterator<Item = (&'a [u8], usize)>) -> Self {
        let mut bytes = Vec::new();
        let mut struct_align = 1;
        for (value, align) in values {
            let align = align.max(1);
            struct_align = struct_align.max(align);
            bytes.resize(bytes.len().next_multiple_of(align), 0);
            bytes.extend_from_slice(value);
        }
        bytes.resize(bytes.len().next_multiple_of(struct_align), 0);
        KernelArgs {
            bytes: bytes.into(),
            c_parameters: false,
        }
    }

    /// Size in bytes, as the caller gave it.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl std::fmt::Debug for KernelArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = if self.c_parameters {
            ", C parameters"
        } else {
            ""
        };
        write!(f, "KernelArgs({} bytes{c})", self.bytes.len())
    }
}

/// `kernel` as backend type `K`, for a stream launching it; refused, naming the kernel,
/// when it belongs to another backend (`whose`: "a CUDA device" and so on).
pub fn own_kernel<'a, K: 'static>(kernel: &'a dyn Kernel, whose: &str) -> Result<&'a K> {
    kernel.as_any().downcast_ref::<K>().ok_or_else(|| {
        crate::plugin::foundation::error::Error::invalid_argument(format!(
            "kernel '{}' is not a kernel of {whose}",
            kernel.name()
        ))
    })
}

/// A kernel of a loaded program.
pub trait Kernel: Send + Sync {
    fn name(&self) -> &str;

    /// For a backend's stream to recognise its own kernels.
    fn as_any(&self) -> &dyn std::any::Any;

    /// Whether the kernel can take this argument buffer (its size, where the kernel's
    /// ABI says what it must be). Called when a launch is enqueued, so a wrong buffer is
    /// refused by `olLaunchKernel` itself, not reported at the next sync.
    fn check_args(&self, args: &KernelArgs) -> Result<()> {
        let _ = args;
        Ok(())
    }

    /// What this kernel itself allows a launch, where less than its device does (its
    /// registers, its compiled group size, its local memory): `check_launch` holds a
    /// launch to these too.
    fn limits(&self) -> LaunchLimits {
        LaunchLimits::default()
    }

    /// The backend's synchronous launch where it has one faster than a stream (the host:
    /// the calling thread; CUDA: the NULL stream; a remote device: its server's stream
    /// 0): runs the whole grid, already checked, and returns when every group is done.
    /// `None` where it has none: `launch_now` then enqueues the launch on a new stream of
    /// the device and synchronizes that.
    fn run_direct(&self, config: &LaunchConfig, args: &KernelArgs) -> Option<Result<()>> {
        let _ = (config, args);
        None
    }

    /// Checks the launch against this kernel's limits and runs it directly: for a caller
    /// of the plugin interface itself (`launch_now` also runs a kernel without a direct
    /// path). The runtime checks against its device's limits too, then calls `launch_now`.
    fn launch(&self, config: &LaunchConfig, args: &KernelArgs) -> Result<()> {
        let config = config.normalized();
        check_launch(self, self.limits(), &config, args, &|| {
            format!("kernel '{}'", self.name())
        })?;
        self.run_direct(&config, args).unwrap_or_else(|| {
            Err(crate::plugin::foundation::error::Error::new(
                crate::plugin::foundation::error::ErrorCode::Unsupported,
                format!(
                    "kernel '{}' runs only on a stream of its device (plugin::launch_now)",
                    self.name()
                ),
            ))
        })
    }

    /// The work-group size that fills the device for this kernel, given dynamic shared
    /// memory per work-item.
    fn optimal_group_size(&self, shared_memory_per_item: usize) -> Result<usize>;

    /// The most groups of `config`'s shape that can be resident at once (cooperative launch).
    fn max_cooperative_groups(&self, config: &LaunchConfig) -> Result<u32>;
}

#[cfg(test)]
mod tests {
    use super::LaunchConfig;

    #[test]
    fn extents_past_the_dimensions_are_one() {
        let c = LaunchConfig::new(1, [100, 0, 0], [256, 0, 0], 0, false);
        assert_eq!((c.num_groups, c.group_size), ([100, 1, 1], [256, 1, 1]));
        let c = LaunchConfig::new(2, [4, 5, 9], [8, 8, 9], 0, false);
        assert_eq!((c.num_groups, c.group_size), ([4, 5, 1], [8, 8, 1]));
        let c = LaunchConfig::new(3, [2, 3, 4], [5, 6, 7], 0, false);
        assert_eq!((c.num_groups, c.group_size), ([2, 3, 4], [5, 6, 7]));
        assert_eq!(
            LaunchConfig::new(0, [9; 3], [9; 3], 0, false).num_groups,
            [1; 3]
        );
        let by_hand = LaunchConfig {
            dimensions: 2,
            num_groups: [4, 5, 9],
            group_size: [8, 8, 9],
            dyn_shared_memory: 0,
            cooperative: false,
        };
        assert_eq!(by_hand.normalized().group_size, [8, 8, 1]);
    }
}
