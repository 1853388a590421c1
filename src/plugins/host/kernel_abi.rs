//! The host kernel ABI of `include/offload/host_kernel.h`, version 2, as Rust sees it.
//! The layouts here must match the header's; a test compiles the header and compares.

use std::os::raw::c_void;

pub const ABI_VERSION: u32 = 2;
/// `args_size` of a marker whose kernel takes any argument buffer (`OL_HOST_KERNEL_RAW`).
pub const ANY_ARGS_SIZE: u32 = u32::MAX;
/// "OLHK" as a little-endian integer.
pub const MAGIC: u32 = 0x4B48_4C4F;
/// The marker of kernel `k` of ABI version N is named `__ol_host_kernel_vN_k`.
pub const MARKER_PREFIX: &str = "__ol_host_kernel_v";

/// `ol_host_kernel_context_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HostKernelContext {
    pub dimensions: u32,
    pub group_id: [u32; 3],
    pub num_groups: [u32; 3],
    pub group_size: [u32; 3],
    pub dyn_shared: *mut c_void,
    pub dyn_shared_size: usize,
}

/// `ol_host_kernel_marker_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostKernelMarker {
    pub magic: u32,
    pub abi_version: u32,
    pub args_size: u32,
    pub reserved: u32,
}

/// `ol_host_kernel_fn_t`: the group's context, the argument buffer and its size.
pub type HostKernelFn = unsafe extern "C" fn(*const HostKernelContext, *const c_void, usize);

/// If `symbol` is a marker, the kernel it marks and the ABI version in its name.
pub fn parse_marker_name(symbol: &str) -> Option<(&str, u32)> {
    let rest = symbol.strip_prefix(MARKER_PREFIX)?;
    let (version, kernel) = rest.split_once('_')?;
    let version: u32 = version.parse().ok()?;
    (!kernel.is_empty()).then_some((kernel, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_names_parse() {
        assert_eq!(
            parse_marker_name("__ol_host_kernel_v1_saxpy"),
            Some(("saxpy", 1))
        );
        assert_eq!(
            parse_marker_name("__ol_host_kernel_v12_a_b"),
            Some(("a_b", 12))
        );
        assert_eq!(parse_marker_name("__ol_host_kernel_v1_"), None);
        assert_eq!(parse_marker_name("__ol_host_kernel_vx_k"), None);
        assert_eq!(parse_marker_name("saxpy"), None);
    }

    #[test]
    fn layouts_are_fixed() {
        assert_eq!(std::mem::size_of::<HostKernelMarker>(), 16);
        assert_eq!(std::mem::offset_of!(HostKernelContext, dyn_shared), 40);
        assert_eq!(
            std::mem::size_of::<HostKernelContext>(),
            40 + 2 * std::mem::size_of::<usize>()
        );
    }
}
