//! How many teams (blocks) and threads a region's kernel is launched with on a GPU, by
//! the rules of LLVM's plugins (19 and 22 alike): the kernel environment's mode and
//! bounds, the `num_teams`/`thread_limit` clauses, the distribute loop's trip count, the
//! device's limits and `OMP_NUM_TEAMS`, `OMP_TEAMS_THREAD_LIMIT`,
//! `LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT`,
//! `LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT`.

use crate::plugin::gpu_limits::GpuLimits;
use crate::plugin::kernel_env::{ExecMode, KernelEnv};

/// What the region asks for: the clauses' values (0: not given) and the trip count of
/// its distribute loop (0: none known).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub num_teams: u32,
    pub thread_limit: u32,
    pub trip_count: u64,
}

/// The grid of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub blocks: u32,
    pub threads: u32,
}

/// The grid LLVM's plugin launches `env`'s kernel with.
pub fn plan(env: &KernelEnv, limits: &GpuLimits, request: Request) -> Grid {
    if env.mode == ExecMode::Bare {
        // Taken as given (a grid of 1 where the clause is absent).
        return Grid {
            blocks: request.num_teams.max(1),
            threads: request.thread_limit.max(1),
        };
    }
    // The kernel's own bounds narrow the device's.
    let max_threads = if env.max_threads > 0 {
        limits.thread_limit.min(env.max_threads as u32)
    } else {
        limits.thread_limit
    };
    let preferred = if env.min_threads > 0 {
        (env.min_threads as u32).max(limits.default_threads)
    } else {
        limits.default_threads
    };
    // Threads: the clause (plus a warp for the main thread in generic mode), else the
    // preferred number; never past the maximum.
    let mut thread_limit = request.thread_limit;
    if thread_limit > 0 && env.mode == ExecMode::Generic {
        thread_limit = thread_limit.saturating_add(limits.warp_size);
    }
    let mut threads = max_threads.min(if thread_limit > 0 {
        thread_limit
    } else {
        preferred
    });
    let blocks = blocks(env.mode, limits, request, &mut threads);
    Grid {
        blocks,
        threads: threads.max(1),
    }
}

/// LLVM's `getNumBlocks`: may lower `threads` for a small SPMD loop.
fn blocks(mode: ExecMode, limits: &GpuLimits, request: Request, threads: &mut u32) -> u32 {
    if request.num_teams > 0 {
        return request.num_teams.min(limits.block_limit);
    }
    let trip = request.trip_count;
    let nt = u64::from((*threads).max(1));
    if mode == ExecMode::SpmdNoLoop {
        return if trip > 0 {
            trip.div_ceil(nt).min(u64::from(u32::MAX)) as u32
        } else {
            1
        };
    }
    let default = u64::from(limits.default_blocks);
    let mut trip_blocks = u64::MAX;
    if trip > 0 {
        if mode == ExecMode::Spmd {
            let min_threads = u64::from(limits.min_threads_low_trip_count).min(nt);
            let from_user = request.thread_limit > 0;
            if trip >= default * nt || from_user {
                trip_blocks = trip.div_ceil(nt);
            } else if trip >= default * min_threads {
                let wanted = trip.div_ceil(default).next_power_of_two();
                *threads = (*threads).min(wanted.min(u64::from(u32::MAX)) as u32);
                trip_blocks = trip.div_ceil(u64::from(*threads));
            } else {
                *threads = (*threads).min(min_threads as u32);
                trip_blocks = trip.div_ceil(u64::from(*threads));
            }
        } else {
            // Generic and generic-SPMD: one distribute iteration per team.
            trip_blocks = trip;
        }
    }
    // LLVM keeps the count in 32 bits here (a trip count past 2^32 wraps there too).
    let preferred = if limits.reuse_blocks {
        trip_blocks.min(default)
    } else {
        trip_blocks & u64::from(u32::MAX)
    };
    preferred.min(u64::from(limits.block_limit)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(mode: ExecMode) -> KernelEnv {
        KernelEnv::unbounded(mode)
    }

    fn h100() -> GpuLimits {
        GpuLimits::new(32, 1024, i32::MAX as u32, |_| None)
    }

    fn grid(blocks: u32, threads: u32) -> Grid {
        Grid { blocks, threads }
    }

    fn req(num_teams: u32, thread_limit: u32, trip_count: u64) -> Request {
        Request {
            num_teams,
            thread_limit,
            trip_count,
        }
    }

    /// LLVM's rules on a table of cases (worked through its getNumThreads/getNumBlocks).
    #[test]
    fn spmd_loops_by_trip_count() {
        let l = h100();
        let spmd = env(ExecMode::Spmd);
        assert_eq!(plan(&spmd, &l, req(0, 0, 1_000_000)), grid(3200, 128));
        assert_eq!(plan(&spmd, &l, req(0, 0, 200_000)), grid(3125, 64));
        assert_eq!(plan(&spmd, &l, req(0, 0, 100_000)), grid(3125, 32));
        assert_eq!(plan(&spmd, &l, req(0, 0, 1 << 24)), grid(3200, 128));
        assert_eq!(plan(&spmd, &l, req(0, 0, 0)), grid(3200, 128));
        assert_eq!(plan(&spmd, &l, req(0, 0, 10)), grid(1, 32));
        // A thread_limit from the user keeps its threads: ceil(trip / threads) teams,
        // then the default cap.
        assert_eq!(plan(&spmd, &l, req(0, 256, 100_000)), grid(391, 256));
        assert_eq!(plan(&spmd, &l, req(0, 4096, 0)), grid(3200, 1024));
        // num_teams is taken (under the device's limit).
        assert_eq!(plan(&spmd, &l, req(7, 0, 1_000_000)), grid(7, 128));
    }

    #[test]
    fn generic_adds_a_warp_and_runs_one_iteration_per_team() {
        let l = h100();
        let generic = env(ExecMode::Generic);
        assert_eq!(plan(&generic, &l, req(0, 64, 0)), grid(3200, 96));
        assert_eq!(plan(&generic, &l, req(1, 0, 0)), grid(1, 128));
        assert_eq!(plan(&generic, &l, req(0, 0, 50)), grid(50, 128));
        assert_eq!(plan(&generic, &l, req(0, 0, 10_000)), grid(3200, 128));
        let gs = env(ExecMode::GenericSpmd);
        assert_eq!(plan(&gs, &l, req(0, 64, 0)), grid(3200, 64));
        assert_eq!(plan(&gs, &l, req(0, 0, 40)), grid(40, 128));
    }

    #[test]
    fn kernel_bounds_env_caps_and_bare_kernels() {
        let l = h100();
        let mut bounded = env(ExecMode::Spmd);
        bounded.max_threads = 64;
        assert_eq!(plan(&bounded, &l, req(0, 0, 0)), grid(3200, 64));
        bounded.max_threads = -1;
        bounded.min_threads = 256;
        assert_eq!(plan(&bounded, &l, req(0, 0, 0)), grid(3200, 256));
        let capped = GpuLimits::new(32, 1024, i32::MAX as u32, |name| match name {
            "OMP_NUM_TEAMS" => Some("16".into()),
            "OMP_TEAMS_THREAD_LIMIT" => Some("64".into()),
            _ => None,
        });
        assert_eq!(
            plan(&env(ExecMode::Spmd), &capped, req(0, 0, 0)),
            grid(16, 64)
        );
        assert_eq!(
            plan(&env(ExecMode::Spmd), &capped, req(100, 512, 0)),
            grid(16, 64)
        );
        let no_reuse = GpuLimits::new(32, 1024, i32::MAX as u32, |name| {
            (name == "LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT").then(|| "false".into())
        });
        assert_eq!(
            plan(&env(ExecMode::Spmd), &no_reuse, req(0, 0, 1_000_000)),
            grid(7813, 128)
        );
        assert_eq!(plan(&env(ExecMode::Bare), &l, req(4, 0, 999)), grid(4, 1));
        assert_eq!(
            plan(&env(ExecMode::SpmdNoLoop), &l, req(0, 0, 1000)),
            grid(8, 128)
        );
    }
}
