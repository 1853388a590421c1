//! The C API: the only place with `extern "C"`. Each entry point checks its arguments,
//! converts handles, calls one runtime function and converts the result; the wrapper in
//! `entry` catches panics, traces and interns errors.

pub(crate) mod args;
pub mod device;
pub(crate) mod entry;
pub mod errors;
pub(crate) mod info;
pub mod init;
pub mod memory;
pub mod platform;
pub(crate) mod queue_args;
pub mod types;

pub use device::*;
pub use init::*;
pub use memory::*;
pub use platform::*;
pub use types::*;
