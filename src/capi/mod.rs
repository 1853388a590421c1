//! The C API: the only place with `extern "C"`.
