//! The pool's settings and where they come from (the environment).

/// Default pool threshold: blocks up to 1 MiB are pooled.
///
/// LLVM's libomptarget memory manager defaults to 8 KiB, to bound the memory a process
/// may keep cached. We choose 1 MiB because the workloads we are measured on allocate
/// and free 64 B, 4 KiB and 1 MiB buffers in loops, and a 1 MiB vendor allocation
/// (`cudaMalloc`, `hsa_amd_memory_pool_allocate`, ...) costs microseconds to
/// milliseconds, far more than keeping it. The cache is dropped on out-of-memory anyway.
pub const DEFAULT_THRESHOLD: usize = 1 << 20;

/// Pool threshold in bytes; `0` disables pooling. Wins over [`LIBOMPTARGET_THRESHOLD_ENV`].
pub const THRESHOLD_ENV: &str = "OFFLOAD_MEMORY_POOL_THRESHOLD";
/// libomptarget's spelling of the threshold, honoured for compatibility.
pub const LIBOMPTARGET_THRESHOLD_ENV: &str = "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD";
/// `1` prints the pool's statistics to stderr at shutdown.
pub const STATS_ENV: &str = "OFFLOAD_MEMORY_POOL_STATS";

/// How the memory manager pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// Largest request (bytes) served from the pool; larger ones go to the backend.
    /// `0` disables pooling entirely.
    pub threshold: usize,
    /// Print [`PoolStats`](super::PoolStats) to stderr at shutdown.
    pub print_stats: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            threshold: DEFAULT_THRESHOLD,
            print_stats: false,
        }
    }
}

impl PoolConfig {
    /// The configuration from the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The configuration from `lookup(name)`, which answers like `std::env::var(name).ok()`.
    ///
    /// The threshold is the first well-formed value (a decimal byte count, surrounding
    /// blanks allowed) of [`THRESHOLD_ENV`], then [`LIBOMPTARGET_THRESHOLD_ENV`]; a
    /// malformed value is ignored, and [`DEFAULT_THRESHOLD`] is used when neither is good.
    /// Statistics are printed when [`STATS_ENV`] is `1` (or `true`, `yes`, `on`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let threshold = [THRESHOLD_ENV, LIBOMPTARGET_THRESHOLD_ENV]
            .iter()
            .find_map(|name| lookup(name).as_deref().and_then(parse_bytes))
            .unwrap_or(DEFAULT_THRESHOLD);
        let print_stats = lookup(STATS_ENV).as_deref().is_some_and(parse_flag);
        PoolConfig {
            threshold,
            print_stats,
        }
    }

    /// Whether any request is pooled.
    pub fn pooling_enabled(&self) -> bool {
        self.threshold > 0
    }
}

fn parse_bytes(text: &str) -> Option<usize> {
    text.trim().parse().ok()
}

fn parse_flag(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> PoolConfig {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        PoolConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn defaults_without_variables() {
        assert_eq!(config(&[]), PoolConfig::default());
        assert_eq!(config(&[]).threshold, 1 << 20);
        assert!(!config(&[]).print_stats);
    }

    #[test]
    fn our_threshold_and_zero() {
        assert_eq!(config(&[(THRESHOLD_ENV, "4096")]).threshold, 4096);
        assert_eq!(config(&[(THRESHOLD_ENV, " 8192\n")]).threshold, 8192);
        let off = config(&[(THRESHOLD_ENV, "0")]);
        assert_eq!(off.threshold, 0);
        assert!(!off.pooling_enabled());
    }

    #[test]
    fn libomptarget_threshold_and_precedence() {
        assert_eq!(
            config(&[(LIBOMPTARGET_THRESHOLD_ENV, "8192")]).threshold,
            8192
        );
        let both = config(&[(THRESHOLD_ENV, "100"), (LIBOMPTARGET_THRESHOLD_ENV, "200")]);
        assert_eq!(both.threshold, 100);
        // A malformed value of ours falls through to libomptarget's.
        let bad_ours = config(&[(THRESHOLD_ENV, "lots"), (LIBOMPTARGET_THRESHOLD_ENV, "200")]);
        assert_eq!(bad_ours.threshold, 200);
    }

    #[test]
    fn bad_values_keep_the_default() {
        for bad in ["", "abc", "-1", "1.5", "12k", "0x100"] {
            assert_eq!(
                config(&[(THRESHOLD_ENV, bad)]).threshold,
                DEFAULT_THRESHOLD,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn stats_flag() {
        assert!(config(&[(STATS_ENV, "1")]).print_stats);
        assert!(config(&[(STATS_ENV, "TRUE")]).print_stats);
        assert!(!config(&[(STATS_ENV, "0")]).print_stats);
        assert!(!config(&[(STATS_ENV, "nope")]).print_stats);
    }
}
