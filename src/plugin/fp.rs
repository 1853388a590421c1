//! The `OL_DEVICE_FP_CAPABILITY_FLAG_*` bits of `ol_device_fp_capability_flags_t`, which
//! every backend's floating-point info answers are made of.

pub const CORRECTLY_ROUNDED_DIVIDE_SQRT: u32 = 1;
pub const ROUND_TO_NEAREST: u32 = 2;
pub const ROUND_TO_ZERO: u32 = 4;
pub const ROUND_TO_INF: u32 = 8;
pub const INF_NAN: u32 = 16;
pub const DENORM: u32 = 32;
pub const FMA: u32 = 64;
pub const SOFT_FLOAT: u32 = 128;
