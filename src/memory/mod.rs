//! The shared device memory manager.
