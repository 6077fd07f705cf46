//! A running command ([`Proc`]): its output captured as it comes by one
//! thread per stream, its exit awaited by another, and its whole process
//! tree killed when it is dropped or runs past its time.

use crate::cmd::{Cmd, Exit, Output, shorten};
use crate::error::{Error, Result};
use crate::procfs;
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// After a process exits, how long to wait for the rest of its output: a
/// child it left behind may hold the pipes open indefinitely.
const OUTPUT_GRACE: Duration = Duration::from_millis(200);

struct State {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: Option<ExitStatus>,
    exited_at: Option<Instant>,
    open_streams: u8,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl State {
    /// It has exited and its output is read (or [`OUTPUT_GRACE`] has
    /// passed since it exited): the exit status can arrive before the
    /// reader threads have drained the pipes.
    fn finished(&self, now: Instant) -> bool {
        let drained =
            self.open_streams == 0 || self.exited_at.is_some_and(|t| now >= t + OUTPUT_GRACE);
        self.status.is_some() && drained
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a change, at most until `deadline`, and no later than
    /// the end of the output grace after an exit (when
    /// [`State::finished`] turns true without a change).
    fn wait<'a>(&self, st: MutexGuard<'a, State>, deadline: Instant) -> MutexGuard<'a, State> {
        let until = match st.exited_at {
            Some(t) => (t + OUTPUT_GRACE).min(deadline),
            None => deadline,
        };
        let wait = until
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        self.changed
            .wait_timeout(st, wait)
            .unwrap_or_else(|e| e.into_inner())
            .0
    }
}

/// A running command, started by [`crate::Lab::spawn`]. Its output is
/// captured as it comes; dropping it kills it and every process it
/// started (the whole tree, found through `/proc`).
pub struct Proc {
    cmdline: String,
    /// The process we started (in a lab, `nsenter`, whose child is the
    /// command itself).
    launcher: u32,
    /// Whether `launcher` forks the command (nsenter into a PID namespace).
    forks: bool,
    pid: OnceLock<u32>,
    default_timeout: Duration,
    started: Instant,
    shared: Arc<Shared>,
    timed_out: bool,
}

impl Proc {
    /// Starts `command` with its output captured. `forks` says that the
    /// process started is a launcher (`nsenter`) whose only child is the
    /// command.
    pub(crate) fn start(mut command: Command, cmd: &Cmd, forks: bool) -> Result<Proc> {
        let cmdline = cmd.display();
        command
            .stdin(if cmd.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| {
            Error::new(format!(
                "could not start `{}`: {e}",
                shorten(&cmdline, 2000)
            ))
        })?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                stdout: Vec::new(),
                stderr: Vec::new(),
                status: None,
                exited_at: None,
                open_streams: 2,
            }),
            changed: Condvar::new(),
        });
        if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), cmd.stdin.clone()) {
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let out = child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>);
        let err = child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>);
        for (stream, is_err) in [(out, false), (err, true)] {
            let Some(mut stream) = stream else { continue };
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    let n = stream.read(&mut buf).unwrap_or(0);
                    let mut st = shared.lock();
                    if n == 0 {
                        st.open_streams -= 1;
                        shared.changed.notify_all();
                        return;
                    }
                    let target = if is_err {
                        &mut st.stderr
                    } else {
                        &mut st.stdout
                    };
                    target.extend_from_slice(&buf[..n]);
                    shared.changed.notify_all();
                }
            });
        }
        let launcher = child.id();
        let waiter = Arc::clone(&shared);
        std::thread::spawn(move || {
            let status = child.wait();
            let mut st = waiter.lock();
            st.status = Some(status.unwrap_or_else(|_| {
                std::os::unix::process::ExitStatusExt::from_raw(libc::SIGKILL)
            }));
            st.exited_at = Some(Instant::now());
            waiter.changed.notify_all();
        });
        Ok(Proc {
            cmdline,
            launcher,
            forks,
            pid: OnceLock::new(),
            default_timeout: cmd.timeout,
            started: Instant::now(),
            shared,
            timed_out: false,
        })
    }

    /// The command line ([`Cmd::display`]).
    pub fn cmdline(&self) -> &str {
        &self.cmdline
    }

    /// The command's process id as the test process sees it, to signal
    /// it; `None` if it exited before it could be read.
    pub fn pid(&self) -> Option<u32> {
        if !self.forks {
            return Some(self.launcher);
        }
        if let Some(&p) = self.pid.get() {
            return Some(p);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Some(&p) = procfs::children_of(self.launcher).first() {
                return Some(*self.pid.get_or_init(|| p));
            }
            if !self.is_running() || Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Sends `signal` (`libc::SIGTERM`, `libc::SIGINT`, ...) to the
    /// command itself.
    pub fn signal(&self, signal: i32) {
        if let Some(pid) = self.pid() {
            procfs::signal(pid, signal);
        }
    }

    /// Whether the command is still running.
    pub fn is_running(&self) -> bool {
        self.shared.lock().status.is_none()
    }

    /// What it has printed on standard output so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.shared.lock().stdout).into_owned()
    }

    /// What it has printed on standard error so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.shared.lock().stderr).into_owned()
    }

    /// Waits until `text` appears in its standard output or error. Fails
    /// if it exits first or `timeout` passes, with what it printed.
    pub fn wait_for_output(&self, text: &str, timeout: Duration) -> Result<()> {
        self.wait_for_matches(text, 1, timeout)
    }

    /// Waits until `text` has appeared `n` times in its standard output
    /// and error together (`n` switches' FEATURES_REPLY in a controller's
    /// log). Fails if it exits first or `timeout` passes.
    pub fn wait_for_matches(&self, text: &str, n: usize, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        loop {
            let count = |b: &[u8]| String::from_utf8_lossy(b).matches(text).count();
            let seen = count(&st.stdout) + count(&st.stderr);
            if seen >= n {
                return Ok(());
            }
            let now = Instant::now();
            let exited = st.finished(now);
            if exited || now >= deadline {
                let why = if exited {
                    "it exited first"
                } else {
                    "timed out"
                };
                drop(st);
                return Err(Error::new(format!(
                    "waiting {:.1} s for `{text}` {n} times in the output (seen {seen}): {why}\n{}",
                    timeout.as_secs_f64(),
                    self.snapshot().describe()
                )));
            }
            st = self.shared.wait(st, deadline);
        }
    }

    /// Waits for it to exit, at most the [`Cmd::timeout`] it was started
    /// with; see [`Proc::wait_timeout`].
    pub fn wait(&mut self) -> Result<Output> {
        self.wait_timeout(self.default_timeout)
    }

    /// Waits at most `timeout` for it to exit and returns its output,
    /// whatever its status. If it is still running then, it is killed and
    /// this fails with what it printed.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<Output> {
        if self.wait_exit(Instant::now() + timeout) {
            return Ok(self.snapshot());
        }
        self.timed_out = true;
        self.kill_tree();
        self.wait_exit(Instant::now() + Duration::from_secs(5));
        Err(Error::new(format!(
            "timed out after {:.1} s\n{}",
            timeout.as_secs_f64(),
            self.snapshot().describe()
        )))
    }

    /// Waits at most `timeout` for it to exit and returns its output, or
    /// `None`, leaving it running, if it has not exited by then.
    pub fn wait_until_exit(&self, timeout: Duration) -> Option<Output> {
        self.wait_exit(Instant::now() + timeout)
            .then(|| self.snapshot())
    }

    /// Kills it and every process it started, and returns what it printed.
    pub fn kill(&mut self) -> Output {
        self.kill_tree();
        self.wait_exit(Instant::now() + Duration::from_secs(5));
        self.snapshot()
    }

    /// Waits until it has exited and its output is read (or
    /// [`OUTPUT_GRACE`] has passed since it exited), or until `deadline`.
    /// Returns whether it exited.
    fn wait_exit(&self, deadline: Instant) -> bool {
        let mut st = self.shared.lock();
        loop {
            let now = Instant::now();
            if st.finished(now) {
                return true;
            }
            if now >= deadline {
                return st.status.is_some();
            }
            st = self.shared.wait(st, deadline);
        }
    }

    /// SIGKILL to the command and everything below it, then to the
    /// launcher (in that order: a launcher killed first would orphan the
    /// command, and it would no longer be found below it).
    fn kill_tree(&self) {
        for _ in 0..3 {
            let below = procfs::descendants(self.launcher);
            if below.is_empty() {
                break;
            }
            for &p in below.iter().rev() {
                procfs::signal(p, libc::SIGKILL);
            }
        }
        if self.is_running() {
            procfs::signal(self.launcher, libc::SIGKILL);
        }
    }

    /// Its output so far, as an [`Output`].
    fn snapshot(&self) -> Output {
        let st = self.shared.lock();
        use std::os::unix::process::ExitStatusExt;
        let exit = match st.status {
            _ if self.timed_out => Exit::TimedOut,
            // nsenter reports its child's death by signal as 128 + signal.
            Some(s) => match (s.code(), s.signal()) {
                (Some(c), _) if self.forks && c > 128 && c < 128 + 32 => Exit::Signal(c - 128),
                (Some(c), _) => Exit::Code(c),
                (None, Some(sig)) => Exit::Signal(sig),
                (None, None) => Exit::Signal(0),
            },
            None => Exit::Signal(0),
        };
        Output {
            cmdline: self.cmdline.clone(),
            exit,
            stdout: String::from_utf8_lossy(&st.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&st.stderr).into_owned(),
            elapsed: st
                .exited_at
                .unwrap_or_else(Instant::now)
                .duration_since(self.started),
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.is_running() {
            self.kill_tree();
            self.wait_exit(Instant::now() + Duration::from_secs(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::Exit;

    fn local(cmd: &Cmd) -> Proc {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args);
        Proc::start(c, cmd, false).expect("starts")
    }

    #[test]
    fn captures_output_and_status() {
        let cmd = Cmd::sh("echo out; echo err >&2; exit 3");
        let out = local(&cmd).wait().expect("finishes");
        assert_eq!(out.exit, Exit::Code(3));
        assert_eq!(out.stdout, "out\n");
        assert_eq!(out.stderr, "err\n");
        let text = out.check().expect_err("exit 3 is a failure").to_string();
        assert!(text.contains("exit status 3"), "{text}");
        assert!(text.contains("err"), "{text}");
    }

    #[test]
    fn a_command_past_its_limit_is_killed_with_its_children() {
        let cmd = Cmd::sh("sleep 30 & echo started; wait");
        let mut p = local(&cmd);
        p.wait_for_output("started", Duration::from_secs(5))
            .expect("prints");
        let below = procfs::descendants(p.pid().expect("running"));
        assert_eq!(below.len(), 1, "the sleep");
        let t = Instant::now();
        let err = p
            .wait_timeout(Duration::from_millis(100))
            .expect_err("killed");
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(err.to_string().contains("timed out"), "{err}");
        assert!(!procfs::alive(below[0]), "the sleep was killed too");
    }

    #[test]
    fn stdin_is_fed_and_output_awaited() {
        let cmd = Cmd::new("cat").stdin("hello\n");
        let p = local(&cmd);
        p.wait_for_output("hello", Duration::from_secs(5))
            .expect("echoed");
        let missing = p.wait_for_output("never", Duration::from_millis(300));
        assert!(missing.is_err());
    }

    #[test]
    fn matches_are_counted_over_both_streams() {
        let p = local(&Cmd::sh("echo ready; echo ready >&2; sleep 5"));
        p.wait_for_matches("ready", 2, Duration::from_secs(5))
            .expect("twice");
        let err = p
            .wait_for_matches("ready", 3, Duration::from_millis(200))
            .expect_err("not thrice");
        assert!(err.to_string().contains("(seen 2): timed out"), "{err}");
    }
}
