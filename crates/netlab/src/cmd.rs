//! Commands run in a laboratory: what to run and where ([`Cmd`]), and
//! the result of a finished one ([`Output`]). A running one is a
//! [`crate::Proc`].

use crate::error::{Error, Result};
use std::fmt::Write as _;
use std::time::Duration;

/// How long a command may run when its [`Cmd`] does not say: long enough
/// for any configuration command on a loaded 2-core machine (they take
/// milliseconds), short enough that a hung one fails the test promptly.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of each stream a failure message shows (the end of it).
const SHOWN_BYTES: usize = 6000;

/// Where in a laboratory a command runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Place {
    /// The laboratory's own network namespace: the switches' ports, the
    /// loopback a controller listens on, the OVS daemons.
    #[default]
    Lab,
    /// The network namespace of the named host.
    Host(String),
}

/// A command to run in a laboratory: program, arguments, environment,
/// where ([`Place`]) and a time limit. Built like `std::process::Command`:
///
/// ```
/// use baton_netlab::Cmd;
/// use std::time::Duration;
/// let ping = Cmd::new("ping").args(["-c", "1", "10.0.0.2"]).host("h1");
/// let dump = Cmd::sh("ovs-ofctl dump-flows s1 | wc -l").timeout(Duration::from_secs(5));
/// # let _ = (ping, dump);
/// ```
#[derive(Clone, Debug)]
pub struct Cmd {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) place: Place,
    pub(crate) timeout: Duration,
    pub(crate) stdin: Option<Vec<u8>>,
}

impl Cmd {
    /// Runs `program` (looked up on `PATH`, which includes `/usr/sbin`).
    pub fn new(program: impl Into<String>) -> Cmd {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            place: Place::Lab,
            timeout: DEFAULT_TIMEOUT,
            stdin: None,
        }
    }

    /// Runs `script` with `sh -c`.
    pub fn sh(script: impl Into<String>) -> Cmd {
        Cmd::new("sh").arg("-c").arg(script)
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Cmd {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the command.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Cmd {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs the command in host `name`'s network namespace (default: the
    /// laboratory's own, see [`Place::Lab`]).
    pub fn host(mut self, name: impl Into<String>) -> Cmd {
        self.place = Place::Host(name.into());
        self
    }

    /// Runs the command at `place`.
    pub fn place(mut self, place: Place) -> Cmd {
        self.place = place;
        self
    }

    /// The longest the command may run before it is killed and the run
    /// fails ([`DEFAULT_TIMEOUT`] unless set). For [`crate::Lab::spawn`]
    /// it bounds only [`crate::Proc::wait`]'s default.
    pub fn timeout(mut self, limit: Duration) -> Cmd {
        self.timeout = limit;
        self
    }

    /// Bytes to write to the command's standard input (else it reads
    /// `/dev/null`).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Cmd {
        self.stdin = Some(bytes.into());
        self
    }

    /// The command as a shell would read it, with where it runs.
    pub fn display(&self) -> String {
        let mut s = match &self.place {
            Place::Lab => String::from("[lab] "),
            Place::Host(h) => format!("[{h}] "),
        };
        s.push_str(&quote(&self.program));
        for a in &self.args {
            s.push(' ');
            s.push_str(&quote(a));
        }
        if let Some(input) = &self.stdin {
            let text = String::from_utf8_lossy(input);
            s.push_str(&format!(" <<< {}", quote(&shorten(&text, 400))));
        }
        s
    }
}

/// `text` on one line (newlines become `; `), cut to about `max` bytes
/// with its full length said.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    let one_line = text.trim_end().replace('\n', "; ");
    if one_line.len() <= max {
        return one_line;
    }
    let mut end = max;
    while !one_line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &one_line[..end], one_line.len())
}

/// `arg` quoted for a POSIX shell when it needs to be.
pub(crate) fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@+%".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past its time limit and was killed.
    TimedOut,
}

/// A finished command: how it ended and everything it printed.
#[derive(Clone, Debug)]
pub struct Output {
    /// The command as run ([`Cmd::display`]).
    pub cmdline: String,
    /// How it ended.
    pub exit: Exit,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Output {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// The command, how it ended and the end of what it printed: the text
    /// a failure message carries.
    pub fn describe(&self) -> String {
        let mut s = format!("ran: {}\n", shorten(&self.cmdline, SHOWN_BYTES));
        let how = match self.exit {
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(sig) => format!("killed by signal {sig}"),
            Exit::TimedOut => "timed out and was killed".to_string(),
        };
        let _ = writeln!(s, "{how} after {:.3} s", self.elapsed.as_secs_f64());
        for (name, text) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if !text.trim().is_empty() {
                let _ = writeln!(s, "{name}:\n{}", tail(text, SHOWN_BYTES).trim_end());
            }
        }
        s
    }

    /// `Ok(self)` if it succeeded, else an error that describes it.
    pub fn check(self) -> Result<Output> {
        if self.success() {
            Ok(self)
        } else {
            Err(Error::new(self.describe()))
        }
    }
}

/// The last `max` bytes of `text` (whole characters), marked when cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... {start} bytes before]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split() {
        assert_eq!(quote("tcp:127.0.0.1:6653"), "tcp:127.0.0.1:6653");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        let c = Cmd::new("ping").args(["-c", "1"]).host("h1");
        assert_eq!(c.display(), "[h1] ping -c 1");
        let script = Cmd::new("sh").stdin("ip link\nip addr\n");
        assert_eq!(script.display(), "[lab] sh <<< 'ip link; ip addr'");
        assert_eq!(shorten(&"x".repeat(10), 4), "xxxx... (10 bytes)");
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("abc", 10), "abc");
        assert_eq!(tail("abcdef", 2), "[... 4 bytes before]\nef");
    }
}
