/* The GPU benchmarks' kernel: it does nothing, so a launch measures only the launch.
 * Built to PTX by scripts/make-gpu-kernels.sh (clang-19, no CUDA toolkit needed); the PTX
 * beside this file is committed. */
__attribute__((nvptx_kernel)) void empty(void) {}
