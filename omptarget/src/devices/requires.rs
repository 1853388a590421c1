//! `#pragma omp requires` across compilation units: the first requires entry's flags
//! stand, and every later one must agree with them on `reverse_offload`,
//! `unified_address` and `unified_shared_memory`, else LLVM ends the program (its fatal
//! error 2). Other clauses are not compared (LLVM's neither).

use crate::report::policy;

const CHECKED: [(u64, &str); 3] = [
    (0x2, "reverse_offload"),
    (0x4, "unified_address"),
    (0x8, "unified_shared_memory"),
];

/// Adds one requires entry's flags: the first (non-zero) value is kept in `flags`; a
/// later one that disagrees ends the program with LLVM's message.
pub fn add(flags: &mut u64, value: u64) {
    if *flags == 0 {
        *flags = value;
        return;
    }
    for (bit, clause) in CHECKED {
        if *flags & bit != value & bit {
            policy::fatal(
                2,
                &format!("'#pragma omp requires {clause}' not used consistently!"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_value_stands_and_agreeing_ones_pass() {
        let mut flags = 0;
        add(&mut flags, 0x1);
        add(&mut flags, 0x1);
        add(&mut flags, 0x11);
        assert_eq!(flags, 0x1);
    }
}
