/*
 * offload/host_kernel.h: how to write kernels for liboffload's host device.
 *
 * Part of liboffload, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * A host program is an ELF shared object built for the machine the library runs on:
 *
 *     cc -shared -fPIC -O2 -I<prefix>/include my_kernels.c -o my_kernels.so
 *
 * Its bytes are given to olCreateProgram. The library loads it from memory (no file is
 * written anywhere) with its symbols kept local, so several programs may define the same
 * names. Exported functions are kernels; exported data objects are global variables.
 *
 * Two calling conventions are understood, told apart by a marker symbol:
 *
 * 1. The liboffload host kernel ABI, version 2 (this header). A kernel is defined with
 *    OL_HOST_KERNEL(name, args_type), which defines the function
 *
 *        void name(const ol_host_kernel_context_t *ctx, const void *args, size_t args_size)
 *
 *    and an exported constant ol_host_kernel_marker_t named __ol_host_kernel_v2_<name>
 *    holding sizeof(args_type). The library finds the marker in the dynamic symbol table
 *    and then:
 *      - calls the function once per work-group; work-groups run in parallel on all
 *        cores, in no particular order;
 *      - the function runs the group's work-items itself, e.g. with
 *        OL_HOST_FOR_EACH_ITEM, one after another on one thread;
 *      - args is olLaunchKernel's argument buffer (ArgumentsData, ArgumentsSize bytes),
 *        as LLVM passes it to every device: the kernel's parameters laid out as a C
 *        struct. The library copies it at launch, aligned to 16 bytes; the body of
 *        OL_HOST_KERNEL sees it as `const args_type *args`. Every group shares the copy
 *        and must not write it;
 *      - olLaunchKernel with an ArgumentsSize other than the marker's args_size fails
 *        with OL_ERRC_INVALID_ARGUMENT (OL_HOST_KERNEL_RAW kernels take any size, and
 *        OL_HOST_KERNEL_NO_ARGS kernels take 0);
 *      - ctx->dyn_shared is the group's DynSharedMemory bytes, 64-byte aligned, not
 *        initialised, private to the group while it runs (groups running at the same
 *        time never share it); NULL when DynSharedMemory is 0. DynSharedMemory may be
 *        at most the device's OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE (the L2 size).
 *      - a cooperative launch (olLaunchKernelWithProperties with
 *        OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE) runs every group on its own thread at
 *        the same time, so groups may wait for each other (through atomics in global
 *        memory). It allows at most as many groups as olGetKernelMaxCooperativeGroupCount
 *        says (the number of worker threads).
 *      - olCalculateOptimalOccupancy answers 256 work-items, fewer when the shared
 *        memory asked per work-item would not fit in the local memory size.
 *    The markers are part of the ABI, not of the program: olGetSymbol never finds them.
 *    Kernels built for version 1 (liboffload 0.1, one pointer per argument) are refused
 *    by olGetSymbol with a sentence asking for a rebuild.
 *
 * 2. LLVM's generic-ELF host plugin convention, for functions without a marker (what
 *    LLVM's own host plugin calls): the function takes one pointer-sized argument per
 *    launch argument, e.g. void k(void *a, void *b), and is called once for the whole
 *    launch, whatever the grid (there are no group ids and no dynamic shared memory).
 *    The argument buffer is read as an array of pointer-sized values, one per argument,
 *    so ArgumentsSize must be a multiple of sizeof(void *) (else
 *    OL_ERRC_INVALID_ARGUMENT); a smaller argument occupies a whole slot.
 *    olCalculateOptimalOccupancy answers 1.
 *    A launch through olLaunchKernelWithProperties with
 *    OL_KERNEL_LAUNCH_PROP_TYPE_C_PARAMETERS (what libomptarget's kernel-language path
 *    uses for CUDA source built with -foffload-via-llvm) passes instead the kernel's
 *    parameters as a C struct, and the function is called with the platform's C calling
 *    convention (x86-64 System V), so float, double, long double, narrow integers and
 *    structs by value arrive as the function declares them. The types come from the
 *    function's C++ mangled name; a class or enum by value, or a function without a
 *    mangled name (extern "C"), needs the program's DWARF (built with -g), which says
 *    how it is laid out and passed. A launch whose types are not known that way, or
 *    that libffi cannot describe (__int128, _Float16, vectors, unions, bit-fields,
 *    packed or over-aligned structs), fails with OL_ERRC_UNSUPPORTED naming the
 *    parameter; ArgumentsSize other than the parameters' size fails with
 *    OL_ERRC_INVALID_ARGUMENT.
 *
 * Everything a kernel or a global variable uses must be exported with default
 * visibility (the default for cc -shared); OL_HOST_KERNEL and OL_HOST_GLOBAL say so
 * explicitly, so programs built with -fvisibility=hidden work too.
 *
 * The same source for a CUDA device
 * ---------------------------------
 * A kernel file written with these macros also builds, unchanged, into PTX for a CUDA
 * device (clang alone, no CUDA toolkit; -ffreestanding, since a GPU has no C library):
 *
 *     clang --target=nvptx64-nvidia-cuda -march=sm_60 -O2 -ffreestanding
 *           -I<prefix>/include -S my_kernels.c -o my_kernels.ptx
 *
 * When __NVPTX__ is defined:
 *   - OL_HOST_KERNEL(name, args_type) defines the GPU kernel `name(args_type value)`:
 *     one parameter, the struct by value. Its PTX parameter space is laid out exactly as
 *     the C struct, so it is olLaunchKernel's argument buffer, as liboffload passes it
 *     to the driver in one block (CU_LAUNCH_PARAM_BUFFER_POINTER). The body sees the same
 *     `ctx` and `const args_type *args` as on the host. There is no marker (the kernel's
 *     parameter list is its ABI, and the driver knows it), so OL_HOST_KERNEL_MARKER only
 *     declares one.
 *   - ctx is built from the special registers: group_id = %ctaid, num_groups = %nctaid,
 *     group_size = %ntid, dyn_shared_size = %dynamic_smem_size (PTX ISA 4.1 and later),
 *     dyn_shared = the launch's dynamic shared memory (the `.extern .shared` array
 *     __ol_dyn_shared, 64-byte aligned), NULL when DynSharedMemory is 0, as on the
 *     host. CUDA does not pass the launch's Dimensions to the kernel: `dimensions` is
 *     derived, the highest dimension whose number of groups or group size is above 1
 *     (so a 3D launch whose z extents are all 1 reads as 2 or 1).
 *   - OL_HOST_KERNEL_NO_ARGS(name) defines `name(void)`; its body sees `ctx` (and `args`
 *     NULL, `args_size` 0, as on the host).
 *   - OL_HOST_KERNEL_RAW is host-only (a GPU kernel's parameters are a fixed list, so
 *     there is no buffer "of any size"): using it is a compile error that says so. Keep
 *     such kernels in #ifndef __NVPTX__.
 *   - OL_HOST_GLOBAL variables are plain globals in the device's global memory, found
 *     with olGetSymbol as on the host.
 *   - The kernel runs in every thread, and each thread is ONE work-item: the body of
 *     OL_HOST_FOR_EACH_ITEM runs once, with that thread's local ids (and that of
 *     OL_HOST_FOR_EACH_INDEX once or not at all).
 *
 * So a portable kernel follows one rule: work-item code goes inside
 * OL_HOST_FOR_EACH_ITEM (or OL_HOST_FOR_EACH_INDEX); code outside it runs once per group
 * on the host but in every thread on the GPU, so its side effects (stores to memory,
 * atomics) go inside OL_ONCE_PER_GROUP(ctx), and after an OL_GROUP_BARRIER(ctx) when
 * they read what the items wrote (shared memory included). Reading ctx and args outside
 * the loop is fine. An OL_GROUP_BARRIER must be reached by every work-item of the group
 * (not inside a branch that only some take). An item that is done leaves the loop body
 * with `continue` (`return` would end the whole group on the host, `break` the rest of
 * its row). For example, a per-group sum:
 *
 *     OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) { scratch[lx] = in[...]; }
 *     OL_GROUP_BARRIER(ctx);
 *     OL_ONCE_PER_GROUP(ctx) { ... sum scratch[] ...; out[ctx->group_id[0]] = sum; }
 *
 * Memory a GPU kernel reaches through a pointer must be the device's: olMemAlloc'd
 * (MANAGED where the host touches it directly too); a host stack or malloc pointer works
 * on the host device only. Atomics are the compiler's
 * __atomic builtins (clang 19's NVPTX back end selects relaxed atomic loads, not acquire
 * or seq_cst ones).
 *
 * This header compiles as C99 and later, and as C++, without warnings under
 * -Wall -Wextra -pedantic, for the host, for NVPTX and for amdgcn (an AMD GPU: the same
 * rules as NVPTX; how to build is at its half below).
 */
#ifndef OFFLOAD_HOST_KERNEL_H
#define OFFLOAD_HOST_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the host kernel ABI that this header describes. */
#define OL_HOST_KERNEL_ABI_VERSION 2u

/** The args_size of a marker whose kernel takes an argument buffer of any size. */
#define OL_HOST_KERNEL_ANY_ARGS_SIZE 0xFFFFFFFFu

/** The first field of every marker: the bytes "OLHK" read as a little-endian integer. */
#define OL_HOST_KERNEL_MAGIC 0x4B484C4Fu

/** What a kernel of ABI version 2 learns about the launch and its own work-group. */
typedef struct ol_host_kernel_context_t {
  /** 1, 2 or 3; the unused dimensions have extent 1 below. */
  uint32_t dimensions;
  /** This group's position in the grid, each below num_groups. */
  uint32_t group_id[3];
  /** The number of groups in each dimension. */
  uint32_t num_groups[3];
  /** The number of work-items of every group in each dimension. */
  uint32_t group_size[3];
  /** This group's dynamic shared memory (64-byte aligned), or NULL if none asked. */
  void *dyn_shared;
  /** Its size in bytes: the launch's DynSharedMemory. */
  size_t dyn_shared_size;
} ol_host_kernel_context_t;

/** The exported constant that marks a function as a kernel of this ABI. */
typedef struct ol_host_kernel_marker_t {
  /** OL_HOST_KERNEL_MAGIC. */
  uint32_t magic;
  /** OL_HOST_KERNEL_ABI_VERSION. */
  uint32_t abi_version;
  /** The size of the argument buffer the kernel takes, or OL_HOST_KERNEL_ANY_ARGS_SIZE. */
  uint32_t args_size;
  /** Zero. */
  uint32_t reserved;
} ol_host_kernel_marker_t;

/** The type of a kernel function of this ABI. */
typedef void (*ol_host_kernel_fn_t)(const ol_host_kernel_context_t *ctx,
                                    const void *args, size_t args_size);

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OL_HOST_EXPORT __attribute__((visibility("default")))
#define OL_HOST_MAYBE_UNUSED __attribute__((unused))
#else
#define OL_HOST_EXPORT
#define OL_HOST_MAYBE_UNUSED
#endif

#ifdef __cplusplus
#define OL_HOST_EXTERN_C extern "C"
#else
#define OL_HOST_EXTERN_C
#endif

#if !defined(__NVPTX__) && !defined(__AMDGPU__)
/* ---- The host device: kernels of ABI version 2 (see the top of this file). ---- */

/**
 * Defines the marker of kernel `name`, whose argument buffer is `args_size` bytes (or
 * OL_HOST_KERNEL_ANY_ARGS_SIZE); the function itself must be defined too, with the
 * signature of ol_host_kernel_fn_t and default visibility. Most code uses OL_HOST_KERNEL.
 */
#define OL_HOST_KERNEL_MARKER(name, args_size)                                      \
  OL_HOST_EXTERN_C OL_HOST_EXPORT const ol_host_kernel_marker_t                      \
      __ol_host_kernel_v2_##name = {OL_HOST_KERNEL_MAGIC,                            \
                                    OL_HOST_KERNEL_ABI_VERSION,                      \
                                    (uint32_t)(args_size), 0u}

/**
 * Starts the definition of kernel `name`, whose arguments are the members of the struct
 * type `args_type` (the struct the host passes to olLaunchKernel); the body follows in
 * braces and sees the parameters `ctx` and `const args_type *args`:
 *
 *     struct scale_args { float *x; float a; };
 *     OL_HOST_KERNEL(scale, struct scale_args) {
 *       OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
 *         args->x[OL_HOST_GLOBAL_ID(ctx, 0, lx)] *= args->a;
 *       }
 *     }
 */
#define OL_HOST_KERNEL(name, args_type)                                             \
  static void ol_host_body_##name(const ol_host_kernel_context_t *ctx,              \
                                  const args_type *args);                            \
  OL_HOST_KERNEL_MARKER(name, sizeof(args_type));                                    \
  OL_HOST_EXTERN_C OL_HOST_EXPORT void name(const ol_host_kernel_context_t *ctx,     \
                                            const void *args, size_t args_size) {    \
    (void)args_size;                                                                 \
    ol_host_body_##name(ctx, (const args_type *)args);                               \
  }                                                                                  \
  static void ol_host_body_##name(                                                   \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const args_type *args OL_HOST_MAYBE_UNUSED)

/**
 * Starts the definition of kernel `name`, which takes no arguments (ArgumentsSize 0);
 * the body sees `ctx`.
 */
#define OL_HOST_KERNEL_NO_ARGS(name)                                                \
  OL_HOST_KERNEL_MARKER(name, 0);                                                    \
  OL_HOST_EXTERN_C OL_HOST_EXPORT void name(                                         \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

/**
 * Starts the definition of kernel `name`, which takes an argument buffer of any size;
 * the body sees `ctx`, `const void *args` and `size_t args_size` and reads the buffer
 * itself (OL_HOST_ARG_AT helps). Host-only: see the top of this file.
 */
#define OL_HOST_KERNEL_RAW(name)                                                    \
  OL_HOST_KERNEL_MARKER(name, OL_HOST_KERNEL_ANY_ARGS_SIZE);                         \
  OL_HOST_EXTERN_C OL_HOST_EXPORT void name(                                         \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

/**
 * Loops over the work-items of the group, x fastest; `lx`, `ly`, `lz` are declared as
 * uint32_t local ids. The loop body follows. (On a GPU it runs once, for the thread's
 * own work-item.)
 */
#define OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz)                                      \
  for (uint32_t lz = 0; lz < (ctx)->group_size[2]; ++lz)                             \
    for (uint32_t ly = 0; ly < (ctx)->group_size[1]; ++ly)                           \
      for (uint32_t lx = 0; lx < (ctx)->group_size[0]; ++lx)

/**
 * For 1D kernels over n elements: loops over the global x ids `i` (declared as size_t)
 * of the group's work-items that are below `n`, one per item; items whose local y or z
 * id is not 0 take none. On the host this is one loop over the group's range, clamped
 * to n, which compilers vectorise (a test per item in OL_HOST_FOR_EACH_ITEM defeats
 * that); on a GPU it runs once or not at all. The loop body follows:
 *
 *     OL_HOST_FOR_EACH_INDEX(ctx, i, args->n) { args->x[i] *= args->a; }
 */
#define OL_HOST_FOR_EACH_INDEX(ctx, i, n)                                           \
  for (size_t i = OL_HOST_GLOBAL_ID(ctx, 0, 0),                                      \
              ol_host_index_end = i + (ctx)->group_size[0] < (size_t)(n)             \
                                      ? i + (ctx)->group_size[0]                     \
                                      : (size_t)(n);                                 \
       i < ol_host_index_end; ++i)

/**
 * Waits until every work-item of the group has reached it, so that code after it sees
 * what the items wrote before it. On the host the items before it ran to completion in
 * OL_HOST_FOR_EACH_ITEM already: nothing to wait for. (On a GPU: a barrier.)
 */
#define OL_GROUP_BARRIER(ctx) ((void)(ctx))

/**
 * `if` statement whose branch runs once per group: group-level side effects go in it.
 * On the host the function runs once per group, so it is always taken. (On a GPU: only
 * in the group's work-item (0, 0, 0).)
 */
#define OL_ONCE_PER_GROUP(ctx) if ((void)(ctx), 1)

#elif defined(__NVPTX__)
/* ---- A CUDA device: the same macros, for clang's NVPTX target (see the top). ---- */

/** Defined on a GPU, for kernel files to keep host-only kernels out: #ifndef OL_HOST_GPU. */
#define OL_HOST_GPU 1

#ifdef __cplusplus
extern "C" {
#endif
/* The launch's dynamic shared memory: every `.extern .shared` array of a PTX module
 * starts at it. Declared here, once for every kernel file, aligned as the host's. */
extern __attribute__((address_space(3), aligned(64))) unsigned char __ol_dyn_shared[];
#ifdef __cplusplus
}
#endif

/* The ids of this thread's group, the grid and the group shape, from the special
 * registers; always inlined, so that a kernel only reads the registers it uses. */
static __inline__ __attribute__((always_inline, unused)) ol_host_kernel_context_t
ol_host_gpu_context(void) {
  ol_host_kernel_context_t ctx;
  unsigned int shared_size;
  ctx.group_id[0] = (uint32_t)__nvvm_read_ptx_sreg_ctaid_x();
  ctx.group_id[1] = (uint32_t)__nvvm_read_ptx_sreg_ctaid_y();
  ctx.group_id[2] = (uint32_t)__nvvm_read_ptx_sreg_ctaid_z();
  ctx.num_groups[0] = (uint32_t)__nvvm_read_ptx_sreg_nctaid_x();
  ctx.num_groups[1] = (uint32_t)__nvvm_read_ptx_sreg_nctaid_y();
  ctx.num_groups[2] = (uint32_t)__nvvm_read_ptx_sreg_nctaid_z();
  ctx.group_size[0] = (uint32_t)__nvvm_read_ptx_sreg_ntid_x();
  ctx.group_size[1] = (uint32_t)__nvvm_read_ptx_sreg_ntid_y();
  ctx.group_size[2] = (uint32_t)__nvvm_read_ptx_sreg_ntid_z();
  /* The driver keeps no launch Dimensions: the highest one in use. */
  ctx.dimensions = (ctx.num_groups[2] > 1u || ctx.group_size[2] > 1u)   ? 3u
                   : (ctx.num_groups[1] > 1u || ctx.group_size[1] > 1u) ? 2u
                                                                        : 1u;
  /* No clang builtin reads %dynamic_smem_size (PTX ISA 4.1, sm_20 and later). */
  __asm__("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared_size));
  ctx.dyn_shared_size = shared_size;
  ctx.dyn_shared = shared_size != 0u ? (void *)__ol_dyn_shared : NULL;
  return ctx;
}

/* No marker on the GPU (the driver knows each kernel's parameters): a declaration only,
 * so that code naming the macro still compiles. */
#ifdef __cplusplus
#define OL_HOST_KERNEL_MARKER(name, args_size)                                      \
  extern "C" const ol_host_kernel_marker_t __ol_host_kernel_v2_##name
#else
#define OL_HOST_KERNEL_MARKER(name, args_size)                                      \
  extern const ol_host_kernel_marker_t __ol_host_kernel_v2_##name
#endif

/* The kernel takes the struct by value: its parameter space is the argument buffer. */
#define OL_HOST_KERNEL(name, args_type)                                             \
  static __inline__ __attribute__((always_inline)) void ol_host_body_##name(         \
      const ol_host_kernel_context_t *ctx, const args_type *args);                   \
  OL_HOST_EXTERN_C __attribute__((nvptx_kernel)) void name(                          \
      args_type ol_host_args_value) {                                                \
    const ol_host_kernel_context_t ol_host_ctx = ol_host_gpu_context();              \
    ol_host_body_##name(&ol_host_ctx, &ol_host_args_value);                          \
  }                                                                                  \
  static void ol_host_body_##name(                                                   \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const args_type *args OL_HOST_MAYBE_UNUSED)

#define OL_HOST_KERNEL_NO_ARGS(name)                                                \
  static __inline__ __attribute__((always_inline)) void ol_host_body_##name(         \
      const ol_host_kernel_context_t *ctx, const void *args, size_t args_size);      \
  OL_HOST_EXTERN_C __attribute__((nvptx_kernel)) void name(void) {                   \
    const ol_host_kernel_context_t ol_host_ctx = ol_host_gpu_context();              \
    ol_host_body_##name(&ol_host_ctx, NULL, 0);                                      \
  }                                                                                  \
  static void ol_host_body_##name(                                                   \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

/* A compile error that says why; the body that follows becomes an unused function. */
#define OL_HOST_KERNEL_RAW(name)                                                    \
  _Pragma("GCC error \"OL_HOST_KERNEL_RAW is host-only: a GPU kernel takes a fixed   \
parameter struct (use OL_HOST_KERNEL, or keep this kernel in #ifndef __NVPTX__)\"")  \
  static OL_HOST_MAYBE_UNUSED void ol_host_raw_##name(                               \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

/* One thread is one work-item: the body runs once, with the thread's local ids. */
#define OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz)                                      \
  for (uint32_t lz = (uint32_t)__nvvm_read_ptx_sreg_tid_z(),                         \
                ly = (uint32_t)__nvvm_read_ptx_sreg_tid_y(),                         \
                lx = (uint32_t)__nvvm_read_ptx_sreg_tid_x(),                         \
                ol_host_item_once = ((void)(ctx), 1u);                               \
       ol_host_item_once != 0u && ((void)lx, (void)ly, (void)lz, 1);                 \
       ol_host_item_once = 0u)

#define OL_HOST_FOR_EACH_INDEX(ctx, i, n)                                           \
  for (size_t i = OL_HOST_GLOBAL_ID(ctx, 0, __nvvm_read_ptx_sreg_tid_x()),           \
              ol_host_index_once =                                                   \
                  (__nvvm_read_ptx_sreg_tid_y() | __nvvm_read_ptx_sreg_tid_z()) == 0 && \
                  i < (size_t)(n);                                                   \
       ol_host_index_once != 0u; ol_host_index_once = 0u)

#define OL_GROUP_BARRIER(ctx) ((void)(ctx), __syncthreads())

#define OL_ONCE_PER_GROUP(ctx)                                                      \
  if ((void)(ctx), (__nvvm_read_ptx_sreg_tid_x() | __nvvm_read_ptx_sreg_tid_y() |    \
                    __nvvm_read_ptx_sreg_tid_z()) == 0)


#else /* __AMDGPU__ */
/* ---- An AMD GPU: the same macros, for clang's amdgcn-amd-amdhsa target. ----
 *
 *     clang --target=amdgcn-amd-amdhsa -mcpu=gfx90a -O2 -ffreestanding -nogpulib
 *           -I<prefix>/include -c my_kernels.c -o my_kernels.o
 *     ld.lld -shared my_kernels.o -o my_kernels.hsaco
 *
 * As for NVPTX: the kernel takes the argument struct by value (it is the kernarg
 * segment's first bytes, laid out as the C struct); ctx comes from the AQL dispatch
 * packet the kernel was launched by (group and grid sizes, dimensions) and from the
 * work-group id registers; the dynamic shared memory is the LDS past the kernel's static
 * LDS (`__ol_dyn_shared`), its size the packet's group segment size less the static one. */

#define OL_HOST_GPU 1

#ifdef __cplusplus
extern "C" {
#endif
extern __attribute__((address_space(3), aligned(64))) unsigned char __ol_dyn_shared[];
#ifdef __cplusplus
}
#endif

/* The first fields of hsa_kernel_dispatch_packet_t, as the packet processor wrote them. */
typedef struct ol_host_amdgpu_packet_t {
  uint16_t header;
  uint16_t setup;
  uint16_t workgroup_size[3];
  uint16_t reserved0;
  uint32_t grid_size[3];
  uint32_t private_segment_size;
  uint32_t group_segment_size;
} ol_host_amdgpu_packet_t;

static __inline__ __attribute__((always_inline, unused)) ol_host_kernel_context_t
ol_host_gpu_context(void) {
  ol_host_kernel_context_t ctx;
  const ol_host_amdgpu_packet_t *packet =
      (const ol_host_amdgpu_packet_t *)__builtin_amdgcn_dispatch_ptr();
  uint32_t d, dynamic;
  ctx.group_id[0] = (uint32_t)__builtin_amdgcn_workgroup_id_x();
  ctx.group_id[1] = (uint32_t)__builtin_amdgcn_workgroup_id_y();
  ctx.group_id[2] = (uint32_t)__builtin_amdgcn_workgroup_id_z();
  for (d = 0; d < 3u; ++d) {
    ctx.group_size[d] = packet->workgroup_size[d];
    /* HSA's grid counts work-items; a launch's grid is whole groups. */
    ctx.num_groups[d] = packet->grid_size[d] / (ctx.group_size[d] ? ctx.group_size[d] : 1u);
  }
  ctx.dimensions = (uint32_t)(packet->setup & 3u);
  dynamic = packet->group_segment_size - (uint32_t)__builtin_amdgcn_groupstaticsize();
  ctx.dyn_shared_size = dynamic;
  ctx.dyn_shared = dynamic != 0u ? (void *)__ol_dyn_shared : NULL;
  return ctx;
}

#ifdef __cplusplus
#define OL_HOST_KERNEL_MARKER(name, args_size)                                      \
  extern "C" const ol_host_kernel_marker_t __ol_host_kernel_v2_##name
#else
#define OL_HOST_KERNEL_MARKER(name, args_size)                                      \
  extern const ol_host_kernel_marker_t __ol_host_kernel_v2_##name
#endif

#define OL_HOST_KERNEL(name, args_type)                                             \
  static __inline__ __attribute__((always_inline)) void ol_host_body_##name(         \
      const ol_host_kernel_context_t *ctx, const args_type *args);                   \
  OL_HOST_EXTERN_C __attribute__((amdgpu_kernel)) OL_HOST_EXPORT void name(          \
      args_type ol_host_args_value) {                                                \
    const ol_host_kernel_context_t ol_host_ctx = ol_host_gpu_context();              \
    ol_host_body_##name(&ol_host_ctx, &ol_host_args_value);                          \
  }                                                                                  \
  static void ol_host_body_##name(                                                   \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const args_type *args OL_HOST_MAYBE_UNUSED)

#define OL_HOST_KERNEL_NO_ARGS(name)                                                \
  static __inline__ __attribute__((always_inline)) void ol_host_body_##name(         \
      const ol_host_kernel_context_t *ctx, const void *args, size_t args_size);      \
  OL_HOST_EXTERN_C __attribute__((amdgpu_kernel)) OL_HOST_EXPORT void name(void) {   \
    const ol_host_kernel_context_t ol_host_ctx = ol_host_gpu_context();              \
    ol_host_body_##name(&ol_host_ctx, NULL, 0);                                      \
  }                                                                                  \
  static void ol_host_body_##name(                                                   \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

#define OL_HOST_KERNEL_RAW(name)                                                    \
  _Pragma("GCC error \"OL_HOST_KERNEL_RAW is host-only: a GPU kernel takes a fixed   \
parameter struct (use OL_HOST_KERNEL, or keep this kernel in #ifndef OL_HOST_GPU)\"")  \
  static OL_HOST_MAYBE_UNUSED void ol_host_raw_##name(                               \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

#define OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz)                                      \
  for (uint32_t lz = (uint32_t)__builtin_amdgcn_workitem_id_z(),                     \
                ly = (uint32_t)__builtin_amdgcn_workitem_id_y(),                     \
                lx = (uint32_t)__builtin_amdgcn_workitem_id_x(),                     \
                ol_host_item_once = ((void)(ctx), 1u);                               \
       ol_host_item_once != 0u && ((void)lx, (void)ly, (void)lz, 1);                 \
       ol_host_item_once = 0u)

#define OL_HOST_FOR_EACH_INDEX(ctx, i, n)                                           \
  for (size_t i = OL_HOST_GLOBAL_ID(ctx, 0, __builtin_amdgcn_workitem_id_x()),       \
              ol_host_index_once = (__builtin_amdgcn_workitem_id_y() |               \
                                    __builtin_amdgcn_workitem_id_z()) == 0 &&        \
                                   i < (size_t)(n);                                  \
       ol_host_index_once != 0u; ol_host_index_once = 0u)

/* What the group's items wrote is visible to all of them after it. */
#define OL_GROUP_BARRIER(ctx)                                                       \
  ((void)(ctx), __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"),               \
   __builtin_amdgcn_s_barrier(), __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"))

#define OL_ONCE_PER_GROUP(ctx)                                                      \
  if ((void)(ctx), (__builtin_amdgcn_workitem_id_x() | __builtin_amdgcn_workitem_id_y() | \
                    __builtin_amdgcn_workitem_id_z()) == 0)

#endif /* __NVPTX__, __AMDGPU__ */

/** The value of type `type` at byte `offset` of a raw argument buffer. */
#define OL_HOST_ARG_AT(args, offset, type)                                          \
  (*(type const *)(const void *)((const unsigned char *)(args) + (offset)))

/** The global id in dimension `d` (0, 1 or 2) of the work-item with local id `local`. */
#define OL_HOST_GLOBAL_ID(ctx, d, local)                                            \
  ((size_t)(ctx)->group_id[(d)] * (size_t)(ctx)->group_size[(d)] + (size_t)(local))

/** The number of work-items of the whole launch in dimension `d`. */
#define OL_HOST_GLOBAL_SIZE(ctx, d)                                                 \
  ((size_t)(ctx)->num_groups[(d)] * (size_t)(ctx)->group_size[(d)])

/** The number of work-items of one group. */
#define OL_HOST_GROUP_ITEMS(ctx)                                                    \
  ((size_t)(ctx)->group_size[0] * (ctx)->group_size[1] * (ctx)->group_size[2])

/** This group's linear index, x fastest. */
#define OL_HOST_GROUP_LINEAR_ID(ctx)                                                \
  (((size_t)(ctx)->group_id[2] * (ctx)->num_groups[1] + (ctx)->group_id[1]) *        \
       (ctx)->num_groups[0] +                                                        \
   (ctx)->group_id[0])

/**
 * Marks a global variable so that it is exported even under -fvisibility=hidden. (In C++
 * a variable at global namespace scope keeps its plain name, one in a namespace does not,
 * and a const one needs `extern` to be exported at all.) On a GPU: a global variable in
 * the device's global memory.
 */
#define OL_HOST_GLOBAL OL_HOST_EXPORT

#endif /* OFFLOAD_HOST_KERNEL_H */
