//! Remote devices over MPI: every device of a device-server process
//! (`offload-mpi-device`, one per MPI rank, the `remote-mpi` crate) appears in the
//! application as an ordinary device of the MPI platform.
//!
//! - [`wire`] — requests and replies as bytes; [`fragments`] — how transfers are cut;
//!   [`settings`] — the timeouts from the environment. These three are what the device
//!   server uses of this backend; the rest is private. `abi` — the transport's C
//!   interface and tags, one file that the transport library compiles too.
//! - [`link`] — the MPI transport library, opened only under an MPI launcher.
//! - [`address`] — remote memory at one address on both sides, never another device's;
//!   HOST and MANAGED memory shared with a server on this node.
//! - [`session`] — the server ranks and the exchanges with them, each with its own tag;
//!   [`engine`] — the thread that waits for replies of long exchanges; [`beat`] — the
//!   application's heartbeats, which tell a server on another host that it is there.
//! - [`device`], [`plugin`] — the devices and the platform.
//! - [`host_code`] — the application's code and read-only data around an image, which
//!   a server's host device maps at the application's addresses.
//! - [`program`], [`stream`] — programs and kernels on a server; queues (kernels queued
//!   on a server stream without an answer each) and events.

mod abi;
mod address;
mod beat;
mod device;
mod engine;
pub mod fragments;
pub mod host_code;
mod link;
mod plugin;
mod program;
mod session;
pub mod settings;
mod stream;
pub mod wire;

pub use plugin::RemotePlugin;
