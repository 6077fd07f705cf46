//! The laboratory's one error type: a message that says what was being
//! done, followed by what ran and what it printed.

use std::fmt;

/// Something in the laboratory failed. The text names the step (for
/// example `adding switch s1`), and where a command was involved, the
/// command line, its exit status, how long it ran and what it printed, so
/// a failing test's output is enough to see why.
///
/// `Debug` prints the same text as `Display`, so `.unwrap()` and a test
/// returning `Result` show it readably.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    msg: String,
}

/// A `Result` with the laboratory's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error saying `msg`.
    pub fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into() }
    }

    /// The same error, with `step` put in front of it
    /// (`adding switch s1: ...`).
    pub fn context(self, step: impl fmt::Display) -> Error {
        Error {
            msg: format!("{step}: {}", self.msg),
        }
    }

    /// The whole text of the error.
    pub fn message(&self) -> &str {
        &self.msg
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "netlab: {}", self.msg)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::new(e.to_string())
    }
}

/// Adds a step's name to an error, as [`Error::context`] does.
pub(crate) trait Context<T> {
    /// The result, its error prefixed with the step `f` names.
    fn context<D: fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context<D: fmt::Display>(self, f: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}
