/*
 * offload/OffloadAPI.h: the name LLVM's liboffload installs its C API under. liboffload
 * declares the same API (and its extensions) in offload/liboffload.h; code written for
 * LLVM's header includes this one unchanged.
 */
#include "liboffload.h"
