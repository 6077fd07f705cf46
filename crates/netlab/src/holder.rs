//! The namespace holder: the process that owns a laboratory's private
//! network, PID and mount namespaces, and whose end ends the laboratory.
//!
//! The test process starts
//! `unshare --net --pid --fork --kill-child --mount-proc --mount -- sh -c SCRIPT`
//! with a pipe on its standard input. `SCRIPT` brings up the loopback,
//! mounts a tmpfs on `/run` (so `ip netns add` keeps the hosts' namespaces
//! there, seen only inside the lab), disables IPv6 for every interface
//! made later, prints `ready` and becomes `cat`, PID 1 of the new PID
//! namespace, reading the pipe. When the test process closes the pipe or
//! dies (even by SIGKILL, the kernel closes it), `cat` reads end-of-file
//! and exits; the death of a PID namespace's init kills every process in
//! it; with no process left, the mount namespace (and the hosts'
//! namespaces mounted in it) and the network namespace (with its veths,
//! bridges and taps) go away.
//!
//! Commands enter the lab with `nsenter --target PID1 --mount --pid`,
//! plus `--net` for the lab's network namespace or
//! `--net=/proc/PID1/root/run/netns/HOST` for a host's; entering the PID
//! namespace makes `nsenter` fork, so the command is inside it and dies
//! with the lab.

use crate::cmd::Place;
use crate::deps;
use crate::error::{Error, Result};
use crate::procfs;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What PID 1 of a lab runs (see the module's documentation).
const SCRIPT: &str = r#"set -e
ip link set lo up
mount -t tmpfs -o mode=0755 netlab /run
mkdir /run/netns
for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 /proc/sys/net/ipv6/conf/default/disable_ipv6; do
    [ ! -e "$f" ] || echo 1 > "$f"
done
echo ready
exec cat >/dev/null 2>&1
"#;

/// How long the holder may take to print `ready` (it takes ~10 ms).
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// The running holder of one laboratory.
pub(crate) struct Holder {
    unshare: Child,
    stdin: Option<ChildStdin>,
    /// PID 1 of the lab's PID namespace, as the test process sees it.
    pid: u32,
}

impl Holder {
    /// Starts a holder and waits until it is ready.
    pub(crate) fn start() -> Result<Holder> {
        let mut unshare = Command::new("unshare")
            .args([
                "--net",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                "--mount",
            ])
            .args(["--", "sh", "-c", SCRIPT])
            .env("PATH", deps::path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::new(format!("could not start `unshare`: {e}")))?;
        let stdout = unshare.stdout.take().expect("piped");
        let mut stderr = unshare.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let ready = rx.recv_timeout(READY_TIMEOUT).unwrap_or_default();
        let mut fail = |unshare: &mut Child, why: &str| {
            let _ = unshare.kill();
            let _ = unshare.wait();
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            Error::new(format!(
                "starting the lab's namespaces (unshare --net --pid --mount): {why}\nstderr:\n{err}"
            ))
        };
        if ready.trim() != "ready" {
            return Err(fail(&mut unshare, "the holder did not report ready"));
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        let pid = loop {
            if let Some(&p) = procfs::children_of(unshare.id()).first() {
                break p;
            }
            if Instant::now() > deadline {
                return Err(fail(&mut unshare, "the holder's process was not found"));
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        // Drain stderr (empty unless something fails) so it never blocks.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Ok(Holder {
            stdin: unshare.stdin.take(),
            unshare,
            pid,
        })
    }

    /// PID 1 of the lab, as the test process sees it.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// A `Command` that runs a program at `place` inside the lab, with
    /// `cwd` as its working directory: `nsenter ... --`, to which the
    /// caller adds the program and its arguments.
    pub(crate) fn command(&self, place: &Place, cwd: &Path) -> Command {
        let pid = self.pid;
        let mut c = Command::new("nsenter");
        c.arg(format!("--target={pid}")).args(["--mount", "--pid"]);
        match place {
            Place::Lab => c.arg("--net"),
            Place::Host(h) => c.arg(format!("--net=/proc/{pid}/root/run/netns/{h}")),
        };
        c.arg(format!("--wd={}", cwd.display())).arg("--");
        c.env("PATH", deps::path());
        c
    }

    /// Ends the lab: closes the pipe (PID 1 exits and the kernel kills
    /// every process of the lab) and waits for `unshare` to exit; after
    /// `timeout`, kills PID 1 and `unshare` outright. Returns whether it
    /// ended within `timeout`.
    pub(crate) fn stop(&mut self, timeout: Duration) -> bool {
        drop(self.stdin.take());
        if wait_child(&mut self.unshare, timeout) {
            return true;
        }
        procfs::signal(self.pid, libc::SIGKILL);
        let _ = self.unshare.kill();
        wait_child(&mut self.unshare, Duration::from_secs(10));
        false
    }
}

/// Waits up to `timeout` for `child` to exit; returns whether it did.
fn wait_child(child: &mut Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if !matches!(child.try_wait(), Ok(None)) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.stop(Duration::from_secs(10));
        }
    }
}
