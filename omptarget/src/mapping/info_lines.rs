//! The `LIBOMPTARGET_INFO` lines about mappings (LLVM's "Mapping exists" line, its
//! count-preserving lookup, `dumpTargetPointerMappings`), written with the words and
//! switches of `report::info`.

use crate::mapping::table::{Lookup, Mapping, MappingTable, INFINITE};
use crate::report::info::{
    construct_position, declaration, enabled, kind, line, ptr, variable_name,
};
use std::io::Write;

/// A reference count as LLVM prints it (`INF` for a mapping that never goes away).
pub fn ref_count(count: u64) -> String {
    if count == INFINITE {
        "INF".to_string()
    } else {
        count.to_string()
    }
}

/// LLVM's "Mapping exists" line for a mapping found by a construct; `action` tells
/// what happened to the count of the `hold` kind; `name` only where LLVM prints one
/// (when mapping, not when releasing or looking up).
#[allow(clippy::too_many_arguments)]
pub fn exists(
    device: usize,
    m: &Mapping,
    begin: usize,
    size: usize,
    hold: bool,
    action: &str,
    implicit: bool,
    name: Option<usize>,
) {
    if !enabled(kind::MAPPING_EXISTS) {
        return;
    }
    let (dynamic_action, hold_action) = if hold { ("", action) } else { (action, "") };
    let mut text = format!(
        "Mapping exists{} with HstPtrBegin={}, TgtPtrBegin={}, Size={size}, DynRefCount={}{dynamic_action}, HoldRefCount={}{hold_action}",
        if implicit { " (implicit)" } else { "" },
        ptr(begin),
        ptr(m.device_address(begin)),
        ref_count(m.dynamic_refs),
        ref_count(m.hold_refs)
    );
    if let Some(name) = name {
        text.push_str(&format!(", Name={}", variable_name(name)));
    }
    line(device, &text);
}

/// LLVM's lookup that changes no count (`getTgtPtrBegin` without an update): the
/// mapping holding `[begin, begin + size)` (or, unless `must_contain`, overlapping it),
/// with its "Mapping exists" line; returns its key.
pub fn find_mapping(
    device: usize,
    table: &MappingTable,
    begin: usize,
    size: usize,
    must_contain: bool,
) -> Option<(usize, &Mapping)> {
    let key = match table.lookup(begin, size) {
        Lookup::Contained(key) => key,
        Lookup::Extends(key) if !must_contain => key,
        _ => return None,
    };
    let m = table.get(key)?;
    exists(
        device,
        m,
        begin,
        size,
        false,
        " (update suppressed)",
        false,
        None,
    );
    Some((key, m))
}

/// The lines of LLVM's `dumpTargetPointerMappings` for one device's table, the
/// construct named by its `file:line:column`.
pub fn table_lines(device: usize, table: &MappingTable, position: &str) -> Vec<String> {
    let prefix = format!("omptarget device {device} info: ");
    let mappings: Vec<&Mapping> = table.iter().collect();
    if mappings.is_empty() {
        return vec![format!(
            "{prefix}OpenMP Host-Device pointer mappings table empty"
        )];
    }
    let mut lines = vec![
        format!("{prefix}OpenMP Host-Device pointer mappings after block at {position}:"),
        format!(
            "{prefix}{:<18} {:<18} {} {} {} {}",
            "Host Ptr", "Target Ptr", "Size (B)", "DynRefCount", "HoldRefCount", "Declaration"
        ),
    ];
    lines.extend(mappings.into_iter().map(|m| {
        let (name, file, row, column) = declaration(m.name);
        format!(
            "{prefix}{} {} {:<8} {:<11} {:<12} {name} at {file}:{row}:{column}",
            ptr(m.host_begin),
            ptr(m.device_begin),
            m.host_end - m.host_begin,
            ref_count(m.dynamic_refs),
            ref_count(m.hold_refs)
        )
    }));
    lines
}

/// One device's table on stderr, after the construct at `loc`.
pub fn dump_table(device: usize, table: &MappingTable, loc: *const std::ffi::c_void) {
    let mut err = std::io::stderr().lock();
    for text in table_lines(device, table, &construct_position(loc)) {
        let _ = writeln!(err, "{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_dumped_in_llvms_layout() {
        let symbol = c"global_ptr";
        let mut table = MappingTable::default();
        table.insert(Mapping::permanent(
            0x1000,
            40,
            0xabc0,
            symbol.as_ptr() as usize,
        ));
        let lines = table_lines(0, &table, "libomptarget:0:0");
        assert_eq!(
            lines[1],
            "omptarget device 0 info: Host Ptr           Target Ptr         Size (B) DynRefCount HoldRefCount Declaration"
        );
        assert_eq!(
            lines[2],
            "omptarget device 0 info: 0x0000000000001000 0x000000000000abc0 40       INF         0            global_ptr at unknown:0:0"
        );
        assert_eq!(
            table_lines(2, &MappingTable::default(), "x:1:1"),
            vec!["omptarget device 2 info: OpenMP Host-Device pointer mappings table empty"]
        );
        assert_eq!(ref_count(INFINITE), "INF");
        assert_eq!(ref_count(INFINITE), "INF");
    }
}
