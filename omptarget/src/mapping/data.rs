//! OpenMP 5.2's data-mapping semantics over one argument list, as LLVM's
//! `targetDataBegin` / `targetDataEnd` apply them: map on entry (allocate and copy `to`
//! for a new mapping, count a reference for an existing one), release on exit (copy
//! `from` and free when the last reference goes). Struct members (`MEMBER_OF`) live in
//! their struct's mapping and count no references of their own; pointer attachment
//! (`PTR_AND_OBJ`) maps the pointee and makes the device copy of the pointer point at
//! it; `declare mapper` arguments are expanded into their components first.

use crate::abi::types::{map_type as mt, MapArg};
use crate::mapping::attach;
use crate::mapping::info_lines;
use crate::mapping::mapper;
use crate::mapping::table::{Lookup, Mapping, MappingTable};
use crate::mapping::transfer::{report, restore_host_shadows, to_device, to_host, Devices, Failed};
use crate::ompt::events;
use crate::plugin::device_memory;
use crate::report::info::{self, kind};
use crate::report::policy::{self, message};

/// Whether the entry takes part in mapping at all (literals and private copies are the
/// kernel launch's business).
pub fn is_mapped(arg: &MapArg) -> bool {
    !arg.has(mt::LITERAL | mt::PRIVATE)
}

/// The largest alignment a struct's device copy must keep: that of its base address,
/// at most 16 (LLVM's rule for partially mapped structs).
fn struct_alignment(base: usize) -> usize {
    if base == 0 {
        16
    } else {
        (1usize << base.trailing_zeros()).min(16)
    }
}

/// One lookup-or-map request: LLVM's `getTargetPointer` arguments.
struct Request {
    begin: usize,
    base: usize,
    size: usize,
    padding: usize,
    flags: i64,
    update_ref: bool,
    name: usize,
}

/// The device side of one argument after `target_pointer`.
#[derive(Clone, Copy)]
struct Target {
    /// 0: not mapped (and not created).
    device: usize,
    key: Option<usize>,
    is_new: bool,
    /// Unified shared memory: the host address is used, nothing is mapped.
    host_pointer: bool,
}

fn missing_present(begin: usize, size: usize) {
    message(&format!(
        "message: device mapping required by 'present' map type modifier does not exist for host address 0x{begin:016x} ({size} bytes)"
    ));
}

fn null_pointer_error(present: bool) -> Failed {
    message(&format!(
        "error: Call to getTargetPointer returned null pointer ({}).",
        if present {
            "'present' map type modifier"
        } else {
            "device failure or illegal mapping"
        }
    ));
    Failed
}

/// Finds or creates the mapping of one range and copies `to` data when it is new (or
/// `always`).
fn target_pointer(table: &mut MappingTable, devs: Devices, r: &Request) -> Result<Target, Failed> {
    let has = |flag: i64| r.flags & flag != 0;
    let hold = has(mt::OMPX_HOLD);
    let mut t = Target {
        device: 0,
        key: None,
        is_new: false,
        host_pointer: false,
    };
    let lookup = table.lookup(r.begin, r.size);
    let usable = match lookup {
        Lookup::Contained(key) => Some(key),
        // An implicit map of something partly mapped uses the existing mapping.
        Lookup::Extends(key) if has(mt::IMPLICIT) => Some(key),
        _ => None,
    };
    if let Some(key) = usable {
        let m = table.get_mut(key).expect("looked-up mapping exists");
        let action = if r.update_ref {
            m.add_ref(hold);
            " (incremented)"
        } else {
            // A member allocated with its struct just now is new too, which LLVM (19 and
            // 22 alike) tells from the count alone: an entry at one reference is new,
            // whoever made it. So a mapper's components and struct members over a
            // mapping an earlier construct left at one reference copy their `to` data
            // again, while those over a mapping counted twice copy nothing, even one this
            // construct allocated.
            t.is_new = m.total_refs() == 1;
            " (update suppressed)"
        };
        let implicit = has(mt::IMPLICIT);
        info_lines::exists(
            devs.number,
            m,
            r.begin,
            r.size,
            hold,
            action,
            implicit,
            Some(r.name),
        );
        t.device = m.device_address(r.begin);
        t.key = Some(key);
    } else if let Lookup::Extends(key) = lookup {
        let m = table.get(key).expect("looked-up mapping exists");
        message(&format!(
            "message: explicit extension not allowed: host address specified is 0x{:016x} ({} bytes), but device allocation maps to host at 0x{:016x} ({} bytes)",
            r.begin, r.size, m.host_begin, m.host_end - m.host_begin
        ));
        if has(mt::PRESENT) {
            missing_present(r.begin, r.size);
        }
    } else if table.unified_memory && !has(mt::CLOSE) {
        if r.size > 0 && info::enabled(kind::MAPPING_CHANGED) {
            info::line(
                devs.number,
                &format!(
                    "Return HstPtrBegin {} Size={} for unified shared memory",
                    info::ptr(r.begin),
                    r.size
                ),
            );
        }
        t.device = r.begin;
        t.host_pointer = true;
    } else if has(mt::PRESENT) {
        missing_present(r.begin, r.size);
    } else if r.size > 0 {
        let alloc = events::alloc(devs.number, r.begin, r.padding + r.size, || {
            device_memory::alloc(devs.device, r.padding + r.size)
        })
        .map_err(report)?;
        let device_begin = alloc + r.padding;
        let m = Mapping {
            name: r.name,
            ..Mapping::new(r.base, r.begin, r.size, alloc, device_begin, hold)
        };
        if info::enabled(kind::MAPPING_CHANGED) {
            info::line(
                devs.number,
                &format!(
                    "Creating new map entry with HstPtrBase={}, HstPtrBegin={}, TgtAllocBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}, HoldRefCount={}, Name={}",
                    info::ptr(r.base),
                    info::ptr(r.begin),
                    info::ptr(alloc),
                    info::ptr(device_begin),
                    r.size,
                    info_lines::ref_count(m.dynamic_refs),
                    info_lines::ref_count(m.hold_refs),
                    info::variable_name(r.name)
                ),
            );
        }
        table.insert(m);
        t = Target {
            device: device_begin,
            key: Some(r.begin),
            is_new: true,
            host_pointer: false,
        };
    }
    let wanted = has(mt::TO) && (t.is_new || has(mt::ALWAYS)) && r.size != 0;
    if t.device != 0 && !t.host_pointer && wanted && !holds_attached_pointer(table, &t, r) {
        let name = t.key.and_then(|k| table.get(k)).map_or(0, |m| m.name);
        to_device(devs, t.device, r.begin, r.size, name)?;
    }
    Ok(t)
}

/// LLVM 22 copies nothing to the device over a pointer it attached inside the mapping
/// (a second `to` of the same struct, or `always`, would overwrite the device pointer
/// with the host's): the whole copy is skipped, as LLVM 22 does. LLVM 19 copies.
fn holds_attached_pointer(table: &MappingTable, t: &Target, r: &Request) -> bool {
    if policy::llvm_release() < 22 {
        return false;
    }
    let end = r.begin.saturating_add(r.size);
    t.key.and_then(|k| table.get(k)).is_some_and(|m| {
        m.shadows
            .iter()
            .any(|s| s.host_address >= r.begin && s.host_address < end)
    })
}

/// Maps every argument; returns, for arguments marked `RETURN_PARAM`, their device base
/// address (the caller writes it back into its base array, for `use_device_ptr`).
pub fn begin(
    table: &mut MappingTable,
    devs: Devices,
    args: &[MapArg],
) -> Result<Vec<(usize, usize)>, Failed> {
    let mut returned = Vec::new();
    let mut pending = attach::Pending::default();
    begin_list(table, devs, args, false, &mut returned, &mut pending)?;
    attach::finish(table, devs, &pending)?;
    Ok(returned)
}

fn begin_list(
    table: &mut MappingTable,
    devs: Devices,
    args: &[MapArg],
    from_mapper: bool,
    returned: &mut Vec<(usize, usize)>,
    pending: &mut attach::Pending,
) -> Result<(), Failed> {
    for (index, arg) in args.iter().enumerate() {
        if !is_mapped(arg) {
            continue;
        }
        if arg.mapper != 0 {
            let parts = mapper::expand(arg);
            // Results for `use_device_ptr` of components have nowhere to go (LLVM too).
            begin_list(table, devs, &parts, true, &mut Vec::new(), pending).inspect_err(|_| {
                // LLVM 22 ends this line (its `targetDataEnd` and `targetDataUpdate`
                // twins not) without a period.
                let period = if policy::llvm_release() < 22 { "." } else { "" };
                message(&format!(
                    "error: Call to targetDataBegin via targetDataMapper for custom mapper failed{period}"
                ));
            })?;
            continue;
        }
        // The first entry of a struct (its members follow) keeps the struct's alignment.
        let is_struct = arg.parent_index().is_none()
            && args.get(index + 1).and_then(MapArg::parent_index) == Some(index);
        let padding = if is_struct {
            arg.begin % struct_alignment(arg.base)
        } else {
            0
        };
        if arg.has(mt::ATTACH) {
            // After every other map of the construct (attach.rs).
            pending.entries.push(*arg);
            continue;
        }
        let present = arg.has(mt::PRESENT);
        // The first component of a mapper stands for the mapped object itself, whose
        // reference the construct does not count (LLVM's rule).
        let mapper_head = from_mapper && index == 0;
        let mut update_ref = !arg.has(mt::MEMBER_OF) && !mapper_head;
        let mut base = arg.base;
        let mut pointer = None;
        if arg.has(mt::PTR_AND_OBJ) {
            // The pointer itself first (usually mapped already, as a struct member).
            let p = target_pointer(
                table,
                devs,
                &Request {
                    begin: arg.base,
                    base: arg.base,
                    size: std::mem::size_of::<usize>(),
                    padding: 0,
                    flags: arg.map_type & !(mt::TO | mt::ALWAYS),
                    update_ref,
                    name: 0,
                },
            )?;
            if p.device == 0 {
                return Err(null_pointer_error(present));
            }
            // SAFETY: for PTR_AND_OBJ the base is the address of a host pointer
            // variable (clang's contract); reading it gives the pointee's base.
            base = unsafe { (arg.base as *const usize).read_unaligned() };
            if p.is_new && !p.host_pointer {
                pending.mapped_now(arg.base, std::mem::size_of::<usize>());
            }
            pointer = p.key.map(|key| (key, p.device));
            update_ref = !mapper_head;
        }
        let t = target_pointer(
            table,
            devs,
            &Request {
                begin: arg.begin,
                base,
                size: arg.size,
                padding,
                flags: arg.map_type,
                update_ref,
                name: arg.name,
            },
        )?;
        if t.device == 0 && (arg.size > 0 || present) {
            return Err(null_pointer_error(present));
        }
        let device_base = t.device.wrapping_sub(arg.begin.wrapping_sub(base));
        if arg.has(mt::RETURN_PARAM) {
            returned.push((index, returned_base(arg, base, t.device, device_base)));
        }
        if t.is_new && !t.host_pointer && t.device != 0 {
            pending.mapped_now(arg.begin, arg.size);
        }
        if let (Some((key, device_pointer)), false) = (pointer, t.host_pointer) {
            let host = (arg.base, base);
            attach::attach(table, devs, key, device_pointer, host, device_base)?;
        }
        let unmapped = t.key.is_none() && !t.host_pointer;
        let counted = arg.map_type != 0 && !arg.has(mt::MEMBER_OF) && !arg.has(mt::IMPLICIT);
        if unmapped && counted && info::enabled(kind::EMPTY_MAPPING) {
            info::line(
                devs.number,
                &format!(
                    "variable {} does not have a valid device counterpart",
                    info::variable_name(arg.name)
                ),
            );
        }
    }
    Ok(())
}

/// What `use_device_ptr` / `use_device_addr` get back for one argument. A found mapping
/// gives its device base. A failed lookup gave LLVM 19 that arithmetic on NULL; LLVM 22
/// keeps the host base instead (OpenMP 5.1: the list item must then already be a device
/// address), or the offset NULL when clang asks for `fb_nullify`.
fn returned_base(arg: &MapArg, base: usize, device: usize, device_base: usize) -> usize {
    if device != 0 || policy::llvm_release() < 22 || arg.has(mt::FB_NULLIFY) {
        device_base
    } else {
        base
    }
}

/// Releases every argument, last first: one reference each (all of them for `delete`);
/// `from` copies back when the last reference goes (or always, with `always`), and the
/// device memory is freed once every argument is done.
pub fn end(table: &mut MappingTable, devs: Devices, args: &[MapArg]) -> Result<(), Failed> {
    // As LLVM's post-processing: after every copy of the construct, mappers' lists first
    // (each as it finished), then the construct's own.
    let mut batches = Vec::new();
    let own = end_list(table, devs, args, false, &mut batches)?;
    batches.push(own);
    let releases: Vec<Release> = batches.into_iter().flatten().collect();
    finish_releases(table, devs, &releases)
}

/// What happens to a released mapping after every copy of the construct is done.
struct Release {
    key: usize,
    size: usize,
    from: bool,
    may_free: bool,
}

/// Releases one list's arguments (copies included); returns what to do once the whole
/// construct is done, and adds a mapper's list of those to `batches` when it finishes.
fn end_list(
    table: &mut MappingTable,
    devs: Devices,
    args: &[MapArg],
    from_mapper: bool,
    batches: &mut Vec<Vec<Release>>,
) -> Result<Vec<Release>, Failed> {
    let mut releases = Vec::new();
    for (index, arg) in args.iter().enumerate().rev() {
        // Attachments are only made on entry (clang 22's ATTACH entries).
        if !is_mapped(arg) || arg.has(mt::ATTACH) {
            continue;
        }
        if arg.mapper != 0 {
            let parts = mapper::expand(arg);
            let inner = end_list(table, devs, &parts, true, batches).inspect_err(|_| {
                message(
                    "error: Call to targetDataEnd via targetDataMapper for custom mapper failed.",
                );
            })?;
            batches.push(inner);
            continue;
        }
        let member_only = arg.has(mt::MEMBER_OF) && !arg.has(mt::PTR_AND_OBJ);
        let mapper_head = from_mapper && index == 0;
        let update_ref = !member_only && !mapper_head;
        let (hold, delete) = (arg.has(mt::OMPX_HOLD), arg.has(mt::DELETE));
        let key = match table.lookup(arg.begin, arg.size) {
            Lookup::Contained(key) => Some(key),
            Lookup::Extends(key) if arg.has(mt::IMPLICIT) => Some(key),
            _ => None,
        };
        let Some(key) = key else {
            // Under unified shared memory the data was used in place: nothing to do.
            if arg.has(mt::PRESENT) && !table.unified_memory {
                missing_present(arg.begin, arg.size);
                return Err(Failed);
            }
            continue;
        };
        let m = table.get_mut(key).expect("looked-up mapping exists");
        let last = m.release_is_last(hold, delete);
        if delete {
            m.reset_refs(hold);
        }
        let action = if !update_ref {
            " (update suppressed)"
        } else if last && delete {
            " (reset, delayed deletion)"
        } else if last {
            " (decremented, delayed deletion)"
        } else {
            " (decremented)"
        };
        if update_ref {
            m.drop_ref(hold);
        }
        info_lines::exists(
            devs.number,
            m,
            arg.begin,
            arg.size,
            hold,
            action,
            false,
            None,
        );
        let (device_begin, name) = (m.device_address(arg.begin), m.name);
        if arg.has(mt::FROM) && (arg.has(mt::ALWAYS) || last) && arg.size != 0 {
            to_host(devs, arg.begin, device_begin, arg.size, name)?;
        }
        releases.push(Release {
            key,
            size: arg.size,
            from: arg.has(mt::FROM),
            // A member's release never frees its struct.
            may_free: !member_only,
        });
    }
    Ok(releases)
}

/// Restores the host's attached pointers after `from` copies and frees the mappings no
/// longer referenced. Only the last release of a mapping may free it (LLVM counts every
/// user of an entry in the construct): an earlier one freeing it would skip a later
/// user's restore.
fn finish_releases(
    table: &mut MappingTable,
    devs: Devices,
    releases: &[Release],
) -> Result<(), Failed> {
    for (index, release) in releases.iter().enumerate() {
        let Some(m) = table.get(release.key) else {
            continue;
        };
        if release.from {
            restore_host_shadows(m);
        }
        let last_user = !releases[index + 1..].iter().any(|r| r.key == release.key);
        if last_user && release.may_free && m.total_refs() == 0 {
            let gone = table.remove(release.key).expect("mapping exists");
            if info::enabled(kind::MAPPING_CHANGED) {
                info::line(
                    devs.number,
                    &format!(
                        "Removing map entry with HstPtrBegin={}, TgtPtrBegin={}, Size={}, Name={}",
                        info::ptr(gone.host_begin),
                        info::ptr(gone.device_begin),
                        release.size,
                        info::variable_name(gone.name)
                    ),
                );
            }
            if gone.device_alloc != 0 {
                events::delete(devs.number, gone.device_alloc, || {
                    device_memory::free(gone.device_alloc)
                })
                .map_err(report)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::mapper::{component_count, push_component};
    use crate::plugin::ol;
    use crate::report::boundary::boundary;
    use std::cell::Cell;
    use std::ffi::c_void;

    /// liboffload's host device, on both sides of every copy.
    fn host() -> Devices {
        ol::init().expect("olInit");
        let host = ol::devices()
            .expect("devices")
            .into_iter()
            .find(|d| ol::is_host(*d).unwrap_or(false))
            .expect("a host device");
        Devices {
            number: 0,
            host,
            device: host,
        }
    }

    fn arg(begin: usize, size: usize, map_type: i64) -> MapArg {
        MapArg {
            base: begin,
            begin,
            size,
            map_type,
            mapper: 0,
            name: 0,
        }
    }

    /// The device copy of the `i32` at `host_address`.
    fn on_device(table: &MappingTable, devs: Devices, host_address: usize) -> i32 {
        let m = table
            .iter()
            .find(|m| (m.host_begin..m.host_end).contains(&host_address))
            .expect("mapped");
        let mut value = 0i32;
        let address = &mut value as *mut i32 as usize;
        to_host(devs, address, m.device_address(host_address), 4, 0).expect("copy");
        value
    }

    /// Sets the device copy of the `i32` at `host_address`.
    fn set_on_device(table: &MappingTable, devs: Devices, host_address: usize, value: i32) {
        let m = table
            .iter()
            .find(|m| (m.host_begin..m.host_end).contains(&host_address))
            .expect("mapped");
        let source = &value as *const i32 as usize;
        to_device(devs, m.device_address(host_address), source, 4, 0).expect("copy");
    }

    /// `declare mapper(S s) map(tofrom: s.y)` for `struct { int x, y, z; }`: one
    /// component, the member, with the outer map type (clang's first component, whose
    /// reference the construct does not count).
    unsafe extern "C" fn member_y_mapper(
        handle: *mut c_void,
        base: *mut c_void,
        begin: *mut c_void,
        _size: i64,
        map_type: i64,
        name: *mut c_void,
    ) {
        boundary("member_y_mapper", || {
            // SAFETY: `begin` is a 12-byte struct of the test; the handle is the one
            // this mapper was called with.
            unsafe {
                let _ = component_count(handle);
                let y = begin.cast::<u8>().add(4).cast::<c_void>();
                push_component(handle, base, y, 4, map_type, name);
            }
        })
    }

    /// LLVM 19's and LLVM 22's rule (one rule: a unit test runs as neither library):
    /// a mapper component that counts no reference, over a mapping an earlier construct
    /// left at one reference, is new and copies its `to` data, every time; at two
    /// references it is not.
    #[test]
    fn a_mapper_component_over_a_mapping_at_one_reference_copies_to_data() {
        let devs = host();
        let mut table = MappingTable::default();
        // Cells: the library reads them through their address.
        let s = [Cell::new(0i32), Cell::new(0), Cell::new(0)];
        let begin_s = s.as_ptr() as usize;
        let y = begin_s + 4;
        // `target enter data map(alloc: s.y)`, then the device copy set to 0.
        begin(&mut table, devs, &[arg(y, 4, 0)]).expect("alloc");
        set_on_device(&table, devs, y, 0);
        let outer = MapArg {
            mapper: member_y_mapper as *const () as usize,
            ..arg(begin_s, 12, mt::TO)
        };
        // `target enter data map(to: s)` through the mapper.
        s[1].set(111);
        begin(&mut table, devs, &[outer]).expect("mapper");
        assert_eq!(on_device(&table, devs, y), 111);
        assert_eq!(table.get(y).expect("s.y").total_refs(), 1);
        s[1].set(222);
        begin(&mut table, devs, &[outer]).expect("mapper");
        assert_eq!(on_device(&table, devs, y), 222, "still at one reference");
        // A second `enter data map(alloc: s.y)`: two references, nothing copied.
        begin(&mut table, devs, &[arg(y, 4, 0)]).expect("alloc");
        s[1].set(333);
        begin(&mut table, devs, &[outer]).expect("mapper");
        assert_eq!(on_device(&table, devs, y), 222);
        end(&mut table, devs, &[arg(y, 4, mt::DELETE)]).expect("delete");
        assert!(table.iter().next().is_none());
    }

    /// A member of a mapping that this construct allocated but counted twice is not new
    /// (LLVM 22 as LLVM 19: the count decides, not who allocated it).
    #[test]
    fn a_member_of_a_mapping_counted_twice_copies_nothing() {
        let devs = host();
        let mut table = MappingTable::default();
        // Values device memory is most unlikely to hold already.
        let a = [0x5eed_0001i32, 0x5eed_0002, 0x5eed_0003, 0x5eed_0004];
        let begin_a = a.as_ptr() as usize;
        // One construct: alloc a (new, one reference), to a (two references, not new),
        // and a[1] as a member of the first entry.
        let args = [
            arg(begin_a, 16, 0),
            arg(begin_a, 16, mt::TO),
            arg(begin_a + 4, 4, mt::TO | (1 << 48)),
        ];
        begin(&mut table, devs, &args).expect("map");
        assert_eq!(table.get(begin_a).expect("a").total_refs(), 2);
        let copied: Vec<i32> = (0..4)
            .map(|i| on_device(&table, devs, begin_a + 4 * i))
            .collect();
        assert!(
            copied.iter().zip(&a).all(|(d, h)| d != h),
            "nothing copied: {copied:?}"
        );
        end(&mut table, devs, &[arg(begin_a, 16, mt::DELETE)]).expect("delete");
        assert!(table.iter().next().is_none());
    }
}
