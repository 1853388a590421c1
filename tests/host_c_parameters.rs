//! Host kernels called with the C calling convention from their parameter types, for
//! launches whose arguments are their C parameters (`KernelArgs::c_parameters`, what
//! clang's kernel-language launches pass): types from mangled names, and from DWARF for
//! classes by value and `extern "C"` kernels; refused where neither tells.

mod host_support;

use host_support::*;
use offload::plugin::foundation::error::ErrorCode;
use offload::plugin::{KernelArgs, Program};
use std::sync::Arc;

/// `c-tests/kernels/c_parameters.cc` built by `compiler` with `flags`; `None` (the test
/// is skipped, saying so) when that compiler is missing.
fn build(compiler: &str, flags: &[&str]) -> Option<Arc<dyn Program>> {
    let mut args = vec!["-shared", "-fPIC", "-O1", "-Wall", "-Werror"];
    args.extend(flags);
    args.push("c-tests/kernels/c_parameters.cc");
    match build_with(compiler, &args) {
        Some(bytes) => Some(load(&bytes)),
        None => {
            eprintln!("skipped: {compiler} {} did not build", flags.join(" "));
            None
        }
    }
}

/// The C-struct buffer of `values` (each at its alignment), flagged as C parameters.
fn c_args(values: &[(Vec<u8>, usize)]) -> KernelArgs {
    let mut a = KernelArgs::from_values(values.iter().map(|(v, al)| (v.as_slice(), *al)));
    a.c_parameters = true;
    a
}

fn ptr<T>(p: *mut T) -> (Vec<u8>, usize) {
    (bytes_of(&(p as usize)), 8)
}

fn val<T: Copy>(v: T) -> (Vec<u8>, usize) {
    (bytes_of(&v), std::mem::align_of::<T>())
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
#[repr(C)]
#[derive(Clone, Copy)]
struct Big {
    a: i64,
    b: i64,
    c: i64,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct Inner {
    f: [f32; 3],
    c: i8,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct Outer {
    inner: Inner,
    s: i16,
}

fn run(
    program: &dyn Program,
    name: &str,
    args: &KernelArgs,
) -> offload::plugin::foundation::error::Result<()> {
    let k = program.kernel(name)?;
    k.check_args(args)?;
    k.launch(&grid1(1, 1), args)
}

/// Every kernel that needs no debug information.
fn check_mangled(program: &dyn Program) {
    let mut a = [0i32; 3];
    run(
        program,
        "_Z5mixedPiild",
        &c_args(&[
            ptr(a.as_mut_ptr()),
            val(-7i32),
            val(10_000_000_042i64),
            val(2.25f64),
        ]),
    )
    .unwrap();
    assert_eq!(a, [-7, 42, 9]);
    let mut out = 0f64;
    run(
        program,
        "_Z6floatsfdePd",
        &c_args(&[
            val(0.5f32),
            val(0.25f64),
            (bytes_of(&[0u8; 16]), 16),
            ptr(&mut out),
        ]),
    )
    .unwrap();
    assert_eq!(out, 0.75);
    let (mut x, mut y) = (2.0f64, 1.0f64);
    run(
        program,
        "_Z4axpyIdEvT_PS0_S1_",
        &c_args(&[val(3.0f64), ptr(&mut x), ptr(&mut y)]),
    )
    .unwrap();
    assert_eq!(y, 7.0);
    // The wrong size is refused before anything runs.
    let short = c_args(&[ptr(a.as_mut_ptr()), val(1i32)]);
    let e = run(program, "_Z5mixedPiild", &short).unwrap_err();
    assert_eq!(code(&e), ErrorCode::InvalidArgument);
    assert!(e.to_string().contains("takes 32 bytes"), "{e}");
}

/// The kernels whose types only the debug information gives (`mangled`: their names).
fn check_debug(program: &dyn Program, mangled: bool) {
    let name = |cxx: &'static str, c: &'static str| if mangled { cxx } else { c };
    let mut out = 0f64;
    let p = P { x: 1.5, n: 4 };
    run(
        program,
        name("_Z7structs1P1QPd", "structs"),
        &c_args(&[val(p), val(Q { a: 10.0, b: 2.5 }), ptr(&mut out)]),
    )
    .unwrap();
    assert_eq!(out, 6.0 + 7.5);
    let mut l = 0i64;
    run(
        program,
        name("_Z3big3BigPl", "big"),
        &c_args(&[val(Big { a: 1, b: 2, c: 3 }), ptr(&mut l)]),
    )
    .unwrap();
    assert_eq!(l, 321);
    let o = Outer {
        inner: Inner {
            f: [0.5, 1.0, 2.0],
            c: 3,
        },
        s: -4,
    };
    run(
        program,
        name("_Z6nested5OuterPd", "nested"),
        &c_args(&[val(o), ptr(&mut out)]),
    )
    .unwrap();
    assert_eq!(out, 2.5);
    run(
        program,
        name("_Z6colour6ColourPl", "colour"),
        &c_args(&[val(5i32), ptr(&mut l)]),
    )
    .unwrap();
    assert_eq!(l, 5);
    run(
        program,
        "c_linkage",
        &c_args(&[val(0.5f64), val(p), ptr(&mut out)]),
    )
    .unwrap();
    assert_eq!(out, 6.5);
}

#[test]
fn cxx_kernels_with_debug_information_take_any_parameters() {
    let Some(program) = build("clang++-19", &["-g"]) else {
        return;
    };
    check_mangled(program.as_ref());
    check_debug(program.as_ref(), true);
    // A class with a copy constructor is passed by address: the kernel reads the
    // object in the buffer (no constructor runs on the way).
    let mut l = 0i64;
    run(
        program.as_ref(),
        "_Z7counted7CountedPl",
        &c_args(&[val(40i64), ptr(&mut l)]),
    )
    .unwrap();
    assert_eq!(l, 40);
}

#[test]
fn without_debug_information_classes_and_c_linkage_are_refused() {
    let Some(program) = build("clang++-19", &[]) else {
        return;
    };
    check_mangled(program.as_ref());
    let mut out = 0f64;
    let refused = |name: &str, args: &KernelArgs| {
        let e = run(program.as_ref(), name, args).unwrap_err();
        assert_eq!(code(&e), ErrorCode::Unsupported, "{e}");
        e.to_string()
    };
    let why = refused(
        "_Z7structs1P1QPd",
        &c_args(&[
            val(P { x: 1.0, n: 1 }),
            val(Q { a: 1.0, b: 1.0 }),
            ptr(&mut out),
        ]),
    );
    assert!(
        why.contains("takes 'P' by value") && why.contains("-g"),
        "{why}"
    );
    let why = refused(
        "c_linkage",
        &c_args(&[val(0.5f64), val(P { x: 1.0, n: 1 }), ptr(&mut out)]),
    );
    assert!(why.contains("extern \"C\"") && why.contains("-g"), "{why}");
    assert_eq!(out, 0.0, "nothing ran");
    // The same kernels in LLVM's convention (no C-parameters flag) are not refused.
    let k = program.kernel("c_linkage").unwrap();
    k.check_args(&KernelArgs::from_bytes(&[0; 24])).unwrap();
}

#[test]
fn c_kernels_take_their_types_from_debug_information() {
    let Some(program) = build(compiler(), &["-x", "c", "-std=c99", "-g"]) else {
        return;
    };
    check_debug(program.as_ref(), false);
    // C has no mangled names: without debug information nothing is known.
    let Some(bare) = build(compiler(), &["-x", "c", "-std=c99"]) else {
        return;
    };
    let mut a = [0i32; 3];
    let e = run(
        bare.as_ref(),
        "mixed",
        &c_args(&[ptr(a.as_mut_ptr()), val(1i32), val(2i64), val(3.0f64)]),
    )
    .unwrap_err();
    assert_eq!(code(&e), ErrorCode::Unsupported);
}
