//! The message of a caught panic, for the error or fatal message that replaces it.
//! Compiled into the MPI transport too (by path), which does not link the runtime.

/// The text a panic was raised with.
pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("a panic with no message")
    }
}
