//! `declare mapper`: clang compiles each mapper into a function that, given one
//! argument, pushes the entries it expands to through `__tgt_push_mapper_component`
//! (asking `__tgt_mapper_num_components` first, to number its `MEMBER_OF` fields after
//! the entries already pushed). The data operations then run on the components.

use crate::abi::MapArg;
use std::ffi::c_void;

/// The mapper function clang generates.
type MapperFn = unsafe extern "C" fn(
    handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    map_type: i64,
    name: *mut c_void,
);

/// The entries `arg`'s mapper expands it to.
pub fn expand(arg: &MapArg) -> Vec<MapArg> {
    let mut components: Vec<MapArg> = Vec::new();
    // SAFETY: a non-zero mapper is the address of a clang-generated mapper function
    // (LLVM's contract for `arg_mappers`); it only calls the two functions below with
    // the handle it is given, which points to `components` for the call's duration.
    unsafe {
        let mapper = std::mem::transmute::<usize, MapperFn>(arg.mapper);
        mapper(
            (&mut components as *mut Vec<MapArg>).cast(),
            arg.base as *mut c_void,
            arg.begin as *mut c_void,
            arg.size as i64,
            arg.map_type,
            arg.name as *mut c_void,
        );
    }
    components
}

/// How many components the mapper call behind `handle` has pushed so far.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
#[no_mangle]
pub unsafe extern "C" fn __tgt_mapper_num_components(handle: *mut c_void) -> i64 {
    // SAFETY: the handle is `expand`'s vector, alive during the mapper call.
    unsafe { handle.cast::<Vec<MapArg>>().as_ref() }.map_or(0, |c| c.len() as i64)
}

/// Adds one component to the mapper call behind `handle`.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
#[no_mangle]
pub unsafe extern "C" fn __tgt_push_mapper_component(
    handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    map_type: i64,
    name: *mut c_void,
) {
    // SAFETY: the handle is `expand`'s vector, alive during the mapper call.
    if let Some(components) = unsafe { handle.cast::<Vec<MapArg>>().as_mut() } {
        components.push(MapArg {
            base: base as usize,
            begin: begin as usize,
            size: usize::try_from(size).unwrap_or(0),
            map_type,
            mapper: 0,
            name: name as usize,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::map_type as mt;

    /// A mapper as clang would write one for `struct { int n; double *d; }` mapping
    /// `s.d[0:s.n]`: the struct, then the pointee attached to member `d`.
    unsafe extern "C" fn two_part_mapper(
        handle: *mut c_void,
        base: *mut c_void,
        begin: *mut c_void,
        _size: i64,
        map_type: i64,
        name: *mut c_void,
    ) {
        // SAFETY: test data: `begin` is a 16-byte struct.
        unsafe {
            let first = __tgt_mapper_num_components(handle);
            __tgt_push_mapper_component(handle, base, begin, 16, map_type, name);
            let member_of = (first + 1) << 48;
            let field = begin.cast::<u8>().add(8).cast::<c_void>();
            __tgt_push_mapper_component(
                handle,
                field,
                field,
                40,
                mt::TO | mt::PTR_AND_OBJ | member_of,
                name,
            );
        }
    }

    #[test]
    fn a_mapper_expands_into_its_pushed_components() {
        let storage = [0u8; 16];
        let begin = storage.as_ptr() as usize;
        let arg = MapArg {
            base: begin,
            begin,
            size: 16,
            map_type: mt::TO | mt::FROM,
            mapper: two_part_mapper as *const () as usize,
            name: 0,
        };
        let parts = expand(&arg);
        assert_eq!(parts.len(), 2);
        assert_eq!((parts[0].begin, parts[0].size), (begin, 16));
        assert_eq!(parts[1].begin, begin + 8);
        assert_eq!(parts[1].parent_index(), Some(0));
        assert!(parts[1].has(mt::PTR_AND_OBJ));
        assert_eq!(parts.iter().filter(|p| p.mapper != 0).count(), 0);
    }

    #[test]
    fn a_null_handle_is_harmless() {
        // SAFETY: NULL is allowed.
        unsafe {
            assert_eq!(__tgt_mapper_num_components(std::ptr::null_mut()), 0);
            __tgt_push_mapper_component(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                0,
                std::ptr::null_mut(),
            );
        }
    }
}
