//! The MPI transport's C interface, defined once for both of its sides: this backend
//! calls it through libloading (`link`), the `remote-mpi` crate implements it
//! (remote-mpi/src/ffi.rs, which checks each of its functions against these types at
//! compile time; it compiles this very file as its `abi` module, so that the transport
//! library does not link liboffload). The message tags live here too, for the same reason.

// Each side uses its part (the application never sends a heartbeat).
#![allow(dead_code)]

use std::ffi::{c_char, c_int};

/// The library's file name.
pub const LIBRARY: &str = "liboffload_remote_mpi.so";

/// The version of these functions' signatures; each side refuses another.
pub const ABI_VERSION: u32 = 2;

/// What every function but the getters answers: success, or how it failed (the text
/// then in `offload_mpi_error()`).
pub const OK: c_int = 0;
/// MPI refused, or the peer's message made no sense.
pub const FAILED: c_int = -1;
/// A deadline ran out: no message in time, or no progress and no sign of life.
pub const SILENT: c_int = -2;
/// The sender of a transfer gave up midway (an empty fragment); still in step.
pub const GAVE_UP: c_int = -3;

/// Requests (application to server), each carrying the tag of its exchange.
pub const TAG_REQUEST: i32 = 1;
/// Heartbeats (empty): a busy server's "still working", and the application's "still
/// here" to every server, busy or idle.
pub const TAG_HEARTBEAT: i32 = 4;
/// How often heartbeats go.
pub const HEARTBEAT: std::time::Duration = std::time::Duration::from_millis(500);
/// The first tag of exchanges (the application's side counts them); an exchange's data
/// and reply travel with its tag.
pub const FIRST_OPERATION_TAG: i32 = 16;

/// `offload_mpi_abi_version()`.
pub type VersionFn = extern "C" fn() -> u32;
/// `offload_mpi_open(size, rank, timeout_us)`.
pub type OpenFn = unsafe extern "C" fn(*mut c_int, *mut c_int, i64) -> c_int;
/// `offload_mpi_send(dest, tag, data, len, within_us)`.
pub type SendFn = unsafe extern "C" fn(c_int, c_int, *const u8, u64, i64) -> c_int;
/// `offload_mpi_receive(source, tag, timeout_us, out, out_len)`.
pub type ReceiveFn = unsafe extern "C" fn(c_int, c_int, i64, *mut *mut u8, *mut u64) -> c_int;
/// `offload_mpi_free(data, len)`.
pub type FreeFn = unsafe extern "C" fn(*mut u8, u64);
/// `offload_mpi_send_fragments(dest, tag, data, len, fragment)`.
pub type SendFragmentsFn = unsafe extern "C" fn(c_int, c_int, *const u8, u64, u64) -> c_int;
/// `offload_mpi_receive_fragments(source, tag, buffer, len, fragment)`.
pub type ReceiveFragmentsFn = unsafe extern "C" fn(c_int, c_int, *mut u8, u64, u64) -> c_int;
/// `offload_mpi_silence_us(rank)`.
pub type SilenceFn = extern "C" fn(c_int) -> i64;
/// `offload_mpi_close(within_us)`.
pub type CloseFn = extern "C" fn(i64) -> c_int;
/// `offload_mpi_error()`.
pub type ErrorFn = extern "C" fn() -> *const c_char;
