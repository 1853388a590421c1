//! The rest of LLVM 19's exports. Each is there so that every binary clang 19 builds
//! links and loads; each says on stderr that it is not implemented yet and returns an
//! error value (or nothing, where LLVM's returns nothing and skipping it cannot corrupt
//! the program's data; where it could, it aborts). The parameters are left out: a C
//! callee may ignore its arguments, and none of these reads them.

use std::io::Write;

/// The one line every unimplemented path prints.
pub fn report(what: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "libomptarget (liboffload): {what} is not implemented yet"
    );
}

macro_rules! returns {
    ($value:expr, $ty:ty, $($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet (says so, fails).")]
        #[no_mangle]
        pub extern "C" fn $name() -> $ty {
            report(stringify!($name));
            $value
        }
    )+};
}

macro_rules! says {
    ($($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet (says so, does nothing).")]
        #[no_mangle]
        pub extern "C" fn $name() {
            report(stringify!($name));
        }
    )+};
}

macro_rules! aborts {
    ($($name:ident),+ $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: not implemented yet; going on would lose data, so it aborts.")]
        #[no_mangle]
        pub extern "C" fn $name() {
            report(stringify!($name));
            std::process::abort();
        }
    )+};
}

returns!(0, i64, __tgt_mapper_num_components);
says!(
    __tgt_rtl_init,
    __tgt_rtl_deinit,
    __tgt_set_info_flag,
    ompt_libomptarget_connect,
);
// A mapper skipped would leave the program's data wrong without a trace.
aborts!(__tgt_push_mapper_component);
