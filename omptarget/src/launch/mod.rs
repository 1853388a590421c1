//! Running a target region: its kernel's arguments and launch size, the launch
//! itself, and `nowait` regions left in flight.

pub mod kernel;
pub mod launch_plan;
pub mod nowait;
pub mod recording;
pub mod replay;
pub mod target_region;
