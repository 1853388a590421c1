//! OMPT, the OpenMP tools interface, for target offload: connected to libomp as LLVM's
//! libomptarget connects (`ompt_libomp_connect`), it hands a tool that registered device
//! callbacks the events of every construct, data operation and kernel submission, in
//! LLVM's order and with LLVM's arguments. Without such a tool every event is one atomic
//! load. Stands below everything that reports an event.

pub mod code_address;
pub mod connect;
pub mod events;
pub mod trace_clock;
pub mod trace_device;
pub mod trace_entry;
pub mod trace_records;
pub mod types;
