//! What clang's device images say about each region's kernel, in the global
//! `<kernel>_kernel_environment` (LLVM's `KernelEnvironmentTy`, the same layout in LLVM 19
//! and 22): its execution mode and the launch bounds the compiler chose. Read once, when
//! the image is loaded on a GPU.

/// How the kernel's threads run the region (`OMPTgtExecModeFlags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecMode {
    /// One main thread runs the region; the others wait in a state machine for parallel
    /// regions (a warp more than the team's threads is launched for the main thread).
    Generic,
    /// Every thread runs the region.
    Spmd,
    /// Generic code the compiler proved may run as SPMD.
    GenericSpmd,
    /// SPMD where each thread runs one loop iteration (LLVM 22): as many teams as that
    /// takes.
    SpmdNoLoop,
    /// No kernel environment (a kernel not made by OpenMP codegen, or LLVM 22's bare
    /// mode): the clauses give the grid as they are.
    Bare,
}

impl ExecMode {
    /// LLVM's name of the mode in `LIBOMPTARGET_INFO`'s launch line.
    pub fn name(self) -> &'static str {
        match self {
            ExecMode::Generic => "Generic",
            ExecMode::Spmd => "SPMD",
            ExecMode::GenericSpmd => "Generic-SPMD",
            ExecMode::SpmdNoLoop => "SPMD-No-Loop",
            // LLVM 19 has no bare mode and prints its default, SPMD.
            ExecMode::Bare if crate::report::policy::llvm_release() < 22 => "SPMD",
            ExecMode::Bare => "BARE",
        }
    }
}

/// The part of `KernelEnvironmentTy` a launch needs (its `ConfigurationEnvironmentTy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelEnv {
    pub mode: ExecMode,
    /// Bounds the compiler set (`ompx_attribute`, `thread_limit`/`num_teams` constants,
    /// `-fopenmp-cuda-...`); -1 or 0: none.
    pub min_threads: i32,
    pub max_threads: i32,
    pub min_teams: i32,
    pub max_teams: i32,
    /// Bytes of one team's reduction data and how many teams' worth the buffer holds; a
    /// kernel with both non-zero needs a launch environment with a reduction buffer.
    pub reduction_data_size: i32,
    pub reduction_buffer_length: i32,
}

impl KernelEnv {
    /// A kernel of `mode` with no bounds of its own and no cross-team reductions (also
    /// what LLVM assumes of a kernel without an environment, in bare mode).
    pub fn unbounded(mode: ExecMode) -> KernelEnv {
        KernelEnv {
            mode,
            min_threads: -1,
            max_threads: -1,
            min_teams: -1,
            max_teams: -1,
            reduction_data_size: 0,
            reduction_buffer_length: 0,
        }
    }
}

/// The size of `KernelEnvironmentTy`: three one-byte fields, six `int32_t`, then the
/// `IdentTy *` and `DynamicEnvironmentTy *` pointers.
pub const KERNEL_ENV_SIZE: usize = 48;

const BARE: u8 = 0;
const GENERIC: u8 = 1;
const SPMD: u8 = 2;
const NO_LOOP: u8 = 4;

/// Reads a kernel environment. The bytes are the device global's, `KERNEL_ENV_SIZE` of
/// them; anything else (or an unknown mode) is refused with what was found.
pub fn parse(bytes: &[u8]) -> Result<KernelEnv, String> {
    if bytes.len() < KERNEL_ENV_SIZE {
        return Err(format!(
            "kernel environment of {} bytes, expected {KERNEL_ENV_SIZE}",
            bytes.len()
        ));
    }
    let word = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mode = match bytes[2] {
        BARE => ExecMode::Bare,
        GENERIC => ExecMode::Generic,
        SPMD => ExecMode::Spmd,
        m if m == GENERIC | SPMD => ExecMode::GenericSpmd,
        m if m == SPMD | NO_LOOP => ExecMode::SpmdNoLoop,
        other => return Err(format!("kernel environment with execution mode {other}")),
    };
    Ok(KernelEnv {
        mode,
        min_threads: word(4),
        max_threads: word(8),
        min_teams: word(12),
        max_teams: word(16),
        reduction_data_size: word(20),
        reduction_buffer_length: word(24),
    })
}

/// The size of LLVM's `KernelLaunchEnvironmentTy`: two `uint32_t` counters and the
/// reduction buffer's address.
pub const LAUNCH_ENV_SIZE: usize = 16;

/// A launch environment with its counters at 0 and its reduction buffer at `buffer`.
pub fn launch_environment(buffer: u64) -> [u8; LAUNCH_ENV_SIZE] {
    let mut bytes = [0u8; LAUNCH_ENV_SIZE];
    bytes[8..16].copy_from_slice(&buffer.to_le_bytes());
    bytes
}

/// The name of the global holding `kernel`'s environment.
pub fn global_name(kernel: &str) -> String {
    format!("{kernel}_kernel_environment")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_bytes(mode: u8, words: [i32; 6]) -> Vec<u8> {
        let mut b = vec![0u8; KERNEL_ENV_SIZE];
        b[0] = 1; // UseGenericStateMachine
        b[1] = 0; // MayUseNestedParallelism
        b[2] = mode;
        for (i, w) in words.iter().enumerate() {
            b[4 + 4 * i..8 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    #[test]
    fn reads_each_mode_and_the_bounds() {
        let env = parse(&env_bytes(2, [1, 256, -1, 64, 8, 1024])).unwrap();
        assert_eq!(env.mode, ExecMode::Spmd);
        assert_eq!((env.min_threads, env.max_threads), (1, 256));
        assert_eq!((env.min_teams, env.max_teams), (-1, 64));
        assert_eq!(
            (env.reduction_data_size, env.reduction_buffer_length),
            (8, 1024)
        );
        assert_eq!(
            parse(&env_bytes(1, [0; 6])).unwrap().mode,
            ExecMode::Generic
        );
        assert_eq!(
            parse(&env_bytes(3, [0; 6])).unwrap().mode,
            ExecMode::GenericSpmd
        );
        assert_eq!(
            parse(&env_bytes(6, [0; 6])).unwrap().mode,
            ExecMode::SpmdNoLoop
        );
        assert_eq!(parse(&env_bytes(0, [0; 6])).unwrap().mode, ExecMode::Bare);
    }

    #[test]
    fn a_launch_environment_has_zeroed_counters_then_the_buffer() {
        let bytes = launch_environment(0x1234_5678_9abc);
        assert_eq!(&bytes[..8], &[0u8; 8]);
        assert_eq!(
            u64::from_le_bytes(bytes[8..].try_into().unwrap()),
            0x1234_5678_9abc
        );
    }

    #[test]
    fn refuses_short_or_unknown() {
        assert!(parse(&[0u8; 20]).unwrap_err().contains("20 bytes"));
        assert!(parse(&env_bytes(9, [0; 6])).unwrap_err().contains("mode 9"));
    }
}
