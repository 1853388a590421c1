//! Pointer attachment as clang 22 asks for it: an `ATTACH` entry (pointer address as
//! base, pointee as begin, the pointer's size) is done after every other map of the
//! construct, and only when the pointer or the pointee was newly mapped by it (or with
//! `always`); it counts no references and allocates nothing. clang 19's `PTR_AND_OBJ`
//! entries attach on the spot (data.rs). Both write the device pointer the same way.

use crate::abi::types::{map_type as mt, MapArg};
use crate::mapping::info_lines;
use crate::mapping::table::{MappingTable, ShadowPointer};
use crate::mapping::transfer::{write_device_pointer, Devices, Failed};

/// What a construct's maps leave for the attachments: the deferred entries and every
/// host range it newly mapped.
#[derive(Default)]
pub struct Pending {
    pub entries: Vec<MapArg>,
    pub new_ranges: Vec<(usize, usize)>,
}

impl Pending {
    pub fn mapped_now(&mut self, begin: usize, size: usize) {
        self.new_ranges.push((begin, size));
    }

    pub fn is_new(&self, address: usize) -> bool {
        self.new_ranges
            .iter()
            .any(|&(begin, size)| address >= begin && address < begin.saturating_add(size))
    }
}

/// Makes the device copy of the pointer at `host_pointer` (inside the mapping `key`,
/// at `device_pointer`) hold `device_value`, remembering both values so that copies of
/// the enclosing data keep each side's own; written only when it changed.
pub fn attach(
    table: &mut MappingTable,
    devs: Devices,
    key: usize,
    device_pointer: usize,
    shadow_host: (usize, usize),
    device_value: usize,
) -> Result<(), Failed> {
    let (host_address, host_value) = shadow_host;
    let shadow = ShadowPointer {
        host_address,
        host_value,
        device_address: device_pointer,
        device_value,
    };
    let (changed, name) = table
        .get_mut(key)
        .map_or((false, 0), |m| (m.add_shadow(shadow), m.name));
    if changed {
        write_device_pointer(devs, device_pointer, device_value, name)?;
    }
    Ok(())
}

/// The mapping holding `[begin, begin + size)` entirely: (its key, the device address
/// of `begin`).
fn contained(
    table: &MappingTable,
    devs: Devices,
    begin: usize,
    size: usize,
) -> Option<(usize, usize)> {
    info_lines::find_mapping(devs.number, table, begin, size, true)
        .map(|(key, m)| (key, m.device_address(begin)))
}

/// Does the deferred attachments of one construct.
pub fn finish(table: &mut MappingTable, devs: Devices, pending: &Pending) -> Result<(), Failed> {
    for entry in &pending.entries {
        let (pointer, pointee_begin) = (entry.base, entry.begin);
        let wanted =
            entry.has(mt::ALWAYS) || pending.is_new(pointee_begin) || pending.is_new(pointer);
        if !wanted || pointer == 0 {
            continue;
        }
        let Some((_, device_pointee)) = contained(table, devs, pointee_begin, 0) else {
            continue;
        };
        let Some((key, device_pointer)) = contained(table, devs, pointer, entry.size) else {
            continue;
        };
        // SAFETY: an ATTACH entry's base is the address of a host pointer variable
        // (clang's contract); its value is the pointee's base.
        let pointee_base = unsafe { (pointer as *const usize).read_unaligned() };
        let device_value = device_pointee.wrapping_sub(pointee_begin.wrapping_sub(pointee_base));
        attach(
            table,
            devs,
            key,
            device_pointer,
            (pointer, pointee_base),
            device_value,
        )?;
    }
    Ok(())
}
