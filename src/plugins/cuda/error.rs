//! A failed driver call as one of our errors: the code says what kind of failure it is
//! (so callers react to it, e.g. the memory manager retries on `OutOfResources`), the
//! details name the call and the driver's own words for what went wrong.

use super::ffi::{result as r, CuResult};
use crate::plugin::foundation::error::{Error, ErrorCode};

/// Our code for a `CUresult` (not `CUDA_SUCCESS`, which is no error).
pub fn error_code(result: CuResult) -> ErrorCode {
    match result {
        r::INVALID_VALUE
        | r::INVALID_HANDLE
        | r::INVALID_CONTEXT
        | r::CONTEXT_IS_DESTROYED
        | r::HOST_MEMORY_ALREADY_REGISTERED
        | r::HOST_MEMORY_NOT_REGISTERED
        | r::COOPERATIVE_LAUNCH_TOO_LARGE => ErrorCode::InvalidArgument,
        r::OUT_OF_MEMORY | r::LAUNCH_OUT_OF_RESOURCES | r::TOO_MANY_PEERS => {
            ErrorCode::OutOfResources
        }
        r::INVALID_IMAGE
        | r::NO_BINARY_FOR_GPU
        | r::INVALID_PTX
        | r::UNSUPPORTED_PTX_VERSION
        | r::INVALID_SOURCE => ErrorCode::InvalidBinary,
        r::NOT_FOUND | r::FILE_NOT_FOUND | r::SHARED_OBJECT_SYMBOL_NOT_FOUND => ErrorCode::NotFound,
        // The PTX JIT is a separate library of the driver (libnvidia-ptxjitcompiler).
        r::JIT_COMPILER_NOT_FOUND => ErrorCode::HostToolNotFound,
        r::JIT_COMPILATION_DISABLED
        | r::NOT_SUPPORTED
        | r::NOT_PERMITTED
        | r::UNSUPPORTED_LIMIT
        | r::PEER_ACCESS_UNSUPPORTED
        | r::PEER_ACCESS_NOT_ENABLED => ErrorCode::Unsupported,
        r::OPERATING_SYSTEM => ErrorCode::HostIo,
        // Kernel faults (illegal address, assert, illegal instruction, ...), a lost or
        // missing device, a driver that does not work, and whatever the driver adds after
        // this was written: the backend failed, nothing the caller passed was wrong.
        _ => ErrorCode::BackendFailure,
    }
}

/// The details of a failed call: "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of
/// memory)". `name` and `text` are what `cuGetErrorName` / `cuGetErrorString` said, when
/// they knew the code.
pub fn describe(call: &str, result: CuResult, name: Option<&str>, text: Option<&str>) -> String {
    match (name, text) {
        (Some(name), Some(text)) => format!("{call} failed: {name} ({text})"),
        (Some(name), None) => format!("{call} failed: {name}"),
        (None, Some(text)) => format!("{call} failed: CUresult {result} ({text})"),
        (None, None) => format!("{call} failed: CUresult {result}"),
    }
}

/// The error for a failed call.
pub fn driver_error(call: &str, result: CuResult, name: Option<&str>, text: Option<&str>) -> Error {
    Error::new(error_code(result), describe(call, result, name, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_kind_of_failure() {
        let cases = [
            (r::INVALID_VALUE, ErrorCode::InvalidArgument),
            (r::INVALID_HANDLE, ErrorCode::InvalidArgument),
            (
                r::HOST_MEMORY_ALREADY_REGISTERED,
                ErrorCode::InvalidArgument,
            ),
            (r::COOPERATIVE_LAUNCH_TOO_LARGE, ErrorCode::InvalidArgument),
            (r::OUT_OF_MEMORY, ErrorCode::OutOfResources),
            (r::LAUNCH_OUT_OF_RESOURCES, ErrorCode::OutOfResources),
            (r::INVALID_IMAGE, ErrorCode::InvalidBinary),
            (r::INVALID_PTX, ErrorCode::InvalidBinary),
            (r::NO_BINARY_FOR_GPU, ErrorCode::InvalidBinary),
            (r::UNSUPPORTED_PTX_VERSION, ErrorCode::InvalidBinary),
            (r::NOT_FOUND, ErrorCode::NotFound),
            (r::JIT_COMPILER_NOT_FOUND, ErrorCode::HostToolNotFound),
            (r::NOT_SUPPORTED, ErrorCode::Unsupported),
            (r::PEER_ACCESS_UNSUPPORTED, ErrorCode::Unsupported),
            (r::ILLEGAL_ADDRESS, ErrorCode::BackendFailure),
            (r::LAUNCH_FAILED, ErrorCode::BackendFailure),
            (r::ASSERT, ErrorCode::BackendFailure),
            (r::MISALIGNED_ADDRESS, ErrorCode::BackendFailure),
            (r::NO_DEVICE, ErrorCode::BackendFailure),
            (r::NOT_INITIALIZED, ErrorCode::BackendFailure),
            (r::UNKNOWN, ErrorCode::BackendFailure),
            (12345, ErrorCode::BackendFailure),
        ];
        for (result, code) in cases {
            assert_eq!(error_code(result), code, "CUresult {result}");
        }
    }

    #[test]
    fn details_name_the_call_and_the_driver_words() {
        let e = driver_error(
            "cuMemAlloc_v2",
            r::OUT_OF_MEMORY,
            Some("CUDA_ERROR_OUT_OF_MEMORY"),
            Some("out of memory"),
        );
        assert_eq!(e.code, ErrorCode::OutOfResources);
        assert_eq!(
            e.details,
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
        );
        assert_eq!(
            describe("cuInit", 9000, None, None),
            "cuInit failed: CUresult 9000"
        );
        assert_eq!(
            describe("cuInit", 100, Some("CUDA_ERROR_NO_DEVICE"), None),
            "cuInit failed: CUDA_ERROR_NO_DEVICE"
        );
    }
}
