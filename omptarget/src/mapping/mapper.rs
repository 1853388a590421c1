//! `declare mapper`: clang compiles each mapper into a function that, given one
//! argument, pushes the entries it expands to through `__tgt_push_mapper_component`
//! (asking `__tgt_mapper_num_components` first, to number its `MEMBER_OF` fields after
//! the entries already pushed). The data operations then run on the components.

use crate::abi::types::MapArg;
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

/// One pushed component, laid out as LLVM's `MapComponentInfoTy`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Component {
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    map_type: i64,
    name: *mut c_void,
}

/// What a handle points to, laid out as LLVM's `MapperComponentsTy`: a
/// `std::vector<MapComponentInfoTy>` (start, finish, end of storage), its storage from
/// `malloc`. Why not a Rust `Vec`: the handle's layout is part of the ABI in practice —
/// LLVM's own tests build that struct themselves, push through these entry points and
/// free the storage with the vector's destructor (`operator delete`, i.e. `free`).
#[repr(C)]
struct ComponentList {
    start: *mut Component,
    finish: *mut Component,
    end: *mut Component,
}

impl ComponentList {
    const EMPTY: ComponentList = ComponentList {
        start: std::ptr::null_mut(),
        finish: std::ptr::null_mut(),
        end: std::ptr::null_mut(),
    };

    fn len(&self) -> usize {
        (self.finish as usize - self.start as usize) / std::mem::size_of::<Component>()
    }

    fn capacity(&self) -> usize {
        (self.end as usize - self.start as usize) / std::mem::size_of::<Component>()
    }

    /// The pushed components.
    fn as_slice(&self) -> &[Component] {
        if self.start.is_null() {
            return &[];
        }
        // SAFETY: `start..finish` are initialised components of one malloc-ed block.
        unsafe { std::slice::from_raw_parts(self.start, self.len()) }
    }

    /// Appends one component, doubling the storage when full (false: out of memory).
    fn push(&mut self, component: Component) -> bool {
        let len = self.len();
        if self.finish == self.end {
            let capacity = (2 * self.capacity()).max(4);
            // SAFETY: `start` is NULL or a block from malloc/realloc (ours, or a
            // std::vector's from operator new, which is malloc's); realloc keeps `len`
            // components.
            let grown = unsafe {
                libc::realloc(
                    self.start.cast(),
                    capacity * std::mem::size_of::<Component>(),
                )
            }
            .cast::<Component>();
            if grown.is_null() {
                return false;
            }
            self.start = grown;
            // SAFETY: both within (or one past) the new block of `capacity` components.
            unsafe {
                self.finish = grown.add(len);
                self.end = grown.add(capacity);
            }
        }
        // SAFETY: `finish` is below `end`, inside the block.
        unsafe {
            self.finish.write(component);
            self.finish = self.finish.add(1);
        }
        true
    }
}

/// The entries `arg`'s mapper expands it to.
pub fn expand(arg: &MapArg) -> Vec<MapArg> {
    let mut list = ComponentList::EMPTY;
    // SAFETY: a non-zero mapper is the address of a clang-generated mapper function
    // (LLVM's contract for `arg_mappers`); it only calls the two functions below with
    // the handle it is given, which points to `list` for the call's duration.
    unsafe {
        let mapper = std::mem::transmute::<usize, MapperFn>(arg.mapper);
        mapper(
            (&mut list as *mut ComponentList).cast(),
            arg.base as *mut c_void,
            arg.begin as *mut c_void,
            arg.size as i64,
            arg.map_type,
            arg.name as *mut c_void,
        );
    }
    let components = list
        .as_slice()
        .iter()
        .map(|c| MapArg {
            base: c.base as usize,
            begin: c.begin as usize,
            size: usize::try_from(c.size).unwrap_or(0),
            map_type: c.map_type,
            mapper: 0,
            name: c.name as usize,
        })
        .collect();
    // SAFETY: NULL or the block `push` allocated, no longer referred to.
    unsafe { libc::free(list.start.cast()) };
    components
}

/// How many components the mapper call behind `handle` has pushed so far.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
pub unsafe fn component_count(handle: *mut c_void) -> i64 {
    // SAFETY: the handle points to a component list (`expand`'s, or a caller's
    // std::vector of LLVM's layout), alive during the call.
    unsafe { handle.cast::<ComponentList>().as_ref() }.map_or(0, |c| c.len() as i64)
}

/// Adds one component to the mapper call behind `handle`.
///
/// # Safety
/// `handle` is the handle a mapper function was called with (or NULL).
pub unsafe fn push_component(
    handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    map_type: i64,
    name: *mut c_void,
) {
    // SAFETY: as in `component_count`.
    if let Some(list) = unsafe { handle.cast::<ComponentList>().as_mut() } {
        let _ = list.push(Component {
            base,
            begin,
            size,
            map_type,
            name,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::types::map_type as mt;
    use crate::report::boundary::boundary;

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
        boundary("two_part_mapper", || {
            // SAFETY: test data: `begin` is a 16-byte struct.
            unsafe {
                let first = component_count(handle);
                push_component(handle, base, begin, 16, map_type, name);
                let member_of = (first + 1) << 48;
                let field = begin.cast::<u8>().add(8).cast::<c_void>();
                push_component(
                    handle,
                    field,
                    field,
                    40,
                    mt::TO | mt::PTR_AND_OBJ | member_of,
                    name,
                );
            }
        })
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
    fn a_caller_built_list_grows_in_malloc_storage() {
        let mut list = ComponentList::EMPTY;
        let handle = (&mut list as *mut ComponentList).cast::<c_void>();
        // SAFETY: `handle` is a live, empty list.
        unsafe {
            for i in 0..9 {
                push_component(
                    handle,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    i,
                    0,
                    std::ptr::null_mut(),
                );
            }
            assert_eq!(component_count(handle), 9);
        }
        assert_eq!(list.as_slice()[8].size, 8);
        // SAFETY: the block `push` allocated.
        unsafe { libc::free(list.start.cast()) };
    }

    #[test]
    fn a_null_handle_is_harmless() {
        // SAFETY: NULL is allowed.
        unsafe {
            assert_eq!(component_count(std::ptr::null_mut()), 0);
            push_component(
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
