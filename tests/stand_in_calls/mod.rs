//! The calls a stand-in vendor library counted at its entry points (its
//! `mock_calls_reset` and `mock_calls_list`: tests/cuda_support, tests/amdgpu_support),
//! and the tables the call-count tests hold each hot operation to: a change that makes
//! an operation call the vendor library more than its row allows fails.
#![allow(dead_code)]

use libloading::Library;

/// Per operation, the most calls of each entry point it may make; one not listed must
/// not be called.
pub type Table = &'static [(&'static str, &'static [(&'static str, i64)])];

/// Starts the stand-in's counts again.
pub fn reset_calls(stand_in: &Library) {
    // SAFETY: `void mock_calls_reset(void)` in both stand-ins.
    unsafe {
        let f = stand_in
            .get::<unsafe extern "C" fn()>(b"mock_calls_reset")
            .unwrap();
        f()
    }
}

/// Every entry point called since the last `reset_calls`, with its count.
pub fn call_list(stand_in: &Library) -> Vec<(String, i64)> {
    let mut out = vec![0u8; 8192];
    // SAFETY: `size_t mock_calls_list(char *, size_t)` writes at most `cap` bytes.
    let n = unsafe {
        let f = stand_in
            .get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"mock_calls_list")
            .unwrap();
        f(out.as_mut_ptr(), out.len())
    };
    String::from_utf8_lossy(&out[..n])
        .lines()
        .filter_map(|line| {
            let (name, count) = line.split_once(' ')?;
            Some((name.to_string(), count.parse().ok()?))
        })
        .collect()
}

/// The rows of `table` to measure: all, or the one `OFFLOAD_COUNT_ONLY` names
/// (scripts/count-ops.sh profiles one operation at a time).
pub fn rows(table: Table) -> Vec<(&'static str, &'static [(&'static str, i64)])> {
    let only = std::env::var("OFFLOAD_COUNT_ONLY").ok();
    table
        .iter()
        .filter(|(operation, _)| only.as_deref().map_or(true, |o| o == *operation))
        .copied()
        .collect()
}

/// What the rows measured, and where they went over their table.
#[derive(Default)]
pub struct Tally {
    report: String,
    over: Vec<String>,
}

impl Tally {
    /// Takes the calls `rounds` runs of `operation` made, against what its row allows.
    pub fn add(
        &mut self,
        operation: &str,
        allowed: &[(&str, i64)],
        measured: &[(String, i64)],
        rounds: i64,
    ) {
        let per_op: Vec<String> = measured
            .iter()
            .map(|(name, n)| format!("{name} {}", *n as f64 / rounds as f64))
            .collect();
        self.report += &format!("{operation}: {}\n", per_op.join(", "));
        for (name, n) in measured {
            let limit = allowed
                .iter()
                .find(|(allowed_name, _)| allowed_name == name)
                .map_or(0, |&(_, per_op)| per_op * rounds);
            if *n > limit {
                self.over.push(format!(
                    "{operation}: {name} {} per operation, the table allows {}",
                    *n as f64 / rounds as f64,
                    limit / rounds
                ));
            }
        }
    }

    /// Prints what was measured; fails if any row went over its table.
    pub fn check(self, what: &str) {
        println!("{what} per operation, measured:\n{}", self.report);
        assert!(
            self.over.is_empty(),
            "more {what} than docs/PERFORMANCE.md's tables allow:\n{}\nmeasured:\n{}",
            self.over.join("\n"),
            self.report
        );
    }
}
