//! `ompx_dump_mapping_tables`: every OpenMP device's mapping table on stdout, in LLVM
//! 19's words and layout (`dumpTargetPointerMappings` with its own location
//! ";libomptarget;libomptarget;0;0;;"), the same lines LIBOMPTARGET_INFO prints.

use crate::devices::registry;
use crate::report::boundary::boundary;
use crate::report::policy::print_stdout;

/// Prints every device's mapping table.
#[no_mangle]
pub extern "C" fn ompx_dump_mapping_tables() {
    boundary("ompx_dump_mapping_tables", || {
        let mut text = String::new();
        {
            let state = registry::state();
            for (id, dev) in state.devices.iter().enumerate() {
                for line in
                    crate::mapping::info_lines::table_lines(id, &dev.table, "libomptarget:0:0")
                {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
        }
        print_stdout(&text);
    })
}
