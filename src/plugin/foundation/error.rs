//! The runtime's error type: a code from `ol_errc_t` and a sentence for the user.

use super::c_enum::c_enum;
use std::ffi::CStr;
use std::fmt;

c_enum! {
    /// Error codes, numbered exactly as `ol_errc_t` in the C header.
    pub enum ErrorCode {
        Success = 0,
        Unknown = 1,
        HostIo = 2,
        InvalidBinary = 3,
        InvalidNullPointer = 4,
        InvalidArgument = 5,
        NotFound = 6,
        OutOfResources = 7,
        InvalidSize = 8,
        InvalidEnumeration = 9,
        HostToolNotFound = 10,
        InvalidValue = 11,
        Unimplemented = 12,
        Unsupported = 13,
        AssembleFailure = 14,
        CompileFailure = 15,
        LinkFailure = 16,
        BackendFailure = 17,
        Uninitialized = 18,
        InvalidNullHandle = 19,
        InvalidPlatform = 20,
        InvalidDevice = 21,
        InvalidQueue = 22,
        InvalidEvent = 23,
        SymbolKind = 24,
    }
}

impl ErrorCode {
    /// The code with C value `value` (`Unknown` for a value no code has): codes that
    /// arrive from another process (remote devices).
    pub fn from_value(value: u32) -> ErrorCode {
        ErrorCode::try_from(value).unwrap_or(ErrorCode::Unknown)
    }

    /// The C spelling, used by tracing and by `Display`.
    pub fn name(self) -> &'static str {
        // The names are ASCII: this never falls back.
        self.c_name().to_str().unwrap_or_default()
    }

    /// The C spelling of the code with C value `value`, `OL_ERRC_UNKNOWN_CODE` for a value
    /// no code has (`olGetErrcName`'s answer).
    pub fn c_name_of(value: u32) -> &'static CStr {
        ErrorCode::try_from(value).map_or(c"OL_ERRC_UNKNOWN_CODE", ErrorCode::c_name)
    }

    /// The C spelling as a C string (`olGetErrcName` returns it): the one table of the
    /// codes' names.
    pub fn c_name(self) -> &'static CStr {
        match self {
            ErrorCode::Success => c"OL_ERRC_SUCCESS",
            ErrorCode::Unknown => c"OL_ERRC_UNKNOWN",
            ErrorCode::HostIo => c"OL_ERRC_HOST_IO",
            ErrorCode::InvalidBinary => c"OL_ERRC_INVALID_BINARY",
            ErrorCode::InvalidNullPointer => c"OL_ERRC_INVALID_NULL_POINTER",
            ErrorCode::InvalidArgument => c"OL_ERRC_INVALID_ARGUMENT",
            ErrorCode::NotFound => c"OL_ERRC_NOT_FOUND",
            ErrorCode::OutOfResources => c"OL_ERRC_OUT_OF_RESOURCES",
            ErrorCode::InvalidSize => c"OL_ERRC_INVALID_SIZE",
            ErrorCode::InvalidEnumeration => c"OL_ERRC_INVALID_ENUMERATION",
            ErrorCode::HostToolNotFound => c"OL_ERRC_HOST_TOOL_NOT_FOUND",
            ErrorCode::InvalidValue => c"OL_ERRC_INVALID_VALUE",
            ErrorCode::Unimplemented => c"OL_ERRC_UNIMPLEMENTED",
            ErrorCode::Unsupported => c"OL_ERRC_UNSUPPORTED",
            ErrorCode::AssembleFailure => c"OL_ERRC_ASSEMBLE_FAILURE",
            ErrorCode::CompileFailure => c"OL_ERRC_COMPILE_FAILURE",
            ErrorCode::LinkFailure => c"OL_ERRC_LINK_FAILURE",
            ErrorCode::BackendFailure => c"OL_ERRC_BACKEND_FAILURE",
            ErrorCode::Uninitialized => c"OL_ERRC_UNINITIALIZED",
            ErrorCode::InvalidNullHandle => c"OL_ERRC_INVALID_NULL_HANDLE",
            ErrorCode::InvalidPlatform => c"OL_ERRC_INVALID_PLATFORM",
            ErrorCode::InvalidDevice => c"OL_ERRC_INVALID_DEVICE",
            ErrorCode::InvalidQueue => c"OL_ERRC_INVALID_QUEUE",
            ErrorCode::InvalidEvent => c"OL_ERRC_INVALID_EVENT",
            ErrorCode::SymbolKind => c"OL_ERRC_SYMBOL_KIND",
        }
    }
}

/// An error with a code and a message saying what was wrong and what was expected.
///
/// Boxed, so `Result<(), Error>` is one pointer: every call passes results up through
/// several layers, and a pointer travels in a register where a 32-byte struct is copied
/// through memory at each level (the fast paths, info queries and launches, are a few
/// tens of nanoseconds). Its fields read as `error.code` and `error.details`.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInfo>);

/// What an `Error` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    pub details: String,
}

impl std::ops::Deref for Error {
    type Target = ErrorInfo;
    fn deref(&self) -> &ErrorInfo {
        &self.0
    }
}

impl std::ops::DerefMut for Error {
    fn deref_mut(&mut self) -> &mut ErrorInfo {
        &mut self.0
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Error {
    pub fn new(code: ErrorCode, details: impl Into<String>) -> Self {
        Error(Box::new(ErrorInfo {
            code,
            details: details.into(),
        }))
    }

    /// The same message under another code.
    pub fn with_code(mut self, code: ErrorCode) -> Self {
        self.code = code;
        self
    }

    /// Prefixes the message with what was being done, keeping the code.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.details = format!("{what}: {}", self.details);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.details)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand constructors, one per code the runtime raises often.
macro_rules! error_ctor {
    ($($fn_name:ident => $code:ident),* $(,)?) => {
        impl Error {
            $(pub fn $fn_name(details: impl Into<String>) -> Self {
                Error::new(ErrorCode::$code, details)
            })*
        }
    };
}

error_ctor! {
    invalid_argument => InvalidArgument,
    invalid_size => InvalidSize,
    invalid_value => InvalidValue,
    invalid_binary => InvalidBinary,
    invalid_enumeration => InvalidEnumeration,
    not_found => NotFound,
    unsupported => Unsupported,
    out_of_resources => OutOfResources,
    backend_failure => BackendFailure,
    uninitialized => Uninitialized,
    unknown => Unknown,
    symbol_kind => SymbolKind,
    null_pointer => InvalidNullPointer,
    null_handle => InvalidNullHandle,
}
