//! OpenMP's data environment on one device: the mapping table (host range -> device
//! copy, reference counts) and what constructs do to it (map on entry and exit,
//! attach pointers, expand `declare mapper`, `target update`).

pub mod attach;
pub mod data;
pub mod info_lines;
pub mod mapper;
pub mod table;
pub mod transfer;
pub mod update;
