//! olGetErrcName: an error code's name as text.
#![allow(non_snake_case)]

use crate::capi::types::ol_errc_raw_t;
use crate::plugin::foundation::error::ErrorCode;
use std::ffi::c_char;
use std::panic::catch_unwind;

/// Extension: the name of the enumerator `Code` (`"OL_ERRC_INVALID_SIZE"`), or
/// `"OL_ERRC_UNKNOWN_CODE"` for a value no error code has (the `_LAST` and `_FORCE_UINT32`
/// sentinels included). Never NULL; the string is static, never freed. It touches no
/// state and cannot fail: it works before `olInit` and after `olShutDown`, and has no
/// `WithCodeLoc` variant.
#[no_mangle]
pub extern "C" fn olGetErrcName(Code: ol_errc_raw_t) -> *const c_char {
    // Nothing here can panic; the boundary is kept all the same, as for every entry point.
    catch_unwind(|| ErrorCode::c_name_of(Code))
        .unwrap_or(c"OL_ERRC_UNKNOWN_CODE")
        .as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn name(code: u32) -> &'static str {
        // SAFETY: olGetErrcName returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(olGetErrcName(code)) }
            .to_str()
            .unwrap()
    }

    #[test]
    fn every_code_has_its_name_and_other_values_none() {
        for code in ErrorCode::ALL {
            assert_eq!(name(code as u32), code.name());
        }
        assert_eq!(name(8), "OL_ERRC_INVALID_SIZE");
        for value in [25, 26, 0x7fff_ffff, 0x8000_0000, u32::MAX] {
            assert_eq!(name(value), "OL_ERRC_UNKNOWN_CODE");
        }
    }
}
