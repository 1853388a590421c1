//! How a target construct begins and ends when things go wrong, in LLVM's words
//! (report::policy's): a device number that names no device, and the outcome
//! (LLVM's `handleTargetOutcome`) with `LIBOMPTARGET_INFO`'s table dump, fatal where
//! offloading is mandatory.

use crate::devices::registry::{self, Target};
use crate::report::info;
use crate::report::policy::{fatal, message, requested, source_location, Policy, SourceLocation};
use std::ffi::c_void;
use std::io::Write;

/// After a target construct: a failure is fatal unless offloading is optional, which
/// LLVM decides as here — the default policy becomes mandatory once a device exists.
/// The last line names the construct's source position when the program has one.
pub fn handle_outcome(success: bool, have_devices: bool, loc: *const c_void) {
    let dump = info::enabled(info::kind::DUMP_TABLE);
    if success && !dump {
        return;
    }
    let mandatory = match requested() {
        Policy::Mandatory => true,
        Policy::Disabled => false,
        Policy::Default => have_devices,
    };
    if !mandatory {
        return;
    }
    if dump {
        registry::state().dump_tables(loc);
    }
    if success {
        return;
    }
    if !dump {
        message(
            "error: Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.",
        );
    }
    match source_location(loc).filter(SourceLocation::is_known) {
        Some(at) => {
            let _ = write!(std::io::stderr(), "{}:{}:{}: ", at.file, at.line, at.column);
        }
        None => message(
            "error: Source location information not present. Compile with -g or -gline-tables-only.",
        ),
    }
    fatal(
        1,
        "failure of target construct while offloading is mandatory",
    );
}

/// As `resolve`, but a device that does not exist ends the program with LLVM's message
/// (its fatal error code is the device number). For constructs, which load the images
/// themselves. With no device at all (no image fits any), a construct under
/// `OMP_TARGET_OFFLOAD=MANDATORY` fails as LLVM's does; by default it runs on the host.
pub fn resolve_or_abort(device_id: i64, loc: *const std::ffi::c_void) -> Target {
    if requested() == Policy::Mandatory && registry::state().num_devices() == 0 {
        handle_outcome(false, false, loc);
    }
    registry::resolve_number(device_id).unwrap_or_else(|| {
        let id = if device_id == -1 {
            registry::default_device()
        } else {
            device_id
        };
        registry::out_of_range(id)
    })
}
