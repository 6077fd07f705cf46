//! The crate's one error type: what was wrong, in words a user can act
//! on, and where (a line of a topology file, an item of a schedule).

use std::fmt;

/// Something the emulator cannot do, or input it cannot read.
#[derive(Debug)]
pub enum Error {
    /// A topology (a generator's name, an edge list, a JSON file) is not
    /// usable; the text says what and where.
    Topology(String),
    /// An event schedule does not parse or names what the topology lacks.
    Schedule(String),
    /// The configuration is inconsistent (a pair naming a host that does
    /// not exist, a zero interval).
    Config(String),
    /// Not every switch finished its handshake with the controller in
    /// time.
    Handshake {
        /// Switches whose handshake finished.
        ready: usize,
        /// Switches in the topology.
        total: usize,
        /// How long the emulator waited.
        waited: std::time::Duration,
    },
    /// A system call failed (`what` names the step).
    Io {
        /// The step: `polling`, `connecting to 127.0.0.1:6653`, ...
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// A `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error during step `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Topology(m) => write!(f, "topology: {m}"),
            Error::Schedule(m) => write!(f, "events: {m}"),
            Error::Config(m) => write!(f, "configuration: {m}"),
            Error::Handshake {
                ready,
                total,
                waited,
            } => write!(
                f,
                "only {ready} of {total} switches finished their handshake with the controller \
                 within {waited:?}"
            ),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
