//! `target update`: copies `to` / `from` for every argument that is mapped (an unmapped
//! one is skipped unless it carries `present`), keeping attached pointers right on both
//! sides; strided (non-contiguous) sections are copied piece by piece; `declare mapper`
//! arguments are expanded first. LLVM's `targetDataUpdate`.

use crate::abi::types::{map_type as mt, MapArg, NonContiguousDim};
use crate::mapping::data;
use crate::mapping::info_lines;
use crate::mapping::mapper;
use crate::mapping::table::MappingTable;
use crate::mapping::transfer;
use crate::mapping::transfer::{Devices, Failed};
use crate::report::policy::message;

pub fn update(table: &MappingTable, devs: Devices, args: &[MapArg]) -> Result<(), Failed> {
    for arg in args.iter().filter(|a| data::is_mapped(a)) {
        if arg.mapper != 0 {
            update(table, devs, &mapper::expand(arg)).inspect_err(|_| {
                message("error: Call to targetDataUpdate via targetDataMapper for custom mapper failed.");
            })?;
        } else if arg.has(mt::NON_CONTIG) {
            non_contiguous(table, devs, arg)?;
        } else {
            contiguous(table, devs, arg.begin, arg.size, arg.map_type)?;
        }
    }
    Ok(())
}

fn contiguous(
    table: &MappingTable,
    devs: Devices,
    begin: usize,
    size: usize,
    flags: i64,
) -> Result<(), Failed> {
    let Some((_, m)) = info_lines::find_mapping(devs.number, table, begin, size, true) else {
        if flags & mt::PRESENT != 0 {
            message(&format!(
                "message: device mapping required by 'present' motion modifier does not exist for host address 0x{begin:016x} ({size} bytes)"
            ));
            return Err(Failed);
        }
        return Ok(());
    };
    let device_begin = m.device_address(begin);
    if flags & mt::TO != 0 {
        transfer::to_device(devs, device_begin, begin, size, m.name)?;
        transfer::apply_device_shadows(devs, m)?;
    }
    if flags & mt::FROM != 0 {
        transfer::to_host(devs, begin, device_begin, size, m.name)?;
        transfer::restore_host_shadows(m);
    }
    Ok(())
}

/// The byte offsets (from the base) and the length of the contiguous pieces of a
/// strided section, as LLVM cuts it: trailing dimensions that are contiguous with the
/// one before are merged away; in the innermost remaining dimension one piece (its
/// first element) stands for the whole run.
pub fn pieces(dims: &[NonContiguousDim]) -> (Vec<u64>, u64) {
    let Some(last) = dims.last() else {
        return (Vec::new(), 0);
    };
    let length = last.count.wrapping_mul(last.stride);
    let merged = (1..dims.len())
        .filter(|&i| dims[i].count.wrapping_mul(dims[i].stride) == dims[i - 1].stride)
        .count();
    let mut offsets = Vec::new();
    collect(&dims[..dims.len() - merged], 0, &mut offsets);
    (offsets, length)
}

fn collect(dims: &[NonContiguousDim], offset: u64, out: &mut Vec<u64>) {
    let Some((dim, rest)) = dims.split_first() else {
        out.push(offset);
        return;
    };
    let count = if rest.is_empty() {
        dim.count.min(1)
    } else {
        dim.count
    };
    for i in 0..count {
        let step = dim.offset.wrapping_add(i).wrapping_mul(dim.stride);
        collect(rest, offset.wrapping_add(step), out);
    }
}

fn non_contiguous(table: &MappingTable, devs: Devices, arg: &MapArg) -> Result<(), Failed> {
    if arg.begin == 0 || arg.size == 0 {
        return Ok(());
    }
    // SAFETY: for NON_CONTIG entries clang passes, as the "begin", an array of `size`
    // dimension descriptors (LLVM's `__tgt_target_non_contig`).
    let dims =
        unsafe { std::slice::from_raw_parts(arg.begin as *const NonContiguousDim, arg.size) };
    let (offsets, length) = pieces(dims);
    offsets.into_iter().try_for_each(|offset| {
        let begin = arg.base.wrapping_add(offset as usize);
        contiguous(table, devs, begin, length as usize, arg.map_type)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(offset: u64, count: u64, stride: u64) -> NonContiguousDim {
        NonContiguousDim {
            offset,
            count,
            stride,
        }
    }

    #[test]
    fn a_strided_1d_section_is_one_piece_per_element() {
        // int a[16]; update a[2:3:4] (offset 2, count 3, stride 4 elements = 16 bytes),
        // then the element itself (4 bytes).
        let (offsets, length) = pieces(&[dim(2, 3, 16), dim(0, 1, 4)]);
        assert_eq!(offsets, vec![32, 48, 64]);
        assert_eq!(length, 4);
    }

    #[test]
    fn rows_of_a_2d_section_are_pieces() {
        // int a[4][8]; update a[1:2][2:3]: rows of 32 bytes, 3 ints from column 2.
        let (offsets, length) = pieces(&[dim(1, 2, 32), dim(2, 3, 4)]);
        assert_eq!(offsets, vec![32 + 8, 64 + 8]);
        assert_eq!(length, 12);
    }

    #[test]
    fn no_dimensions_no_pieces() {
        assert_eq!(pieces(&[]), (Vec::new(), 0));
    }
}
