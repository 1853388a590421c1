//! The OpenMP devices: registered binaries, the device list (each a liboffload device
//! with its mapping table and loaded images), `requires` across units.

pub mod outcome;
pub mod registry;
pub mod requires;
