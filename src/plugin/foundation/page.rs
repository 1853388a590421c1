//! The system's page size, which mappings and reservations are rounded to.

use std::sync::OnceLock;

/// The page size (read once; 4 KiB where the system does not say or says less).
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(size).unwrap_or(4096).max(4096)
    })
}
