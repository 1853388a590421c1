//! `ompx_dump_mapping_tables`: every OpenMP device's mapping table on stdout, in LLVM
//! 19's words and layout (`dumpTargetPointerMappings` with its own location
//! ";libomptarget;libomptarget;0;0;;"). This layer does not record variable names, so
//! each entry's declaration reads as LLVM's does for an unnamed one.

use crate::mapping::Mapping;
use crate::policy::print_stdout;
use crate::registry;

fn count(refs: u64) -> String {
    if refs == u64::MAX {
        "INF".to_string()
    } else {
        refs.to_string()
    }
}

/// The lines LLVM prints for one device's table (entries in host-address order).
pub fn table_lines(device: usize, mappings: &[&Mapping]) -> Vec<String> {
    let prefix = format!("omptarget device {device} info: ");
    if mappings.is_empty() {
        return vec![format!(
            "{prefix}OpenMP Host-Device pointer mappings table empty"
        )];
    }
    let mut lines = vec![
        format!("{prefix}OpenMP Host-Device pointer mappings after block at libomptarget:0:0:"),
        format!(
            "{prefix}{:<18} {:<18} {} {} {} {}",
            "Host Ptr", "Target Ptr", "Size (B)", "DynRefCount", "HoldRefCount", "Declaration"
        ),
    ];
    lines.extend(mappings.iter().map(|m| {
        format!(
            "{prefix}0x{:016x} 0x{:016x} {:<8} {:<11} {:<12} unknown at unknown:0:0",
            m.host_begin,
            m.device_begin,
            m.host_end - m.host_begin,
            count(m.dynamic_refs),
            count(m.hold_refs)
        )
    }));
    lines
}

/// Prints every device's mapping table.
#[no_mangle]
pub extern "C" fn ompx_dump_mapping_tables() {
    let mut text = String::new();
    {
        let state = registry::state();
        for (id, dev) in state.devices.iter().enumerate() {
            for line in table_lines(id, &dev.table.iter().collect::<Vec<_>>()) {
                text.push_str(&line);
                text.push('\n');
            }
        }
    }
    print_stdout(&text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_llvm_layout() {
        let m = Mapping {
            host_begin: 0x1000,
            host_end: 0x1028,
            device_begin: 0xabc0,
            dynamic_refs: u64::MAX,
            hold_refs: 0,
        };
        let lines = table_lines(0, &[&m]);
        assert_eq!(
            lines[1],
            "omptarget device 0 info: Host Ptr           Target Ptr         Size (B) DynRefCount HoldRefCount Declaration"
        );
        assert_eq!(
            lines[2],
            "omptarget device 0 info: 0x0000000000001000 0x000000000000abc0 40       INF         0            unknown at unknown:0:0"
        );
        assert_eq!(
            table_lines(2, &[]),
            vec!["omptarget device 2 info: OpenMP Host-Device pointer mappings table empty"]
        );
    }
}
