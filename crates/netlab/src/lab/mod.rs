//! [`Lab`]: one laboratory: its namespaces, the commands run in it, its
//! end. Its switches, hosts and links are made in `build`, its Open
//! vSwitch and controllers handled in `control`, its pings in
//! [`crate::ping`].

mod build;
mod control;

pub use build::Counters;

use crate::cleanup::{self, LabInfo};
use crate::cmd::{Cmd, Output, Place, shorten, tail};
use crate::deps;
use crate::error::{Error, Result};
use crate::holder::Holder;
use crate::ovs::SwitchOptions;
use crate::process::Proc;
use crate::procfs;
use crate::topo::{Dpid, HostSpec, LinkSpec};
use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How many commands the journal keeps for a failure's diagnostics.
const JOURNAL_LEN: usize = 60;

/// How much of a command line a journal entry shows.
const JOURNAL_LINE: usize = 300;

/// How long closing a lab may take before its processes are killed
/// outright. The kernel takes most of it, destroying the lab's devices
/// when its namespace goes: ~0.1 s for a chain of 3, ~1 s for a k=4 fat
/// tree (20 bridges, 48 links), ~9 s for k=8 (80 bridges, 384 links) on a
/// 2-vCPU VM (BENCHMARKS.md).
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(60);

/// How often connection, listening and teardown states are polled.
const POLL: Duration = Duration::from_millis(10);

#[derive(Default)]
struct State {
    ovs_running: bool,
    switches: BTreeMap<String, (Dpid, SwitchOptions)>,
    /// Each host, and whether an interface already carries its address.
    hosts: BTreeMap<String, (HostSpec, bool)>,
    links: Vec<LinkSpec>,
}

impl State {
    fn has(&self, name: &str) -> bool {
        self.switches.contains_key(name) || self.hosts.contains_key(name)
    }
}

/// A laboratory: private network, PID and mount namespaces (see the
/// crate's documentation), with Open vSwitch, hosts and links made in
/// them. Everything in it ends when it is dropped or closed, or when the
/// test process dies.
///
/// Its methods take `&self`, so a test may ping from one thread while it
/// cuts links from another.
pub struct Lab {
    dir: PathBuf,
    holder: Holder,
    net_ns: u64,
    pid_ns: u64,
    state: Mutex<State>,
    journal: Mutex<VecDeque<String>>,
    closed: bool,
}

// Checked at compile time: a test may ping from one thread while it cuts
// links from another, and hand a running command to a thread.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Lab>();
    shared::<Proc>();
};

impl Lab {
    /// Makes an empty laboratory: namespaces, a loopback, nothing else
    /// (~10 ms). Needs root; installs the tools it lacks
    /// (`scripts/install-e2e-deps.sh`, once per process).
    pub fn new() -> Result<Lab> {
        deps::require_root()?;
        deps::ensure_installed()?;
        cleanup::sweep_stale();
        let dir = cleanup::new_lab_dir()?;
        let holder = match Holder::start() {
            Ok(h) => h,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let pid = holder.pid();
        let _ = fs::write(dir.join("holder.pid"), format!("{pid}\n"));
        Ok(Lab {
            net_ns: procfs::ns_inode(pid, "net").unwrap_or(0),
            pid_ns: procfs::ns_inode(pid, "pid").unwrap_or(0),
            dir,
            holder,
            state: Mutex::new(State::default()),
            journal: Mutex::new(VecDeque::new()),
            closed: false,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn note(&self, line: String) {
        let mut j = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        if j.len() == JOURNAL_LEN {
            j.pop_front();
        }
        j.push_back(line);
    }

    /// The lab's directory: `run` (OVS sockets and pid files), `log`, `db`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// PID 1 of the lab, as the machine sees it: `nsenter -t PID -n -m -p`
    /// enters the lab from a shell.
    pub fn holder_pid(&self) -> u32 {
        self.holder.pid()
    }

    /// How to recognise the lab from outside ([`crate::leftovers`]).
    pub fn info(&self) -> LabInfo {
        let root = format!("/proc/{}/root/run/netns", self.holder.pid());
        let host_net_ns = self
            .state()
            .hosts
            .keys()
            .filter_map(|h| {
                use std::os::unix::fs::MetadataExt;
                Some((h.clone(), fs::metadata(format!("{root}/{h}")).ok()?.ino()))
            })
            .collect();
        LabInfo {
            dir: self.dir.clone(),
            holder_pid: self.holder.pid(),
            net_ns: self.net_ns,
            pid_ns: self.pid_ns,
            host_net_ns,
        }
    }

    // ------------------------------------------------------------ commands

    fn command(&self, cmd: &Cmd) -> std::process::Command {
        let mut c = self.holder.command(&cmd.place, &self.dir);
        c.arg(&cmd.program).args(&cmd.args);
        c.env("OVS_RUNDIR", self.dir.join("run"))
            .env("OVS_LOGDIR", self.dir.join("log"))
            .env("OVS_DBDIR", self.dir.join("db"));
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        c
    }

    /// Starts `cmd` in the lab and returns at once; the [`Proc`] captures
    /// its output and kills it when dropped.
    pub fn spawn(&self, cmd: Cmd) -> Result<Proc> {
        if let Place::Host(h) = &cmd.place {
            if !self.state().hosts.contains_key(h) {
                return Err(Error::new(format!(
                    "`{}`: there is no host `{h}`",
                    cmd.display()
                )));
            }
        }
        let p = Proc::start(self.command(&cmd), &cmd, true)?;
        self.note(format!(
            "spawned: {}",
            shorten(&cmd.display(), JOURNAL_LINE)
        ));
        Ok(p)
    }

    /// Runs `cmd` to its end and returns its output whatever its exit
    /// status; fails if it cannot start or runs past its time limit.
    pub fn output(&self, cmd: Cmd) -> Result<Output> {
        let mut p = self.spawn(cmd)?;
        let out = p.wait();
        let status = match &out {
            Ok(o) => format!("{:?} in {:.3} s", o.exit, o.elapsed.as_secs_f64()),
            Err(_) => "timed out".to_string(),
        };
        self.note(format!(
            "ran: {} -> {status}",
            shorten(p.cmdline(), JOURNAL_LINE)
        ));
        out
    }

    /// Runs `cmd` to its end; fails unless it exits with status 0, with
    /// the command and what it printed.
    pub fn exec(&self, cmd: Cmd) -> Result<Output> {
        self.output(cmd)?.check()
    }

    /// Runs a shell script in the lab (`sh -e -x`: it stops at the first
    /// failing line, and the trace shows which).
    /// The script goes to the shell's standard input: one argument may
    /// not exceed 128 KiB, and a k=10 fat tree's script does.
    fn script(&self, script: &str) -> Result<Output> {
        self.exec(Cmd::new("sh").args(["-e", "-x"]).stdin(script))
    }

    // ------------------------------------------------- diagnostics, end

    /// The last commands run, and the end of the OVS daemons' logs: what
    /// a failing test prints (a lab dropped during a panic prints it).
    pub fn diagnostics(&self) -> String {
        let mut s = String::from("--- lab journal (last commands) ---\n");
        for line in self
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            s.push_str(line);
            s.push('\n');
        }
        for log in ["ovs-vswitchd.log", "ovsdb-server.log"] {
            if let Ok(text) = fs::read_to_string(self.dir.join("log").join(log)) {
                s.push_str(&format!(
                    "--- {log} (end) ---\n{}\n",
                    tail(&text, 4000).trim_end()
                ));
            }
        }
        s
    }

    /// Ends the lab now and checks that nothing of it remains; returns
    /// how long that took. Dropping a lab does the same, reporting
    /// leftovers on standard error instead.
    pub fn close(mut self) -> Result<Duration> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<Duration> {
        if self.closed {
            return Ok(Duration::ZERO);
        }
        self.closed = true;
        let start = Instant::now();
        let info = self.info();
        let ended = self.holder.stop(TEARDOWN_TIMEOUT);
        let _ = fs::remove_dir_all(&self.dir);
        let mut left = cleanup::leftovers(&info);
        while !left.is_empty() && start.elapsed() < TEARDOWN_TIMEOUT {
            std::thread::sleep(POLL);
            left = cleanup::leftovers(&info);
        }
        if !ended || !left.is_empty() {
            return Err(Error::new(format!(
                "closing the lab in {}: {}; left: {left:#?}",
                self.dir.display(),
                if ended {
                    "it ended"
                } else {
                    "its holder had to be killed"
                }
            )));
        }
        Ok(start.elapsed())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        if std::thread::panicking() {
            eprintln!(
                "netlab: the test failed; the lab in {}:\n{}",
                self.dir.display(),
                self.diagnostics()
            );
        }
        if let Err(e) = self.shutdown() {
            eprintln!("netlab: {e}");
        }
    }
}
