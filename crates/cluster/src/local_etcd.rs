//! # etcd members on loopback, for tests
//!
//! This module owns the etcd clusters that tests run: [`LocalEtcd`]
//! starts 1 or 3 `etcd` child processes, each with its own data directory
//! under a fresh temporary directory and its client and peer ports picked
//! free on 127.0.0.1 (never the well-known 2379/2380, which a system etcd
//! may hold), waits until every member answers, can stop and restart a
//! member (to show failover), and kills every member and removes the
//! directory when dropped, even when the test panics.
//!
//! The members use short raft timers (`--heartbeat-interval 100
//! --election-timeout 1000`) so elections take about a second. Each
//! member's log (`--log-level warn`) is kept in the temporary directory and
//! shown when it fails to start.
//!
//! When `etcd` is missing, [`ensure_installed`] runs
//! `scripts/install-e2e-deps.sh` (as crates/netlab does), and
//! [`LocalEtcd::start`] fails with a message saying how to get it: a test
//! that needs etcd fails rather than passes without it.

use crate::etcd::Etcd;
use std::fs::{self, File};
use std::io;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a member may take to answer after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a member may take to exit after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The script that installs etcd (and the laboratory's other tools).
const INSTALL_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scripts/install-e2e-deps.sh"
);

/// One member: its name, ports, data directory, and process while running.
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

/// A cluster of etcd members on loopback (see the module's doc).
///
/// Each member gets `PR_SET_PDEATHSIG` (SIGKILL): it dies with the thread
/// that started it, so a test killed outright leaves no etcd behind. Keep
/// a `LocalEtcd` on the thread that made it.
pub struct LocalEtcd {
    dir: PathBuf,
    members: Vec<Member>,
}

impl LocalEtcd {
    /// Starts a cluster of `members` members (1 or 3 make sense) and waits
    /// until every one answers its status with a leader (at most about 20
    /// s); the error carries a failing member's log tail. Tries once more
    /// with other ports if the first start fails (a port picked free may
    /// have been taken meanwhile).
    pub fn start(members: usize) -> io::Result<LocalEtcd> {
        if members == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a cluster needs a member",
            ));
        }
        ensure_installed()?;
        match Self::start_once(members) {
            Ok(c) => Ok(c),
            Err(first) => Self::start_once(members).map_err(|second| {
                io::Error::other(format!("{second}\n(a first try failed too: {first})"))
            }),
        }
    }

    fn start_once(n: usize) -> io::Result<LocalEtcd> {
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "baton-etcd-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        let ports = free_ports(2 * n)?;
        let members = (0..n)
            .map(|i| Member {
                name: format!("m{i}"),
                client_port: ports[2 * i],
                peer_port: ports[2 * i + 1],
                child: None,
            })
            .collect();
        // From here on, Drop cleans up.
        let mut cluster = LocalEtcd { dir, members };
        for i in 0..n {
            cluster.spawn(i, "new")?;
        }
        for i in 0..n {
            cluster.wait_ready(i)?;
        }
        Ok(cluster)
    }

    /// The client URL of each member, like `"http://127.0.0.1:PORT"`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client_port))
            .collect()
    }

    /// A client of every member, with a 5 s timeout.
    pub fn client(&self) -> Etcd {
        Etcd::new(&self.endpoints(), Duration::from_secs(5))
    }

    /// The temporary directory holding the members' data and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kills member `i` (SIGTERM, then SIGKILL after a few seconds) and
    /// waits for it to exit. Nothing happens if it is not running.
    pub fn stop_member(&mut self, i: usize) {
        if let Some(child) = self.members.get_mut(i).and_then(|m| m.child.take()) {
            stop(child);
        }
    }

    /// Starts member `i` again with the same data directory and ports
    /// (`--initial-cluster-state existing`) and waits until it answers
    /// with a leader.
    pub fn start_member(&mut self, i: usize) -> io::Result<()> {
        if i >= self.members.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no member {i}"),
            ));
        }
        if self.members[i].child.is_some() {
            return Ok(());
        }
        self.spawn(i, "existing")?;
        self.wait_ready(i)
    }

    /// Whether the `etcd` program is there (on `PATH`, or `/usr/bin/etcd`).
    pub fn available() -> bool {
        etcd_program().is_some()
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{}.log", self.members[i].name))
    }

    fn spawn(&mut self, i: usize, state: &str) -> io::Result<()> {
        let program = etcd_program()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "etcd is not installed"))?;
        let initial_cluster = self
            .members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let m = &self.members[i];
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path(i))?;
        let mut cmd = Command::new(program);
        cmd.arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(self.dir.join(format!("{}.etcd", m.name)))
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args(["--initial-cluster", &initial_cluster])
            .args(["--initial-cluster-state", state])
            .args(["--initial-cluster-token", "baton-test"])
            .args(["--heartbeat-interval", "100", "--election-timeout", "1000"])
            .args([
                "--logger",
                "zap",
                "--log-outputs",
                "stderr",
                "--log-level",
                "warn",
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of
        // the parent; it runs in the child between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        self.members[i].child = Some(child);
        Ok(())
    }

    /// Waits until member `i` answers its status and knows a leader.
    fn wait_ready(&mut self, i: usize) -> io::Result<()> {
        let endpoint = self.endpoints()[i].clone();
        let client = Etcd::new(std::slice::from_ref(&endpoint), Duration::from_secs(1));
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(child) = self.members[i].child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.members[i].child = None;
                    return Err(self.failed(i, &format!("exited with {status}")));
                }
            }
            let last = match client.status(&endpoint) {
                Ok(s) if s.leader != 0 => return Ok(()),
                Ok(_) => "no leader yet".to_string(),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(self.failed(i, &format!("not ready after {START_TIMEOUT:?}: {last}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// An error about member `i` with the tail of its log.
    fn failed(&self, i: usize, why: &str) -> io::Error {
        let log = fs::read_to_string(self.log_path(i)).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        io::Error::other(format!(
            "etcd member {} ({}) {why}; its log ends with:\n{tail}",
            self.members[i].name,
            self.endpoints()[i]
        ))
    }
}

impl Drop for LocalEtcd {
    fn drop(&mut self) {
        let children: Vec<Child> = self
            .members
            .iter_mut()
            .filter_map(|m| m.child.take())
            .collect();
        for mut child in children {
            // Quick: SIGKILL; the data is thrown away anyway.
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERM, then SIGKILL if it has not exited within [`STOP_TIMEOUT`].
fn stop(mut child: Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on our own child, which has not been reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `n` distinct ports that were free on 127.0.0.1 a moment ago.
fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect()
}

/// The `etcd` program: on `PATH`, or `/usr/bin/etcd`.
fn etcd_program() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join("etcd"))
        .chain([PathBuf::from("/usr/bin/etcd")])
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Makes sure `etcd` is installed: when it is missing, runs
/// `scripts/install-e2e-deps.sh` (as root, or through sudo), once per
/// process. Fails with a message saying how to install it otherwise.
pub fn ensure_installed() -> io::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        if LocalEtcd::available() {
            return Ok(());
        }
        let out = Command::new("bash")
            .arg(INSTALL_SCRIPT)
            .output()
            .map_err(|e| format!("etcd is missing and {INSTALL_SCRIPT} could not run: {e}"))?;
        if LocalEtcd::available() {
            return Ok(());
        }
        Err(format!(
            "the tests need etcd (Debian: apt-get install etcd-server etcd-client) and installing \
             it failed: run {INSTALL_SCRIPT} as root (exit status {:?})\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        ))
    })
    .clone()
    .map_err(io::Error::other)
}
