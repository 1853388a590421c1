/* The table of checks: what runs, in which order, under which name. */
#include "checks.h"

const check_t CHECKS[] = {
    {"memory_device", "memory DEVICE: alloc, use, free", check_memory_device},
    {"memory_host", "memory HOST: alloc, use, free", check_memory_host},
    {"memory_managed", "memory MANAGED: alloc, use, free", check_memory_managed},
    {"copy_pageable", "copy host<->device, pageable", check_copy_pageable},
    {"copy_pinned", "copy host<->device, pinned", check_copy_pinned},
    {"copy_device_device", "copy device->device", check_copy_within_device},
    {"copy_between_devices", "copy to/from another device", check_copy_between_devices},
    {"fill_1_2_4", "fill, 1/2/4-byte patterns", check_fill_even},
    {"fill_3_12", "fill, 3/12-byte patterns", check_fill_odd},
    {"queue_copy_sync", "queued copies + olSyncQueue", check_queue_copy},
    {"event_two_queues", "event between two queues", check_event_two_queues},
    {"event_two_devices", "event between two devices", check_event_two_devices},
    {"host_function_order", "host function runs in order", check_host_function_order},
    {"kernel_arguments", "kernel with arguments", check_kernel_arguments},
    {"kernel_global", "kernel + global variable", check_kernel_global},
    {"kernel_shared_memory", "kernel + dynamic shared memory", check_kernel_shared_memory},
    {"kernel_cooperative", "cooperative launch", check_kernel_cooperative},
    {LAST_CHECK_ID, "faulting kernel reported", check_kernel_fault},
};

const size_t CHECK_COUNT = sizeof CHECKS / sizeof CHECKS[0];
