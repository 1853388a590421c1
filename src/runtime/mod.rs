//! The safe, backend-neutral core: init refcount, platforms, devices, memory, ...
//! Nothing here is `unsafe`; the C layer converts pointers and handles before calling in.
#![forbid(unsafe_code)]

pub mod config;
pub mod context;
pub mod event;
pub mod handle_table;
pub mod memory_ops;
pub mod platform;
pub mod profile;
pub mod program;
pub mod queue;
pub mod queue_ops;
pub mod recording;
pub mod registration;
pub mod state;
pub mod thread_copy;

pub use crate::plugin::foundation::error::{Error, ErrorCode, Result};
pub use context::Runtime;
pub use platform::{Device, Platform, PlatformInfo};
pub use state::{current, init, shut_down, with_current, InitOptions};
