//! `omp_target_memcpy_rect`: copies a rectangular sub-volume of an N-dimensional array
//! (row-major, C layout) between any two devices. LLVM recurses one dimension at a
//! time and ends in one `omp_target_memcpy` per innermost row; here the volume is first
//! cut into its contiguous runs (rows that touch in both arrays merge into one), so a
//! sub-volume made of whole rows becomes one copy, then each run is one `olMemcpy`.

use crate::abi::types::OFFLOAD_FAIL;
use crate::omp_api::device_api::memory_device;
use crate::plugin::ol;
use crate::report::boundary::boundary;
use crate::report::policy::message;
use std::ffi::{c_int, c_void};

/// One contiguous piece of a rectangular copy: byte offsets from the destination's and
/// the source's base, and its length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
}

/// A rectangular copy as `omp_target_memcpy_rect` describes it: every slice has one
/// entry per dimension, outermost first. `dst_dims[0]` and `src_dims[0]` are not needed
/// (the outermost dimension's extent never enters an offset), as in LLVM.
#[derive(Clone, Copy, Debug)]
pub struct Rect<'a> {
    pub element_size: usize,
    pub volume: &'a [usize],
    pub dst_offsets: &'a [usize],
    pub src_offsets: &'a [usize],
    pub dst_dims: &'a [usize],
    pub src_dims: &'a [usize],
}

/// Some offset or size of the copy does not fit in the address space.
#[derive(Debug, PartialEq, Eq)]
pub struct Overflow;

/// The byte stride of each dimension of an array with extents `dims`.
fn strides(element_size: usize, dims: &[usize]) -> Result<Vec<usize>, Overflow> {
    let mut strides = vec![0; dims.len()];
    let mut stride = element_size;
    for d in (0..dims.len()).rev() {
        strides[d] = stride;
        if d > 0 {
            stride = stride.checked_mul(dims[d]).ok_or(Overflow)?;
        }
    }
    Ok(strides)
}

/// The byte offset of the element `offsets + index` (index per dimension).
fn byte_offset(offsets: &[usize], index: &[usize], strides: &[usize]) -> usize {
    (0..strides.len())
        .map(|d| (offsets[d] + index[d]) * strides[d])
        .sum()
}

/// The highest byte offset one side touches, checked, so that `byte_offset` can then
/// compute every offset of the copy without overflow.
fn check_extent(
    offsets: &[usize],
    volume: &[usize],
    strides: &[usize],
    run: usize,
) -> Result<(), Overflow> {
    let mut last = run;
    for d in 0..strides.len() {
        let index = offsets[d].checked_add(volume[d] - 1).ok_or(Overflow)?;
        let bytes = index.checked_mul(strides[d]).ok_or(Overflow)?;
        last = last.checked_add(bytes).ok_or(Overflow)?;
    }
    Ok(())
}

/// Every contiguous run of the copy, in row-major order; consecutive rows that are
/// adjacent in both arrays are merged. An empty volume has no run.
pub fn runs(rect: &Rect) -> Result<Vec<Run>, Overflow> {
    let n = rect.volume.len();
    if n == 0 || rect.volume.contains(&0) || rect.element_size == 0 {
        return Ok(Vec::new());
    }
    let dst_strides = strides(rect.element_size, rect.dst_dims)?;
    let src_strides = strides(rect.element_size, rect.src_dims)?;
    let run_len = rect.volume[n - 1]
        .checked_mul(rect.element_size)
        .ok_or(Overflow)?;
    check_extent(rect.dst_offsets, rect.volume, &dst_strides, run_len)?;
    check_extent(rect.src_offsets, rect.volume, &src_strides, run_len)?;

    let mut runs: Vec<Run> = Vec::new();
    // An odometer over every dimension but the innermost (which is the run itself).
    let mut index = vec![0usize; n];
    loop {
        let run = Run {
            dst: byte_offset(rect.dst_offsets, &index, &dst_strides),
            src: byte_offset(rect.src_offsets, &index, &src_strides),
            len: run_len,
        };
        match runs.last_mut() {
            Some(last) if last.dst + last.len == run.dst && last.src + last.len == run.src => {
                last.len += run.len;
            }
            _ => runs.push(run),
        }
        let mut d = n - 1;
        loop {
            if d == 0 {
                return Ok(runs);
            }
            d -= 1;
            index[d] += 1;
            if index[d] < rect.volume[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

fn invalid() -> c_int {
    message("error: Call to omp_target_memcpy_rect with invalid arguments");
    OFFLOAD_FAIL
}

/// Copies a rectangular sub-volume between `src` on `src_device` and `dst` on
/// `dst_device`; 0 on success. With both `dst` and `src` NULL it answers the number of
/// dimensions supported: INT_MAX, as LLVM (any number).
///
/// # Safety
/// Each non-NULL array holds `num_dims` elements; `dst` and `src` are memory of their
/// devices covering the sub-volume.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn omp_target_memcpy_rect(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    boundary("omp_target_memcpy_rect", || {
        if dst.is_null() && src.is_null() {
            return c_int::MAX;
        }
        let arrays = [
            volume,
            dst_offsets,
            src_offsets,
            dst_dimensions,
            src_dimensions,
        ];
        if dst.is_null()
            || src.is_null()
            || element_size < 1
            || num_dims < 1
            || arrays.iter().any(|a| a.is_null())
        {
            return invalid();
        }
        let n = num_dims as usize;
        let [volume, dst_offsets, src_offsets, dst_dims, src_dims] = arrays.map(|a| {
            // SAFETY: each array is non-NULL and holds `num_dims` elements (the caller's
            // promise).
            unsafe { std::slice::from_raw_parts(a, n) }
        });
        let rect = Rect {
            element_size,
            volume,
            dst_offsets,
            src_offsets,
            dst_dims,
            src_dims,
        };
        let Ok(runs) = runs(&rect) else {
            return invalid();
        };
        if runs.is_empty() {
            return 0;
        }
        let (Some(to), Some(from)) = (memory_device(dst_device), memory_device(src_device)) else {
            message(&format!(
                "error: omp_target_memcpy_rect between devices {src_device} and {dst_device}: no such device"
            ));
            return OFFLOAD_FAIL;
        };
        let (dst, src) = (dst as usize, src as usize);
        for run in runs {
            let copied = match (dst.checked_add(run.dst), src.checked_add(run.src)) {
                (Some(d), Some(s)) => ol::memcpy(d, to, s, from, run.len),
                _ => Err("a run's address overflows".to_string()),
            };
            if let Err(e) = copied {
                message(&format!("error: omp_target_memcpy_rect: {e}"));
                return OFFLOAD_FAIL;
            }
        }
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect<'a>(
        element_size: usize,
        volume: &'a [usize],
        dst_offsets: &'a [usize],
        src_offsets: &'a [usize],
        dst_dims: &'a [usize],
        src_dims: &'a [usize],
    ) -> Rect<'a> {
        Rect {
            element_size,
            volume,
            dst_offsets,
            src_offsets,
            dst_dims,
            src_dims,
        }
    }

    #[test]
    fn one_dimension_is_one_run() {
        let r = rect(4, &[5], &[2], &[3], &[10], &[10]);
        assert_eq!(
            runs(&r).unwrap(),
            vec![Run {
                dst: 8,
                src: 12,
                len: 20
            }]
        );
    }

    #[test]
    fn two_dimensions_make_one_run_per_row() {
        // A 2x3 block at (1,2) of a 4x8 source into (0,1) of a 3x5 destination.
        let r = rect(1, &[2, 3], &[0, 1], &[1, 2], &[3, 5], &[4, 8]);
        assert_eq!(
            runs(&r).unwrap(),
            vec![
                Run {
                    dst: 1,
                    src: 10,
                    len: 3
                },
                Run {
                    dst: 6,
                    src: 18,
                    len: 3
                },
            ]
        );
    }

    #[test]
    fn whole_rows_merge_into_one_run() {
        // Rows 1..3 of two 4x6 arrays of 8-byte elements: one 96-byte run.
        let r = rect(8, &[2, 6], &[1, 0], &[1, 0], &[4, 6], &[4, 6]);
        assert_eq!(
            runs(&r).unwrap(),
            vec![Run {
                dst: 48,
                src: 48,
                len: 96
            }]
        );
        // Rows adjacent in the source only do not merge.
        let r = rect(1, &[2, 4], &[0, 0], &[0, 0], &[2, 5], &[2, 4]);
        assert_eq!(runs(&r).unwrap().len(), 2);
    }

    #[test]
    fn three_dimensions_walk_in_row_major_order() {
        let r = rect(
            2,
            &[2, 2, 3],
            &[0, 0, 0],
            &[1, 1, 1],
            &[2, 2, 3],
            &[3, 4, 5],
        );
        let got = runs(&r).unwrap();
        // Destination rows are adjacent (a dense 2x2x3 block) but source rows are not,
        // so nothing merges. Source rows start at ((1+i)*4*5 + (1+j)*5 + 1) * 2.
        assert_eq!(got.len(), 4);
        let expected_src: Vec<usize> = [(0, 0), (0, 1), (1, 0), (1, 1)]
            .iter()
            .map(|&(i, j)| ((1 + i) * 20 + (1 + j) * 5 + 1) * 2)
            .collect();
        assert_eq!(got.iter().map(|r| r.src).collect::<Vec<_>>(), expected_src);
        assert_eq!(
            got.iter().map(|r| r.dst).collect::<Vec<_>>(),
            vec![0, 6, 12, 18]
        );
        assert!(got.iter().all(|r| r.len == 6));
    }

    #[test]
    fn empty_volumes_have_no_run() {
        assert!(runs(&rect(4, &[0, 3], &[0, 0], &[0, 0], &[2, 3], &[2, 3]))
            .unwrap()
            .is_empty());
        assert!(runs(&rect(4, &[2, 0], &[0, 0], &[0, 0], &[2, 3], &[2, 3]))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn overflowing_offsets_are_refused() {
        let big = usize::MAX / 2;
        assert_eq!(
            runs(&rect(4, &[2, 2], &[big, 0], &[0, 0], &[4, 4], &[4, 4])),
            Err(Overflow)
        );
        assert_eq!(
            runs(&rect(8, &[1, 1], &[0, 0], &[0, 0], &[1, big], &[1, 1])),
            Err(Overflow)
        );
    }
}
