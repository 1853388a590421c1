//! Programs (device images loaded on a device) and their kernels, as backends provide them.

use crate::runtime::error::Result;
use std::sync::Arc;

/// `ol_symbol_kind_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SymbolKind {
    Kernel = 0,
    GlobalVariable = 1,
}

impl TryFrom<u32> for SymbolKind {
    type Error = u32;
    fn try_from(v: u32) -> std::result::Result<Self, u32> {
        match v {
            0 => Ok(SymbolKind::Kernel),
            1 => Ok(SymbolKind::GlobalVariable),
            _ => Err(v),
        }
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
    pub fn total_groups(&self) -> u64 {
        self.num_groups.iter().map(|&n| n as u64).product()
    }
    pub fn items_per_group(&self) -> u64 {
        self.group_size.iter().map(|&n| n as u64).product()
    }
}

/// A launch's arguments, copied from the caller at enqueue time: argument `i` is
/// `bytes[offsets[i]..offsets[i] + sizes[i]]`, each aligned to 16 bytes in `bytes`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelArgs {
    pub bytes: Vec<u8>,
    pub offsets: Vec<usize>,
    pub sizes: Vec<usize>,
}

impl KernelArgs {
    /// Copies each argument's value.
    pub fn from_values<'a>(values: impl IntoIterator<Item = &'a [u8]> + Clone) -> Self {
        // One allocation per vector: launches are a hot path.
        let (count, bytes) = values
            .clone()
            .into_iter()
            .fold((0usize, 0usize), |(n, b), v: &[u8]| {
                (n + 1, b.next_multiple_of(16) + v.len())
            });
        let mut args = KernelArgs {
            bytes: Vec::with_capacity(bytes),
            offsets: Vec::with_capacity(count),
            sizes: Vec::with_capacity(count),
        };
        for v in values {
            let at = args.bytes.len().next_multiple_of(16);
            args.bytes.resize(at, 0);
            args.bytes.extend_from_slice(v);
            args.offsets.push(at);
            args.sizes.push(v.len());
        }
        args
    }

    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i]..self.offsets[i] + self.sizes[i]]
    }
}

/// A kernel of a loaded program.
pub trait Kernel: Send + Sync {
    fn name(&self) -> &str;

    /// The number of arguments, where the kernel's ABI says it.
    fn arg_count(&self) -> Option<usize> {
        None
    }

    /// Runs the whole grid and returns when every group is done. Called from the calling
    /// thread (synchronous launches) or a pool worker (queued launches). The runtime has
    /// already checked the grid against the device's limits and the argument count.
    fn launch(&self, config: &LaunchConfig, args: &KernelArgs) -> Result<()>;

    /// The work-group size that fills the device for this kernel, given dynamic shared
    /// memory per work-item.
    fn optimal_group_size(&self, shared_memory_per_item: usize) -> Result<usize>;

    /// The most groups of `config`'s shape that can be resident at once (cooperative launch).
    fn max_cooperative_groups(&self, config: &LaunchConfig) -> Result<u32>;
}
