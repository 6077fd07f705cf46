//! The controllers `baton bench compare` can start, and their life cycle:
//! pick a free port, start the controller pinned with `taskset -c CPUS`,
//! wait until it accepts connections, run, then stop it (SIGTERM, then
//! SIGKILL after 3 s).
//!
//! Target names: `baton[:SCHEDULER][:pin][:apps=APPS]` (the `baton` binary
//! next to the current executable, or `--baton PATH`; APPS is `default`,
//! what `baton run` runs with no `--apps`, or names joined by `+`, such as
//! `apps=topology+devices+routing`; without it, `learning-switch`, as the
//! papers measure), `ovs-testcontroller` (Debian
//! `openvswitch-testcontroller`), `os-ken` (os-ken's `simple_switch`, from
//! `scripts/install-peers.sh`), `responder` (this crate's ceiling),
//! `responder:learning` (the ceiling of a learning switch: the responder
//! with the learning switch's MAC table), `responder:learning-l2` and
//! `responder:learning-exact` (the same, answering with the learning
//! switch's own FLOW_MOD, its L2 match by default or its exact match),
//! `minimal-learning` (an independent learning switch in C, OpenFlow 1.0
//! only, from `scripts/bench/build-minimal-learning.sh`) and
//! `external:HOST:PORT` (already running; not started or stopped).

use crate::Error;
pub use crate::cpus::{parse_cpu_list, pin_current_thread};
use crate::responder::ResponderMode;
use baton_openflow::Version;
use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A controller to compare.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Target {
    /// `baton run --scheduler NAME [--pin] [--apps APPS]`.
    Baton {
        /// The scheduler.
        scheduler: String,
        /// Pass `--pin`.
        pin: bool,
        /// The applications.
        apps: BatonApps,
    },
    /// `ovs-testcontroller ptcp:PORT:127.0.0.1`.
    OvsTestController,
    /// os-ken's simple_switch.
    OsKen,
    /// `scripts/bench/minimal-learning.c`, built into the peers directory.
    MinimalLearning,
    /// `baton bench responder [--learning [--exact-match]]`.
    Responder(ResponderMode),
    /// A controller that is already running.
    External(String),
}

impl std::str::FromStr for Target {
    type Err = Error;
    fn from_str(s: &str) -> Result<Target, Error> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("external:") {
            return Ok(Target::External(rest.to_string()));
        }
        let mut parts = s.split(':');
        match parts.next() {
            Some("baton") => {
                let mut scheduler = "fair".to_string();
                let mut pin = false;
                let mut apps = BatonApps::LearningSwitch;
                for p in parts {
                    if p == "pin" {
                        pin = true;
                    } else if let Some(value) = p.strip_prefix("apps=") {
                        apps = BatonApps::parse(value)?;
                    } else if !p.is_empty() {
                        scheduler = p.to_string();
                    }
                }
                Ok(Target::Baton {
                    scheduler,
                    pin,
                    apps,
                })
            }
            Some("ovs-testcontroller" | "ovs") => Ok(Target::OvsTestController),
            Some("os-ken" | "osken") => Ok(Target::OsKen),
            Some("minimal-learning") => Ok(Target::MinimalLearning),
            Some("responder") => match parts.next() {
                None => Ok(Target::Responder(ResponderMode::Template)),
                Some("learning") => Ok(Target::Responder(ResponderMode::Learning)),
                Some("learning-l2") => Ok(Target::Responder(ResponderMode::LearningL2)),
                Some("learning-exact") => Ok(Target::Responder(ResponderMode::LearningExact)),
                Some(other) => Err(Error::new(format!(
                    "unknown responder `{other}` in `{s}` (responder, responder:learning, responder:learning-l2, responder:learning-exact)"
                ))),
            },
            _ => Err(Error::new(format!(
                "unknown target `{s}` (baton[:SCHEDULER][:pin][:apps=default|A+B], ovs-testcontroller, os-ken, minimal-learning, responder[:learning|:learning-l2|:learning-exact], external:HOST:PORT)"
            ))),
        }
    }
}

impl Target {
    /// The label in tables.
    pub fn label(&self) -> String {
        match self {
            Target::Baton {
                scheduler,
                pin,
                apps,
            } => format!(
                "baton:{scheduler}{}{}",
                if *pin { ":pin" } else { "" },
                apps.label()
            ),
            Target::OvsTestController => "ovs-testcontroller".into(),
            Target::OsKen => "os-ken".into(),
            Target::MinimalLearning => "minimal-learning".into(),
            Target::Responder(ResponderMode::Template) => "responder".into(),
            Target::Responder(ResponderMode::Learning) => "responder:learning".into(),
            Target::Responder(ResponderMode::LearningL2) => "responder:learning-l2".into(),
            Target::Responder(ResponderMode::LearningExact) => "responder:learning-exact".into(),
            Target::External(a) => format!("external:{a}"),
        }
    }

    /// Why this target cannot run a case, if it cannot.
    pub fn unsupported(&self, switches: usize) -> Option<String> {
        match self {
            Target::OvsTestController if switches > 16 => {
                Some("ovs-testcontroller accepts at most 16 switches".into())
            }
            _ => None,
        }
    }
}

/// The applications a `baton` target runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum BatonApps {
    /// `--apps learning-switch`, what the papers benchmark (the target
    /// without `:apps=`).
    LearningSwitch,
    /// No `--apps`: what `baton run` runs by default (`apps=default`).
    Default,
    /// `--apps` with these, comma-separated (`apps=a+b`).
    Named(String),
}

impl BatonApps {
    /// Reads the value of `apps=`.
    fn parse(value: &str) -> Result<BatonApps, Error> {
        match value {
            "" => Err(Error::new("empty `apps=` (default, or names joined by +)")),
            "default" => Ok(BatonApps::Default),
            "learning-switch" => Ok(BatonApps::LearningSwitch),
            names => Ok(BatonApps::Named(names.replace('+', ","))),
        }
    }

    /// The `--apps` value to pass, if any.
    fn flag(&self) -> Option<String> {
        match self {
            BatonApps::LearningSwitch => Some("learning-switch".into()),
            BatonApps::Default => None,
            BatonApps::Named(names) => Some(names.clone()),
        }
    }

    /// The `:apps=` part of the label (none for the learning switch).
    fn label(&self) -> String {
        match self {
            BatonApps::LearningSwitch => String::new(),
            BatonApps::Default => ":apps=default".into(),
            BatonApps::Named(names) => format!(":apps={}", names.replace(',', "+")),
        }
    }
}

/// baton's schedulers (`baton run --scheduler`), for `baton:all`.
pub const BATON_SCHEDULERS: [&str; 5] = [
    "fair",
    "shared-queue",
    "static-partition",
    "dynamic-partition",
    "round-robin",
];

/// Parses `--targets`, expanding `baton:all[:pin]` to every scheduler.
pub fn parse_list(list: &[String]) -> Result<Vec<Target>, Error> {
    let mut out = Vec::new();
    for t in list {
        let parts: Vec<&str> = t.trim().split(':').collect();
        if parts.first() == Some(&"baton") && parts.contains(&"all") {
            for scheduler in BATON_SCHEDULERS {
                let one: Vec<&str> = parts
                    .iter()
                    .map(|&p| if p == "all" { scheduler } else { p })
                    .collect();
                out.push(one.join(":").parse()?);
            }
        } else {
            out.push(t.parse()?);
        }
    }
    Ok(out)
}

/// Where to find the programs.
#[derive(Debug, Clone)]
pub struct Programs {
    /// The `baton` binary.
    pub baton: PathBuf,
    /// The directory `scripts/install-peers.sh` filled.
    pub peers: PathBuf,
    /// CPUs for the controller (`taskset -c` list).
    pub controller_cpus: String,
    /// Worker threads for baton / the responder.
    pub workers: usize,
    /// Extra arguments for `baton run`.
    pub baton_args: Vec<String>,
    /// Where controller logs go.
    pub log_dir: PathBuf,
}

/// A started controller.
pub struct Running {
    /// Where the switches connect.
    pub addr: SocketAddr,
    /// Its pid (for CPU time), when we started it.
    pub pid: Option<u32>,
    child: Option<Child>,
    log: Option<PathBuf>,
}

/// A free TCP port on 127.0.0.1 (bind port 0, read it, close).
pub fn free_port() -> Result<u16, Error> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// `name` in a directory of `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The directory holding the current executable.
fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()?
        .parent()
        .map(Path::to_path_buf)
}

/// The `baton` binary: `--baton`, else next to the current executable.
pub fn default_baton() -> PathBuf {
    exe_dir().map_or_else(|| PathBuf::from("baton"), |d| d.join("baton"))
}

/// The peers directory: `target/peers` under the current directory, or
/// next to the target directory of the current executable.
pub fn default_peers() -> PathBuf {
    let local = PathBuf::from("target/peers");
    if local.exists() {
        return local;
    }
    exe_dir()
        .and_then(|d| d.parent().map(|t| t.join("peers")))
        .filter(|p| p.exists())
        .unwrap_or(local)
}

/// The command line that runs `baton bench responder`: this executable,
/// which is `baton`.
fn self_responder_args() -> (PathBuf, Vec<String>) {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("baton"));
    (exe, vec!["bench".to_string(), "responder".to_string()])
}

/// Starts `target` (pinned) and waits until it listens.
pub fn start(target: &Target, version: Version, p: &Programs, tag: &str) -> Result<Running, Error> {
    // Logs of this run go here, an external target's cbench output too.
    std::fs::create_dir_all(&p.log_dir)?;
    if let Target::External(a) = target {
        return Ok(Running {
            addr: crate::emulator::resolve(a)?,
            pid: None,
            child: None,
            log: None,
        });
    }
    let port = free_port()?;
    let listen = format!("127.0.0.1:{port}");
    let workers = p.workers.to_string();
    let (program, args): (PathBuf, Vec<String>) = match target {
        Target::Baton {
            scheduler,
            pin,
            apps,
        } => {
            let mut a = vec![
                "run".into(),
                "--listen".into(),
                listen.clone(),
                "--workers".into(),
                workers,
                "--scheduler".into(),
                scheduler.clone(),
                // Measured without the API unless `--baton-args` asks.
                "--api".into(),
                "off".into(),
            ];
            if *pin {
                a.push("--pin".into());
            }
            // The target's applications, unless the arguments name them.
            let named = p
                .baton_args
                .iter()
                .any(|a| a == "--apps" || a.starts_with("--apps="));
            if let Some(apps) = apps.flag().filter(|_| !named) {
                a.extend(["--apps".into(), apps]);
            }
            a.extend(p.baton_args.iter().cloned());
            (p.baton.clone(), a)
        }
        Target::OvsTestController => (
            which("ovs-testcontroller").ok_or_else(|| {
                Error::new("ovs-testcontroller not found: run scripts/install-peers.sh")
            })?,
            // Its control socket defaults to /var/run/openvswitch, which
            // need not exist; a short path (sockets have a 108-byte limit).
            vec![
                format!("--unixctl=/tmp/baton-bench-ovs-{port}.ctl"),
                format!("ptcp:{port}:127.0.0.1"),
            ],
        ),
        Target::OsKen => {
            let manager = p.peers.join("osken-venv/bin/osken-manager");
            let app = p.peers.join(match version {
                Version::V10 => "simple_switch.py",
                Version::V13 => "simple_switch_13.py",
            });
            if !manager.exists() || !app.exists() {
                return Err(Error::new(format!(
                    "os-ken not found in {} (run scripts/install-peers.sh)",
                    p.peers.display()
                )));
            }
            (
                manager,
                vec![
                    "--default-log-level".into(),
                    "30".into(),
                    "--ofp-listen-host".into(),
                    "127.0.0.1".into(),
                    "--ofp-tcp-listen-port".into(),
                    port.to_string(),
                    app.to_string_lossy().into_owned(),
                ],
            )
        }
        Target::MinimalLearning => {
            let program = p.peers.join("minimal-learning");
            if !program.exists() {
                return Err(Error::new(format!(
                    "minimal-learning not found in {} (run scripts/bench/build-minimal-learning.sh)",
                    p.peers.display()
                )));
            }
            (program, vec![port.to_string()])
        }
        Target::Responder(mode) => {
            let (exe, mut a) = self_responder_args();
            a.extend([
                "--listen".into(),
                listen.clone(),
                "--threads".into(),
                workers,
            ]);
            match mode {
                ResponderMode::Template => {}
                ResponderMode::Learning => a.push("--learning".into()),
                ResponderMode::LearningL2 => {
                    a.extend(["--learning".into(), "--l2-match".into()]);
                }
                ResponderMode::LearningExact => {
                    a.extend(["--learning".into(), "--exact-match".into()]);
                }
            }
            (exe, a)
        }
        Target::External(_) => unreachable!("handled above"),
    };
    let log = p.log_dir.join(format!("{tag}.log"));
    let out = File::create(&log)?;
    let err = out.try_clone()?;
    let mut cmd = match which("taskset") {
        Some(taskset) => {
            let mut c = Command::new(taskset);
            c.arg("-c").arg(&p.controller_cpus).arg(&program);
            c
        }
        None => Command::new(&program),
    };
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    let child = cmd
        .spawn()
        .map_err(|e| Error::new(format!("cannot start {}: {e}", program.display())))?;
    let pid = child.id();
    let mut running = Running {
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        pid: Some(pid),
        child: Some(child),
        log: Some(log),
    };
    running.wait_listening(Duration::from_secs(30))?;
    Ok(running)
}

impl Running {
    fn wait_listening(&mut self, limit: Duration) -> Result<(), Error> {
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(Error::new(format!(
                        "the controller exited ({status}) before listening: {}",
                        self.log_tail()
                    )));
                }
            }
            if start.elapsed() > limit {
                let tail = self.log_tail();
                self.stop();
                return Err(Error::new(format!(
                    "the controller did not listen on {} within {limit:?}: {tail}",
                    self.addr
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last lines of the controller's log.
    pub fn log_tail(&self) -> String {
        let Some(log) = &self.log else {
            return String::new();
        };
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }

    /// Stops the controller (SIGTERM, then SIGKILL after 3 s).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) on a pid we spawned and have not reaped yet,
            // so it cannot have been reused.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(
            "baton:static-partition".parse::<Target>().unwrap(),
            Target::Baton {
                scheduler: "static-partition".into(),
                pin: false,
                apps: BatonApps::LearningSwitch,
            }
        );
        let default: Target = "baton:fair:apps=default".parse().unwrap();
        assert_eq!(default.label(), "baton:fair:apps=default");
        let named: Target = "baton:apps=topology+devices".parse().unwrap();
        assert_eq!(named.label(), "baton:fair:apps=topology+devices");
        assert!(
            matches!(named, Target::Baton { apps: BatonApps::Named(ref n), .. } if n == "topology,devices")
        );
        assert!("baton:apps=".parse::<Target>().is_err());
        let every = parse_list(&["baton:all:apps=default".into()]).unwrap();
        assert!(every.iter().all(|t| t.label().ends_with(":apps=default")));
        let t: Target = "baton:fair:pin".parse().unwrap();
        assert_eq!(t.label(), "baton:fair:pin");
        assert_eq!("baton".parse::<Target>().unwrap().label(), "baton:fair");
        assert_eq!("ovs".parse::<Target>().unwrap(), Target::OvsTestController);
        assert_eq!("os-ken".parse::<Target>().unwrap(), Target::OsKen);
        assert_eq!(
            "external:10.0.0.1:6653".parse::<Target>().unwrap(),
            Target::External("10.0.0.1:6653".into())
        );
        assert!("nox".parse::<Target>().is_err());
        assert!(Target::OvsTestController.unsupported(64).is_some());
        assert!(Target::OvsTestController.unsupported(16).is_none());
        let all = parse_list(&["baton:all:pin".into(), "responder".into()]).unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(all[2].label(), "baton:static-partition:pin");
        assert_eq!(all[5], Target::Responder(ResponderMode::Template));
        for (name, mode) in [
            ("responder:learning", ResponderMode::Learning),
            ("responder:learning-l2", ResponderMode::LearningL2),
            ("responder:learning-exact", ResponderMode::LearningExact),
        ] {
            let t: Target = name.parse().unwrap();
            assert_eq!(t, Target::Responder(mode));
            assert_eq!(t.label(), name);
        }
        assert!("responder:hub".parse::<Target>().is_err());
    }

    #[test]
    fn free_ports_are_nonzero() {
        assert_ne!(free_port().unwrap(), 0);
    }
}
