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
 *
 * Everything a kernel or a global variable uses must be exported with default
 * visibility (the default for cc -shared); OL_HOST_KERNEL and OL_HOST_GLOBAL say so
 * explicitly, so programs built with -fvisibility=hidden work too.
 *
 * This header compiles as C99 and later, and as C++, without warnings under
 * -Wall -Wextra -pedantic.
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
 * itself (OL_HOST_ARG_AT helps).
 */
#define OL_HOST_KERNEL_RAW(name)                                                    \
  OL_HOST_KERNEL_MARKER(name, OL_HOST_KERNEL_ANY_ARGS_SIZE);                         \
  OL_HOST_EXTERN_C OL_HOST_EXPORT void name(                                         \
      const ol_host_kernel_context_t *ctx OL_HOST_MAYBE_UNUSED,                      \
      const void *args OL_HOST_MAYBE_UNUSED,                                         \
      size_t args_size OL_HOST_MAYBE_UNUSED)

/** The value of type `type` at byte `offset` of a raw argument buffer. */
#define OL_HOST_ARG_AT(args, offset, type)                                          \
  (*(type const *)(const void *)((const unsigned char *)(args) + (offset)))

/**
 * Loops over the work-items of the group, x fastest; `lx`, `ly`, `lz` are declared as
 * uint32_t local ids. The loop body follows.
 */
#define OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz)                                      \
  for (uint32_t lz = 0; lz < (ctx)->group_size[2]; ++lz)                             \
    for (uint32_t ly = 0; ly < (ctx)->group_size[1]; ++ly)                           \
      for (uint32_t lx = 0; lx < (ctx)->group_size[0]; ++lx)

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
 * and a const one needs `extern` to be exported at all.)
 */
#define OL_HOST_GLOBAL OL_HOST_EXPORT

#endif /* OFFLOAD_HOST_KERNEL_H */
