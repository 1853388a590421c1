//! OpenMP 5.2's data-mapping semantics over one argument list, as LLVM's
//! `targetDataBegin` / `targetDataEnd` / `targetDataUpdate` apply them: map on entry
//! (allocate and copy `to` for a new mapping, count a reference for an existing one),
//! release on exit (copy `from` and free when the last reference goes), and update.

use crate::abi::{map_type as mt, MapArg};
use crate::mapping::{Lookup, Mapping, MappingTable};
use crate::ol::{self, Device};
use crate::policy::message;

/// The devices a copy runs between: `host` for host memory, `device` for its copies.
#[derive(Clone, Copy)]
pub struct Devices {
    pub host: Device,
    pub device: Device,
}

/// Why a data operation failed (already reported on stderr, as LLVM reports it).
#[derive(Debug)]
pub struct Failed;

/// Features of the map-type flags this layer does not handle yet: refusing them is
/// honest, mapping them half-way would corrupt the program's data silently.
pub fn unsupported(arg: &MapArg) -> Option<&'static str> {
    if arg.has_mapper {
        Some("user-defined mappers (declare mapper)")
    } else if arg.map_type & mt::MEMBER_OF != 0 {
        Some("struct member mapping (MEMBER_OF)")
    } else if arg.map_type & mt::PTR_AND_OBJ != 0 {
        Some("pointer attachment (PTR_AND_OBJ)")
    } else if arg.map_type & mt::NON_CONTIG != 0 {
        Some("non-contiguous target update")
    } else {
        None
    }
}

fn refuse_unsupported(args: &[MapArg]) -> Result<(), Failed> {
    if let Some(what) = args.iter().find_map(unsupported) {
        crate::not_implemented::report(what);
        return Err(Failed);
    }
    Ok(())
}

/// Whether the entry takes part in mapping at all (literals and private copies are the
/// kernel launch's business).
fn is_mapped(arg: &MapArg) -> bool {
    arg.map_type & (mt::LITERAL | mt::PRIVATE) == 0
}

fn copy_failed(error: String) -> Failed {
    message(&format!("error: {error}"));
    Failed
}

/// Maps every argument; returns, for arguments marked `RETURN_PARAM`, their device base
/// address (the caller writes it back into its base array, for `use_device_ptr`).
pub fn begin(
    table: &mut MappingTable,
    devs: Devices,
    args: &[MapArg],
) -> Result<Vec<(usize, usize)>, Failed> {
    refuse_unsupported(args)?;
    let mut returned = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        if !is_mapped(arg) {
            continue;
        }
        let hold = arg.map_type & mt::OMPX_HOLD != 0;
        let (key, is_new) = match table.lookup(arg.begin, arg.size) {
            Lookup::Contained(key) => {
                let m = table.get_mut(key).expect("looked-up mapping exists");
                if hold {
                    m.hold_refs += 1;
                } else {
                    // u64::MAX means "never released" (globals); it stays there.
                    m.dynamic_refs = m.dynamic_refs.saturating_add(1);
                }
                (Some(key), false)
            }
            Lookup::Extends(key) => {
                let m = table.get(key).expect("looked-up mapping exists");
                message(&format!(
                    "message: explicit extension not allowed: host address specified is 0x{:016x} ({} bytes), but device allocation maps to host at 0x{:016x} ({} bytes)",
                    arg.begin, arg.size, m.host_begin, m.host_end - m.host_begin
                ));
                message("error: Call to getTargetPointer returned null pointer (device failure or illegal mapping).");
                return Err(Failed);
            }
            Lookup::Absent if arg.map_type & mt::PRESENT != 0 => {
                message(&format!(
                    "message: device mapping required by 'present' map type modifier does not exist for host address 0x{:016x} ({} bytes)",
                    arg.begin, arg.size
                ));
                message("error: Call to getTargetPointer returned null pointer ('present' map type modifier).");
                return Err(Failed);
            }
            Lookup::Absent if arg.size == 0 => (None, false),
            Lookup::Absent => {
                let device_begin = ol::alloc(devs.device, arg.size).map_err(copy_failed)?;
                table.insert(Mapping {
                    host_begin: arg.begin,
                    host_end: arg.begin + arg.size,
                    device_begin,
                    dynamic_refs: u64::from(!hold),
                    hold_refs: u64::from(hold),
                });
                (Some(arg.begin), true)
            }
        };
        let device_begin = key
            .and_then(|k| table.get(k))
            .map_or(0, |m| m.device_address(arg.begin));
        if arg.map_type & mt::TO != 0 && (is_new || arg.map_type & mt::ALWAYS != 0) {
            ol::memcpy(device_begin, devs.device, arg.begin, devs.host, arg.size)
                .map_err(copy_failed)?;
        }
        if arg.map_type & mt::RETURN_PARAM != 0 {
            returned.push((
                index,
                device_begin.wrapping_sub(arg.begin.wrapping_sub(arg.base)),
            ));
        }
    }
    Ok(returned)
}

/// Releases every argument, last first: one reference each (all of them for `delete`);
/// `from` copies back when the last reference goes (or always, with `always`), and the
/// device memory is freed then.
pub fn end(table: &mut MappingTable, devs: Devices, args: &[MapArg]) -> Result<(), Failed> {
    refuse_unsupported(args)?;
    for arg in args.iter().rev() {
        if !is_mapped(arg) {
            continue;
        }
        let Lookup::Contained(key) = table.lookup(arg.begin, arg.size) else {
            if arg.map_type & mt::PRESENT != 0 {
                message(&format!(
                    "message: device mapping required by 'present' map type modifier does not exist for host address 0x{:016x} ({} bytes)",
                    arg.begin, arg.size
                ));
                return Err(Failed);
            }
            continue;
        };
        let m = table.get_mut(key).expect("looked-up mapping exists");
        if arg.map_type & mt::DELETE != 0 {
            if m.dynamic_refs != u64::MAX {
                m.dynamic_refs = 0;
            }
        } else if arg.map_type & mt::OMPX_HOLD != 0 {
            m.hold_refs = m.hold_refs.saturating_sub(1);
        } else if m.dynamic_refs != u64::MAX {
            m.dynamic_refs = m.dynamic_refs.saturating_sub(1);
        }
        let last = m.is_released();
        let device_begin = m.device_address(arg.begin);
        if arg.map_type & mt::FROM != 0 && (last || arg.map_type & mt::ALWAYS != 0) {
            ol::memcpy(arg.begin, devs.host, device_begin, devs.device, arg.size)
                .map_err(copy_failed)?;
        }
        if last {
            let gone = table.remove(key).expect("looked-up mapping exists");
            ol::free(gone.device_begin).map_err(copy_failed)?;
        }
    }
    Ok(())
}

/// `target update`: copies `to` / `from` for every argument that is mapped; an unmapped
/// one is skipped unless it carries `present`.
pub fn update(table: &MappingTable, devs: Devices, args: &[MapArg]) -> Result<(), Failed> {
    refuse_unsupported(args)?;
    for arg in args {
        let Some(m) = table.find(arg.begin, arg.size) else {
            if arg.map_type & mt::PRESENT != 0 {
                message(&format!(
                    "message: device mapping required by 'present' motion modifier does not exist for host address 0x{:016x} ({} bytes)",
                    arg.begin, arg.size
                ));
                return Err(Failed);
            }
            continue;
        };
        let device_begin = m.device_address(arg.begin);
        if arg.map_type & mt::TO != 0 {
            ol::memcpy(device_begin, devs.device, arg.begin, devs.host, arg.size)
                .map_err(copy_failed)?;
        }
        if arg.map_type & mt::FROM != 0 {
            ol::memcpy(arg.begin, devs.host, device_begin, devs.device, arg.size)
                .map_err(copy_failed)?;
        }
    }
    Ok(())
}
