//! How a stream copies: what HSA's copy engines can reach directly, and what must be
//! staged. `hsa_amd_memory_async_copy` needs memory the runtime knows on both sides;
//! host memory from `malloc` is pageable, so it is either locked for the copy (large
//! copies: no extra pass over the data) or staged through a fine-grained buffer (small
//! copies: locking costs a kernel-driver call and page pinning).

use crate::plugin::CopyDirection;

/// Pageable copies of at least this many bytes lock the memory instead of staging
/// (upstream: 1 MiB); `OFFLOAD_AMDGPU_LOCK_THRESHOLD` changes it.
pub const DEFAULT_LOCK_THRESHOLD: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyPlan {
    /// One async copy between the two addresses.
    Direct,
    /// Lock the host side for the copy, unlock when it completes.
    Lock,
    /// Host to device: copy the source into staging (a host step, in stream order),
    /// then staging to the device.
    StageIn,
    /// Device to host: device to staging, then staging to the destination (a host step).
    StageOut,
    /// Both sides are host memory: a host step copies.
    HostMemcpy,
}

/// The plan for `size` bytes in `direction`; `host_known`: the host side is memory the
/// runtime knows (pinned, locked, or allocated by it).
pub fn plan_copy(
    direction: CopyDirection,
    host_known: bool,
    size: usize,
    lock_threshold: usize,
) -> CopyPlan {
    match direction {
        CopyDirection::DeviceToDevice => CopyPlan::Direct,
        CopyDirection::HostToHost => CopyPlan::HostMemcpy,
        _ if host_known => CopyPlan::Direct,
        _ if size >= lock_threshold => CopyPlan::Lock,
        CopyDirection::HostToDevice => CopyPlan::StageIn,
        CopyDirection::DeviceToHost => CopyPlan::StageOut,
    }
}

/// The threshold from `OFFLOAD_AMDGPU_LOCK_THRESHOLD` (bytes), or the default.
pub fn lock_threshold_from(value: Option<&str>) -> usize {
    value
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_LOCK_THRESHOLD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CopyDirection::*;

    #[test]
    fn plans() {
        let t = DEFAULT_LOCK_THRESHOLD;
        assert_eq!(plan_copy(DeviceToDevice, false, 1, t), CopyPlan::Direct);
        assert_eq!(plan_copy(HostToHost, true, 1, t), CopyPlan::HostMemcpy);
        assert_eq!(plan_copy(HostToDevice, true, 1 << 30, t), CopyPlan::Direct);
        assert_eq!(plan_copy(HostToDevice, false, 4096, t), CopyPlan::StageIn);
        assert_eq!(plan_copy(DeviceToHost, false, 4096, t), CopyPlan::StageOut);
        assert_eq!(plan_copy(DeviceToHost, false, t, t), CopyPlan::Lock);
        assert_eq!(plan_copy(HostToDevice, false, t - 1, t), CopyPlan::StageIn);
        assert_eq!(lock_threshold_from(None), t);
        assert_eq!(lock_threshold_from(Some(" 4096 ")), 4096);
        assert_eq!(lock_threshold_from(Some("lots")), t);
    }
}
