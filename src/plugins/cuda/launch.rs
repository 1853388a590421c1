//! How a launch's argument buffer reaches the driver: as ONE block, exactly the bytes
//! `olLaunchKernel` received, through `cuLaunchKernel`'s `extra` array
//! `{CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
//! CU_LAUNCH_PARAM_END}`. The driver copies the block into the kernel's parameter space
//! when the launch is enqueued, so the buffer need live only for the call.

use super::ffi::{LAUNCH_PARAM_BUFFER_POINTER, LAUNCH_PARAM_BUFFER_SIZE, LAUNCH_PARAM_END};
use std::ffi::c_void;

/// The `extra` array for `buffer` of `*size` bytes. Both pointers must stay valid until
/// the launch call returns.
pub fn extra_params(buffer: *const u8, size: *mut usize) -> [*mut c_void; 5] {
    [
        LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
        buffer as *mut c_void,
        LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
        size as *mut c_void,
        LAUNCH_PARAM_END as *mut c_void,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_array_has_the_documented_layout() {
        let args = [7u8; 24];
        let mut size = args.len();
        let extra = extra_params(args.as_ptr(), &mut size);
        assert_eq!(extra[0] as usize, 0x01, "CU_LAUNCH_PARAM_BUFFER_POINTER");
        assert_eq!(extra[1] as usize, args.as_ptr() as usize);
        assert_eq!(extra[2] as usize, 0x02, "CU_LAUNCH_PARAM_BUFFER_SIZE");
        assert_eq!(extra[3] as usize, &mut size as *mut usize as usize);
        assert_eq!(extra[4] as usize, 0x00, "CU_LAUNCH_PARAM_END");
        // SAFETY: extra[3] points to `size`, alive here.
        assert_eq!(unsafe { *(extra[3] as *const usize) }, 24);
    }
}
