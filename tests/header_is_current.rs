//! The committed header must be what cbindgen generates from src/capi today.
//! `UPDATE_HEADER=1 cargo test --test header_is_current` rewrites it.

use std::path::Path;

fn generate() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(format!(
        "\n/* The version of LLVM's liboffload API this header implements (LLVM 22.1's). */\n\
         #ifndef OL_VERSION_MAJOR\n#define OL_VERSION_MAJOR 0\n#endif\n\
         #ifndef OL_VERSION_MINOR\n#define OL_VERSION_MINOR 0\n#endif\n\
         #ifndef OL_VERSION_PATCH\n#define OL_VERSION_PATCH 1\n#endif\n\n\
         /* This library's own version; olGetVersion reports the one running. */\n\
         #define LIBOFFLOAD_VERSION_MAJOR {}\n#define LIBOFFLOAD_VERSION_MINOR {}\n\
         #define LIBOFFLOAD_VERSION_PATCH {}\n\n\
         /** Success: a NULL ol_result_t. */\n#ifndef OL_SUCCESS\n#define OL_SUCCESS NULL\n#endif\n\n\
         #ifndef OL_APICALL\n#if defined(_WIN32)\n#define OL_APICALL __cdecl\n#else\n#define OL_APICALL\n#endif\n#endif\n\
         #ifndef OL_APIEXPORT\n#if defined(_WIN32)\n#define OL_APIEXPORT __declspec(dllimport)\n\
         #else\n#define OL_APIEXPORT __attribute__((visibility(\"default\")))\n#endif\n#endif\n\n\
         /** Initialiser of ol_init_args_t: every backend. */\n\
         #define OL_INIT_ARGS_INIT {{sizeof(ol_init_args_t), 0, NULL}}\n\n\
         /** The last element of an ol_kernel_launch_prop_t array. */\n\
         #define OL_KERNEL_LAUNCH_PROP_END {{OL_KERNEL_LAUNCH_PROP_TYPE_NONE, NULL}}\n",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    ));
    let mut out = Vec::new();
    // Only src/capi is C API (cbindgen follows its `mod` items): other modules' public
    // constants must not leak into the header.
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

#[test]
fn committed_header_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/offload/liboffload.h");
    let fresh = generate();
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/offload/liboffload.h is stale: run `UPDATE_HEADER=1 cargo test --test header_is_current` and commit it"
    );
}
