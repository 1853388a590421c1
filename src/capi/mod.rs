//! The C API: the only place with `extern "C"`. Each entry point checks its arguments,
//! converts handles, calls one runtime function and converts the result; the wrapper in
//! `entry` catches panics, traces and interns errors.

pub(crate) mod args;
pub mod device;
pub(crate) mod entry;
pub mod errc;
pub mod errors;
pub mod event;
pub(crate) mod info;
pub mod init;
pub mod kernel;
pub mod memory;
pub mod params;
pub mod platform;
pub mod program;
pub mod queue;
pub(crate) mod queue_args;
pub(crate) mod trace_text;
pub mod types;

pub use device::*;
pub use errc::*;
pub use event::*;
pub use init::*;
pub use kernel::*;
pub use memory::*;
pub use params::*;
pub use platform::*;
pub use program::*;
pub use queue::*;
pub use types::*;
