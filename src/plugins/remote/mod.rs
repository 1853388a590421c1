//! Remote devices over MPI (issue 11, in progress): every device of a device-server
//! process (`offload-mpi-device`, one per MPI rank) appears in the application as an
//! ordinary device. What is here so far is the part that needs no MPI: the wire format
//! of requests and replies ([`wire`]) and how large transfers are cut ([`fragments`]).
//! The transport (rsmpi, non-blocking, a pool of communicators), the server and the
//! plugin build on them.

pub mod fragments;
pub mod wire;
