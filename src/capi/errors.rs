//! Interned errors: every `ol_result_t` the library returns points into this table and
//! stays valid until process exit. Equal errors share one entry, so a program that fails
//! the same way in a loop does not grow memory.

use crate::capi::types::{ol_error_struct_t, ol_result_t};
use crate::plugin::foundation::error::Error;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::LazyLock;

/// Past this many distinct messages, new ones are folded into one per code.
const MAX_DISTINCT: usize = 16 * 1024;

struct Interned(&'static ol_error_struct_t);
// SAFETY: the struct is immutable after creation and its string is leaked, so sharing
// the reference between threads is sound.
unsafe impl Send for Interned {}

static TABLE: LazyLock<Mutex<HashMap<(u32, String), Interned>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

pub fn intern(error: &Error) -> ol_result_t {
    let mut table = TABLE.lock();
    let mut key = (error.code as u32, sanitize(&error.details));
    if table.len() >= MAX_DISTINCT && !table.contains_key(&key) {
        key.1 = format!(
            "{} (more than {MAX_DISTINCT} distinct error messages: details suppressed)",
            error.code.name()
        );
    }
    let entry = table.entry(key).or_insert_with_key(|(code, details)| {
        let details = CString::new(details.as_str()).unwrap_or_default();
        Interned(Box::leak(Box::new(ol_error_struct_t {
            Code: *code,
            Details: details.into_raw(),
        })))
    });
    entry.0 as *const ol_error_struct_t
}

/// C strings cannot hold NUL bytes; a message quoting user data might.
fn sanitize(details: &str) -> String {
    details.replace('\0', "\\0")
}

/// For Rust callers of the C API: `Err` with `what` and the error's details when
/// `result` is an error (one this library returned: it is looked up, not read).
pub fn checked(result: ol_result_t, what: &str) -> Result<(), String> {
    if result.is_null() {
        return Ok(());
    }
    let details = TABLE
        .lock()
        .iter()
        .find(|(_, interned)| std::ptr::eq(interned.0, result))
        .map_or_else(
            || format!("an error liboffload did not return ({result:p})"),
            |((_, details), _)| details.clone(),
        );
    Err(format!("{what} failed: {details}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_errors_share_one_entry() {
        let a = intern(&Error::not_found("x"));
        let b = intern(&Error::not_found("x"));
        let c = intern(&Error::invalid_size("x"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        // SAFETY: `intern` returns a pointer to a leaked, never-freed struct.
        assert_eq!(
            unsafe { (*c).Code },
            crate::capi::types::OL_ERRC_INVALID_SIZE
        );
    }
}
