//! Calling a host kernel with the platform's C calling convention (x86-64 System V on
//! this library's hosts), for launches whose argument buffer is the kernel's parameters
//! laid out as a C struct (`KernelArgs::c_parameters`: clang's `-foffload-via-llvm`
//! launches, through libomptarget's kernel-language API).
//!
//! LLVM's host convention (one pointer-sized integer per parameter) cannot carry a
//! `float`, a `double` or a struct: the callee reads those from vector registers, or
//! from eightbytes classified by their fields. Here the call is made from the kernel's
//! real parameter types, which libffi turns into registers and stack slots as the ABI
//! says (it classifies each struct of 16 bytes or less into INTEGER and SSE eightbytes,
//! and passes larger ones in memory).
//!
//! Where the types come from: the image is an ELF shared object whose only record of a
//! kernel's signature is its Itanium-mangled name (`mangled`), plus DWARF when the
//! program was built with `-g` (`debug_types`). clang's launch itself carries only the
//! packed bytes and their total size, and the host-target image has no argument
//! metadata (unlike an AMDGPU code object). The mangled name gives every builtin type
//! and every pointer exactly, but a class or enum by value only by its name: whether it
//! is an enum (an integer), a struct of floats (SSE registers), of integers (general
//! registers), or a class with a non-trivial copy constructor or destructor (passed by
//! address) cannot be told from a name or from the bytes. Those, and kernels with no
//! mangled name (`extern "C"`), are read from DWARF when the image has it, and refused
//! otherwise: a refusal names the parameter and says how to make it known, where a
//! guess would run the kernel with wrong values.

use super::debug_types::DebugInfo;
use super::mangled::{self, Param, Reading};
use crate::plugin::foundation::error::{Error, ErrorCode, Result};
use libffi::middle::{Cif, Type};
use std::os::raw::c_void;

/// A parameter type as the calling convention sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    /// An integer of 1, 2, 4 or 8 bytes (bool, characters and enums included).
    Int {
        size: usize,
        signed: bool,
    },
    F32,
    F64,
    /// x87 extended precision, in 16 bytes.
    LongDouble,
    /// A data or function pointer, or a reference.
    Pointer,
    /// A struct or class passed by value, its fields at their offsets.
    Struct(Struct),
    /// A class the C++ ABI passes by address (a non-trivial copy or move constructor or
    /// destructor): the buffer holds the object, the callee takes a pointer to a copy.
    ByAddress {
        name: String,
        size: usize,
        align: usize,
    },
}

/// A struct whose layout is the natural one of its fields (checked by `Struct::new`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Struct {
    pub name: String,
    pub size: usize,
    pub align: usize,
    pub fields: Vec<CType>,
}

impl Struct {
    /// The struct named `name` of `size` bytes with `fields` at the given offsets, if
    /// that is the layout a C compiler gives those fields without attributes (what a
    /// libffi struct describes); a packed or over-aligned one is refused.
    pub fn new(
        name: &str,
        size: usize,
        fields: Vec<(usize, CType)>,
    ) -> std::result::Result<Struct, String> {
        if fields.is_empty() {
            return Err(format!("'{name}' has no fields (an empty class)"));
        }
        let mut end = 0usize;
        let mut align = 1usize;
        for (offset, field) in &fields {
            if let CType::ByAddress { name: class, .. } = field {
                return Err(format!(
                    "'{name}' has a field of class '{class}', passed by address"
                ));
            }
            let natural = end.next_multiple_of(field.align());
            if *offset != natural {
                return Err(format!(
                    "'{name}' has a field at byte {offset} where its natural layout puts it \
                     at {natural} (a packed or over-aligned struct)"
                ));
            }
            end = natural + field.size();
            align = align.max(field.align());
        }
        if end.next_multiple_of(align) != size {
            return Err(format!(
                "'{name}' is {size} bytes, where its fields' natural layout makes {} (a \
                 packed or over-aligned struct)",
                end.next_multiple_of(align)
            ));
        }
        Ok(Struct {
            name: name.to_string(),
            size,
            align,
            fields: fields.into_iter().map(|(_, f)| f).collect(),
        })
    }
}

impl CType {
    pub fn size(&self) -> usize {
        match self {
            CType::Int { size, .. } => *size,
            CType::F32 => 4,
            CType::F64 | CType::Pointer => 8,
            CType::LongDouble => 16,
            CType::Struct(s) => s.size,
            CType::ByAddress { size, .. } => *size,
        }
    }

    pub fn align(&self) -> usize {
        match self {
            CType::Struct(s) => s.align,
            CType::ByAddress { align, .. } => *align,
            other => other.size(),
        }
    }

    /// How libffi passes it.
    fn ffi(&self) -> Type {
        match self {
            CType::Int { size: 1, signed } => pick(*signed, Type::i8, Type::u8),
            CType::Int { size: 2, signed } => pick(*signed, Type::i16, Type::u16),
            CType::Int { size: 4, signed } => pick(*signed, Type::i32, Type::u32),
            CType::Int { signed, .. } => pick(*signed, Type::i64, Type::u64),
            CType::F32 => Type::f32(),
            CType::F64 => Type::f64(),
            CType::LongDouble => Type::longdouble(),
            CType::Pointer | CType::ByAddress { .. } => Type::pointer(),
            CType::Struct(s) => Type::structure(s.fields.iter().map(CType::ffi)),
        }
    }
}

fn pick(signed: bool, yes: fn() -> Type, no: fn() -> Type) -> Type {
    if signed {
        yes()
    } else {
        no()
    }
}

/// A kernel's parameters and where each lies in the packed arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<CType>,
    pub offsets: Vec<usize>,
    /// The end of the last parameter, and that rounded up to the largest alignment
    /// (clang passes the latter: the size of the struct of the parameters).
    pub end: usize,
    pub size: usize,
}

/// Arguments are realigned to this; no parameter type here needs more.
const BUFFER_ALIGN: usize = 16;

impl Signature {
    pub fn new(params: Vec<CType>) -> Signature {
        let mut offsets = Vec::with_capacity(params.len());
        let (mut end, mut align) = (0usize, 1usize);
        for p in &params {
            let offset = end.next_multiple_of(p.align());
            offsets.push(offset);
            end = offset + p.size();
            align = align.max(p.align());
        }
        Signature {
            params,
            offsets,
            end,
            size: end.next_multiple_of(align),
        }
    }

    /// Whether `len` bytes are these parameters (with or without tail padding).
    pub fn fits(&self, len: usize) -> bool {
        len == self.size || len == self.end
    }
}

/// The signature of kernel `name`: from its mangled name where that gives every type,
/// else from the image's debug information; refused (`Unsupported`) where neither can
/// tell.
pub fn signature(name: &str, debug: Option<&DebugInfo>) -> Result<Signature> {
    let unsupported = |why: String| Error::new(ErrorCode::Unsupported, why);
    let named = match mangled::parameters(name) {
        Reading::Params(params) => {
            let mut known = Vec::with_capacity(params.len());
            let mut first_class = None;
            for p in &params {
                match p {
                    Param::Known(t) => known.push(t.clone()),
                    Param::Named(class) => {
                        first_class.get_or_insert(class.clone());
                    }
                }
            }
            match first_class {
                None => return Ok(Signature::new(known)),
                Some(class) => Some((class, params.len())),
            }
        }
        Reading::Unsupported(what) => {
            return Err(unsupported(format!(
                "kernel '{name}' takes {what}, which the host device cannot pass"
            )))
        }
        Reading::Unknown => None,
    };
    let from_debug = match debug {
        Some(d) => d.parameters(name).map_err(|why| {
            unsupported(format!(
                "kernel '{name}': its parameter types cannot be read from the program's \
                 debug information: {why}"
            ))
        })?,
        None => None,
    };
    match (from_debug, named) {
        (Some(params), Some((_, count))) if params.len() != count => Err(unsupported(format!(
            "kernel '{name}': its debug information gives {} parameters, its mangled name \
             {count}",
            params.len()
        ))),
        (Some(params), _) => {
            if let Some(p) = params.iter().find(|p| p.align() > BUFFER_ALIGN) {
                return Err(unsupported(format!(
                    "kernel '{name}' takes a parameter aligned to {} bytes (at most \
                     {BUFFER_ALIGN} are supported)",
                    p.align()
                )));
            }
            Ok(Signature::new(params))
        }
        (None, Some((class, _))) => Err(unsupported(format!(
            "kernel '{name}' takes '{class}' by value; the program image does not say how \
             '{class}' is laid out (a struct of floats, of integers, an enum, or a class \
             passed by address are called differently): build the program with -g, whose \
             debug information says, or pass it by pointer"
        ))),
        (None, None) => Err(unsupported(format!(
            "kernel '{name}' has no C++ mangled name this library reads (extern \"C\", or a \
             form it does not follow), so the program image does not say its parameter \
             types: build the program with -g, whose debug information says, or give the \
             kernel C++ linkage"
        ))),
    }
}

/// Bytes at a 16-byte boundary.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned([u8; BUFFER_ALIGN]);

/// Calls the function at `address` as `void f(<signature>)` with the parameters in
/// `bytes` (which `signature.fits`).
pub fn call(address: usize, signature: &Signature, bytes: &[u8]) -> Result<()> {
    if !signature.fits(bytes.len()) {
        return Err(Error::invalid_argument(format!(
            "the kernel's parameters take {} bytes, ArgumentsSize is {}",
            signature.size,
            bytes.len()
        )));
    }
    let mut copy = vec![Aligned([0; BUFFER_ALIGN]); bytes.len().div_ceil(BUFFER_ALIGN)];
    for (block, chunk) in copy.iter_mut().zip(bytes.chunks(BUFFER_ALIGN)) {
        block.0[..chunk.len()].copy_from_slice(chunk);
    }
    let base: *mut u8 = copy.as_mut_ptr().cast();
    // A class passed by address: the callee gets the address of the copy in `copy`.
    let mut addresses: Vec<*mut u8> = signature
        .offsets
        .iter()
        // `wrapping_add`: no dereference here; each offset is within `copy` (checked by
        // `fits`), which is what makes the pointers valid for the call below.
        .map(|&o| base.wrapping_add(o))
        .collect();
    let mut values: Vec<*mut c_void> = signature
        .params
        .iter()
        .zip(addresses.iter_mut())
        .map(|(p, at)| match p {
            CType::ByAddress { .. } => (at as *mut *mut u8).cast(),
            _ => at.cast(),
        })
        .collect();
    let cif = Cif::new(signature.params.iter().map(CType::ffi), Type::void());
    let mut ignored_result = [0u64; 4];
    // SAFETY: `address` is the kernel's entry point (from dlsym, kept mapped by the
    // kernel's library). Its parameters are `signature.params` (from its mangled name or
    // its debug information), which `cif` describes, returning void. Each entry of
    // `values` points to a value of its parameter's type: into `copy`, 16-byte aligned,
    // which holds every parameter (`fits`) at its natural alignment (at most 16:
    // mangled-name types are, and `signature` refuses more from debug information), or, for a class passed by address, to a pointer to the object in `copy`.
    // `copy`, `addresses` and `values` outlive the call; the result buffer is never
    // written for a void function.
    unsafe {
        let function: unsafe extern "C" fn() = std::mem::transmute(address);
        libffi::raw::ffi_call(
            cif.as_raw_ptr(),
            Some(function),
            ignored_result.as_mut_ptr().cast(),
            values.as_mut_ptr(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT: CType = CType::Int {
        size: 4,
        signed: true,
    };
    const LONG: CType = CType::Int {
        size: 8,
        signed: true,
    };

    #[test]
    fn parameters_lie_at_their_c_offsets() {
        // (int *a, int x, long y, double z): clang's { ptr, i32, i64, double }.
        let s = Signature::new(vec![CType::Pointer, INT, LONG, CType::F64]);
        assert_eq!(
            (s.offsets.clone(), s.end, s.size),
            (vec![0, 8, 16, 24], 32, 32)
        );
        // (long *p, int n): 12 bytes of parameters, 16 with tail padding.
        let s = Signature::new(vec![CType::Pointer, INT]);
        assert!(s.fits(16) && s.fits(12) && !s.fits(8) && !s.fits(24));
        let s = Signature::new(vec![]);
        assert!(s.fits(0));
    }

    #[test]
    fn structs_must_have_their_natural_layout() {
        let p = Struct::new("P", 8, vec![(0, CType::F32), (4, INT)]).unwrap();
        assert_eq!((p.size, p.align), (8, 4));
        let q = Struct::new("Q", 16, vec![(0, CType::F64), (8, CType::F64)]).unwrap();
        let s = Signature::new(vec![CType::Struct(q), CType::Pointer]);
        assert_eq!((s.offsets.clone(), s.size), (vec![0, 16], 24));
        // char then int at 1: packed.
        let c = CType::Int {
            size: 1,
            signed: true,
        };
        assert!(Struct::new("Packed", 5, vec![(0, c.clone()), (1, INT)])
            .unwrap_err()
            .contains("packed"));
        // alignas(16) around one int.
        assert!(Struct::new("Over", 16, vec![(0, INT)])
            .unwrap_err()
            .contains("over-aligned"));
        assert!(Struct::new("Empty", 1, vec![]).is_err());
    }

    extern "C" fn mixed(a: *mut f64, x: i32, y: i64, z: f64) {
        // SAFETY: the test passes a valid pointer.
        unsafe { *a = f64::from(x) + y as f64 + z };
    }

    #[repr(C)]
    #[derive(Clone, Copy)]
    struct P {
        x: f32,
        n: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Q {
        a: f64,
        b: f64,
    }

    extern "C" fn structs(p: P, f: f32, q: Q, out: *mut f64) {
        // SAFETY: the test passes a valid pointer.
        unsafe { *out = f64::from(p.x) * f64::from(p.n) + f64::from(f) + q.a - q.b };
    }

    fn bytes<T: Copy>(values: &[(usize, &T)], size: usize) -> Vec<u8> {
        let mut out = vec![0u8; size];
        for (offset, v) in values {
            let n = std::mem::size_of::<T>();
            // SAFETY: `v` is a plain Copy value of `n` bytes.
            let raw = unsafe { std::slice::from_raw_parts((*v as *const T).cast::<u8>(), n) };
            out[*offset..*offset + n].copy_from_slice(raw);
        }
        out
    }

    #[test]
    fn calls_with_floating_point_and_mixed_widths() {
        let mut result = 0f64;
        let s = Signature::new(vec![CType::Pointer, INT, LONG, CType::F64]);
        let mut buf = bytes(&[(0, &(&mut result as *mut f64 as usize))], 32);
        buf[8..12].copy_from_slice(&7i32.to_ne_bytes());
        buf[16..24].copy_from_slice(&(-3i64).to_ne_bytes());
        buf[24..32].copy_from_slice(&0.5f64.to_ne_bytes());
        call(mixed as *const () as usize, &s, &buf).unwrap();
        assert_eq!(result, 4.5);
        assert!(call(mixed as *const () as usize, &s, &buf[..24])
            .unwrap_err()
            .to_string()
            .contains("take 32 bytes"));
    }

    #[test]
    fn calls_with_small_structs_by_value() {
        let mut result = 0f64;
        let p = Struct::new("P", 8, vec![(0, CType::F32), (4, INT)]).unwrap();
        let q = Struct::new("Q", 16, vec![(0, CType::F64), (8, CType::F64)]).unwrap();
        let s = Signature::new(vec![
            CType::Struct(p),
            CType::F32,
            CType::Struct(q),
            CType::Pointer,
        ]);
        assert_eq!(s.offsets, vec![0, 8, 16, 32]);
        let mut buf = bytes(&[(0, &P { x: 1.5, n: 4 })], 40);
        buf[8..12].copy_from_slice(&0.25f32.to_ne_bytes());
        buf[16..32].copy_from_slice(&bytes(&[(0, &Q { a: 10.0, b: 2.0 })], 16));
        buf[32..40].copy_from_slice(&(&mut result as *mut f64 as usize).to_ne_bytes());
        call(structs as *const () as usize, &s, &buf).unwrap();
        assert_eq!(result, 6.0 + 0.25 + 8.0);
    }
}
