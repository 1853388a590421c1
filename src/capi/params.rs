//! One `ol_*_params_t` struct per function, as in LLVM 22.1's header: a pointer to each
//! parameter, in order, so a tracing or interception layer can hand a call's arguments
//! around as one value. The library itself never reads them; they are part of the ABI.
#![allow(non_camel_case_types, non_snake_case)]

use crate::capi::types::*;
use std::ffi::{c_char, c_void};

/// The parameters of `olCalculateOptimalOccupancy`.
#[repr(C)]
pub struct ol_calculate_optimal_occupancy_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pKernel: *mut ol_symbol_handle_t,
    pub pSharedMemory: *mut usize,
    pub pGroupSize: *mut *mut usize,
}

/// The parameters of `olCreateEvent`.
#[repr(C)]
pub struct ol_create_event_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pEvent: *mut *mut ol_event_handle_t,
}

/// The parameters of `olCreateProgram`.
#[repr(C)]
pub struct ol_create_program_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pProgData: *mut *const c_void,
    pub pProgDataSize: *mut usize,
    pub pProgram: *mut *mut ol_program_handle_t,
}

/// The parameters of `olCreateQueue`.
#[repr(C)]
pub struct ol_create_queue_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pQueue: *mut *mut ol_queue_handle_t,
}

/// The parameters of `olDestroyEvent`.
#[repr(C)]
pub struct ol_destroy_event_params_t {
    pub pEvent: *mut ol_event_handle_t,
}

/// The parameters of `olDestroyProgram`.
#[repr(C)]
pub struct ol_destroy_program_params_t {
    pub pProgram: *mut ol_program_handle_t,
}

/// The parameters of `olDestroyQueue`.
#[repr(C)]
pub struct ol_destroy_queue_params_t {
    pub pQueue: *mut ol_queue_handle_t,
}

/// The parameters of `olGetDeviceInfo`.
#[repr(C)]
pub struct ol_get_device_info_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pPropName: *mut ol_device_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetDeviceInfoSize`.
#[repr(C)]
pub struct ol_get_device_info_size_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pPropName: *mut ol_device_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olGetEventInfo`.
#[repr(C)]
pub struct ol_get_event_info_params_t {
    pub pEvent: *mut ol_event_handle_t,
    pub pPropName: *mut ol_event_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetEventInfoSize`.
#[repr(C)]
pub struct ol_get_event_info_size_params_t {
    pub pEvent: *mut ol_event_handle_t,
    pub pPropName: *mut ol_event_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olGetMemInfo`.
#[repr(C)]
pub struct ol_get_mem_info_params_t {
    pub pPtr: *mut *const c_void,
    pub pPropName: *mut ol_mem_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetMemInfoSize`.
#[repr(C)]
pub struct ol_get_mem_info_size_params_t {
    pub pPtr: *mut *const c_void,
    pub pPropName: *mut ol_mem_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olGetPlatformInfo`.
#[repr(C)]
pub struct ol_get_platform_info_params_t {
    pub pPlatform: *mut ol_platform_handle_t,
    pub pPropName: *mut ol_platform_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetPlatformInfoSize`.
#[repr(C)]
pub struct ol_get_platform_info_size_params_t {
    pub pPlatform: *mut ol_platform_handle_t,
    pub pPropName: *mut ol_platform_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olGetQueueInfo`.
#[repr(C)]
pub struct ol_get_queue_info_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pPropName: *mut ol_queue_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetQueueInfoSize`.
#[repr(C)]
pub struct ol_get_queue_info_size_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pPropName: *mut ol_queue_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olGetSymbol`.
#[repr(C)]
pub struct ol_get_symbol_params_t {
    pub pProgram: *mut ol_program_handle_t,
    pub pName: *mut *const c_char,
    pub pKind: *mut ol_symbol_kind_t,
    pub pSymbol: *mut *mut ol_symbol_handle_t,
}

/// The parameters of `olGetSymbolInfo`.
#[repr(C)]
pub struct ol_get_symbol_info_params_t {
    pub pSymbol: *mut ol_symbol_handle_t,
    pub pPropName: *mut ol_symbol_info_t,
    pub pPropSize: *mut usize,
    pub pPropValue: *mut *mut c_void,
}

/// The parameters of `olGetSymbolInfoSize`.
#[repr(C)]
pub struct ol_get_symbol_info_size_params_t {
    pub pSymbol: *mut ol_symbol_handle_t,
    pub pPropName: *mut ol_symbol_info_t,
    pub pPropSizeRet: *mut *mut usize,
}

/// The parameters of `olIsValidBinary`.
#[repr(C)]
pub struct ol_is_valid_binary_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pProgData: *mut *const c_void,
    pub pProgDataSize: *mut usize,
    pub pValid: *mut *mut bool,
}

/// The parameters of `olIterateDevices`.
#[repr(C)]
pub struct ol_iterate_devices_params_t {
    pub pCallback: *mut ol_device_iterate_cb_t,
    pub pUserData: *mut *mut c_void,
}

/// The parameters of `olLaunchHostFunction`.
#[repr(C)]
pub struct ol_launch_host_function_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pCallback: *mut ol_host_function_cb_t,
    pub pUserData: *mut *mut c_void,
}

/// The parameters of `olLaunchKernel`.
#[repr(C)]
pub struct ol_launch_kernel_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pDevice: *mut ol_device_handle_t,
    pub pKernel: *mut ol_symbol_handle_t,
    pub pArgumentsData: *mut *const c_void,
    pub pArgumentsSize: *mut usize,
    pub pLaunchSizeArgs: *mut *const ol_kernel_launch_size_args_t,
}

/// The parameters of `olMemAlloc`.
#[repr(C)]
pub struct ol_mem_alloc_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pType: *mut ol_alloc_type_t,
    pub pSize: *mut usize,
    pub pAllocationOut: *mut *mut *mut c_void,
}

/// The parameters of `olMemFill`.
#[repr(C)]
pub struct ol_mem_fill_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pPtr: *mut *mut c_void,
    pub pPatternSize: *mut usize,
    pub pPatternPtr: *mut *const c_void,
    pub pFillSize: *mut usize,
}

/// The parameters of `olMemFree`.
#[repr(C)]
pub struct ol_mem_free_params_t {
    pub pAddress: *mut *mut c_void,
}

/// The parameters of `olMemRegister`.
#[repr(C)]
pub struct ol_mem_register_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pPtr: *mut *mut c_void,
    pub pSize: *mut usize,
    pub pFlags: *mut ol_memory_register_flags_t,
    pub pPinnedPtr: *mut *mut *mut c_void,
}

/// The parameters of `olMemUnregister`.
#[repr(C)]
pub struct ol_mem_unregister_params_t {
    pub pDevice: *mut ol_device_handle_t,
    pub pPtr: *mut *mut c_void,
}

/// The parameters of `olMemcpy`.
#[repr(C)]
pub struct ol_memcpy_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pDstPtr: *mut *mut c_void,
    pub pDstDevice: *mut ol_device_handle_t,
    pub pSrcPtr: *mut *const c_void,
    pub pSrcDevice: *mut ol_device_handle_t,
    pub pSize: *mut usize,
}

/// The parameters of `olSyncEvent`.
#[repr(C)]
pub struct ol_sync_event_params_t {
    pub pEvent: *mut ol_event_handle_t,
}

/// The parameters of `olSyncQueue`.
#[repr(C)]
pub struct ol_sync_queue_params_t {
    pub pQueue: *mut ol_queue_handle_t,
}

/// The parameters of `olWaitEvents`.
#[repr(C)]
pub struct ol_wait_events_params_t {
    pub pQueue: *mut ol_queue_handle_t,
    pub pEvents: *mut *mut ol_event_handle_t,
    pub pNumEvents: *mut usize,
}
