//! A GPU's launch limits and LLVM's defaults, as LLVM's GPU plugins read them when a
//! device is initialised: the device's maxima capped by `OMP_TEAMS_THREAD_LIMIT` and
//! `OMP_NUM_TEAMS`, and the plugins' tuning variables.

/// A GPU's launch limits and defaults, env caps applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuLimits {
    pub warp_size: u32,
    /// Threads per team at most (the device's, capped by `OMP_TEAMS_THREAD_LIMIT`).
    pub thread_limit: u32,
    /// Teams at most (the device's, capped by `OMP_NUM_TEAMS`).
    pub block_limit: u32,
    /// Threads per team when nothing says otherwise (LLVM: 128).
    pub default_threads: u32,
    /// Teams when nothing says otherwise (LLVM: 3200).
    pub default_blocks: u32,
    /// The fewest threads per team a small SPMD loop is spread over (LLVM: 32).
    pub min_threads_low_trip_count: u32,
    /// Whether a loop of more iterations than the default grid holds reuses the default
    /// number of teams (each team runs several chunks) rather than one team per chunk.
    pub reuse_blocks: bool,
}

/// LLVM's defaults for NVIDIA GPUs.
pub const DEFAULT_THREADS: u32 = 128;
pub const DEFAULT_BLOCKS: u32 = 3200;

impl GpuLimits {
    /// The limits of a device whose own maxima are `max_threads` per team and
    /// `max_blocks` teams, with LLVM's environment variables read from `env`.
    pub fn new(
        warp_size: u32,
        max_threads: u32,
        max_blocks: u32,
        env: impl Fn(&str) -> Option<String>,
    ) -> GpuLimits {
        let number = |name: &str| env(name).and_then(|v| v.trim().parse::<i64>().ok());
        let cap = |value: u32, name: &str| match number(name) {
            Some(n) if n > 0 => value.min(n.min(u32::MAX as i64) as u32),
            _ => value,
        };
        let reuse = env("LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT")
            .map(|v| {
                !matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "0" | "false" | "off" | "no"
                )
            })
            .unwrap_or(true);
        GpuLimits {
            warp_size: warp_size.max(1),
            thread_limit: cap(max_threads, "OMP_TEAMS_THREAD_LIMIT"),
            block_limit: cap(max_blocks, "OMP_NUM_TEAMS"),
            default_threads: DEFAULT_THREADS,
            default_blocks: DEFAULT_BLOCKS,
            min_threads_low_trip_count: number("LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT")
                .filter(|&n| n > 0)
                .map_or(32, |n| n.min(u32::MAX as i64) as u32),
            reuse_blocks: reuse,
        }
    }
}
