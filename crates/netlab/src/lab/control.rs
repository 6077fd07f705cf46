//! [`Lab`]'s Open vSwitch and controllers: the daemons, `ovs-vsctl` and
//! `ovs-ofctl`, TLS, waiting for connections.

use super::{Lab, POLL};
use crate::cmd::Cmd;
use crate::error::{Context, Error, Result};
use crate::ovs::{self, CONTROLLER_PORT, OfVersion, SslFiles, SwitchKind, TestPki};
use crate::procfs;
use std::path::Path;
use std::time::{Duration, Instant};

impl Lab {
    /// Runs `ovs-vsctl` with `args` against the lab's database and
    /// returns what it printed.
    pub fn vsctl<I, S>(&self, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Ok(self
            .exec(Cmd::new("ovs-vsctl").arg("--timeout=30").args(args))?
            .stdout)
    }

    /// Runs `ovs-ofctl -O VERSION` with `args` (`["dump-ports", "s1"]`)
    /// and returns what it printed.
    pub fn ofctl<I, S>(&self, version: OfVersion, args: I) -> Result<String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let cmd = Cmd::new("ovs-ofctl")
            .args(["--timeout=10", "-O", version.ovs_name()])
            .args(args);
        Ok(self.exec(cmd)?.stdout)
    }

    /// The flows of `switch`'s tables, one line each as `ovs-ofctl -O
    /// VERSION dump-flows` prints them (`cookie=0x0, duration=..., ...`).
    pub fn dump_flows(&self, switch: &str, version: OfVersion) -> Result<Vec<String>> {
        let text = self.ofctl(version, ["dump-flows", switch])?;
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("cookie="))
            .map(String::from)
            .collect())
    }

    /// Starts `ovsdb-server` and `ovs-vswitchd` in the lab, if they are
    /// not running yet (~0.1 s); [`Lab::add_switch`] and [`Lab::build`]
    /// call it when they need it.
    pub fn ovs(&self) -> Result<()> {
        let mut st = self.state();
        if !st.ovs_running {
            self.script(ovs::START_DAEMONS)
                .context(|| "starting the OVS daemons")?;
            st.ovs_running = true;
        }
        Ok(())
    }

    /// Tells OVS the key and certificates to use for `ssl:` controller
    /// targets (`ovs-vsctl set-ssl`).
    pub fn set_ssl(&self, files: &SslFiles) -> Result<()> {
        self.ovs()?;
        let path = |p: &Path| p.to_string_lossy().into_owned();
        self.vsctl([
            "set-ssl".to_string(),
            path(&files.private_key),
            path(&files.certificate),
            path(&files.ca_cert),
        ])
        .map(drop)
        .context(|| "configuring TLS")
    }

    /// Makes a throw-away CA and a key and certificate for a switch and
    /// for a controller, in `<lab dir>/pki`.
    pub fn test_pki(&self) -> Result<TestPki> {
        let (script, pki) = ovs::pki_script(&self.dir.join("pki"));
        self.script(&script)
            .context(|| "making test certificates")?;
        Ok(pki)
    }

    /// Waits until `n` switches are connected to the controller on
    /// [`CONTROLLER_PORT`]; see [`Lab::wait_connections`].
    pub fn wait_controller_connections(&self, n: usize, timeout: Duration) -> Result<Duration> {
        self.wait_connections(CONTROLLER_PORT, n, timeout)
    }

    /// Waits until the lab holds at least `n` established TCP connections
    /// to port `port` (OVS's own `is_connected` lags by up to 5 s;
    /// OVS-NOTES) and returns how long that took.
    ///
    /// The kernel establishes a connection before the controller accepts
    /// it: this says the switches reached the controller, not that the
    /// controller took them (`ovs-testcontroller` serves at most 16
    /// switches and leaves the rest established but unanswered). Wait for
    /// the controller's own word (its log) where that matters.
    pub fn wait_connections(&self, port: u16, n: usize, timeout: Duration) -> Result<Duration> {
        let start = Instant::now();
        loop {
            let have = procfs::established_to_port(self.holder.pid(), port);
            if have >= n {
                return Ok(start.elapsed());
            }
            if start.elapsed() > timeout {
                let controllers = self
                    .vsctl([
                        "--columns=_uuid,target,is_connected,status",
                        "list",
                        "controller",
                    ])
                    .unwrap_or_else(|e| e.to_string());
                return Err(Error::new(format!(
                    "{have} of {n} connections to port {port} after {:.1} s\nOVS's controllers:\n{controllers}\n{}",
                    timeout.as_secs_f64(),
                    self.diagnostics()
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Makes every OVS bridge with controllers try to connect now, by
    /// taking its controllers away and giving them back (two
    /// transactions). A bridge made before its controller listens retries
    /// after 1, 2, 4, then 8 s whatever its `max_backoff` (see
    /// [`crate::SwitchOptions::max_backoff_ms`]); start the controller first, or
    /// call this once it listens.
    pub fn reconnect_controllers(&self) -> Result<()> {
        let st = self.state();
        let mut clear = Vec::new();
        let mut set = Vec::new();
        for (name, (_, opts)) in &st.switches {
            if opts.kind == SwitchKind::Ovs && !opts.controllers.is_empty() {
                clear.extend([
                    "--".to_string(),
                    "clear".into(),
                    "bridge".into(),
                    name.clone(),
                    "controller".into(),
                ]);
                set.extend(ovs::controller_args(name, opts));
            }
        }
        drop(st);
        if clear.is_empty() {
            return Ok(());
        }
        self.vsctl(clear)
            .context(|| "taking the controllers away")?;
        self.vsctl(set)
            .context(|| "giving the controllers back")
            .map(drop)
    }

    /// Removes every flow from OVS's datapath (`ovs-appctl
    /// revalidator/purge`), so the next packets are looked up in the
    /// OpenFlow tables again. Needed after traffic in secure mode with no
    /// controller connected: OVS then caches a `drop` datapath flow, which
    /// outlives the controller's connection for as long as packets keep
    /// hitting it (a host retrying ARP keeps it forever).
    pub fn purge_datapath_flows(&self) -> Result<()> {
        self.exec(Cmd::new("ovs-appctl").args(["--timeout=10", "revalidator/purge"]))
            .map(drop)
            .context(|| "purging the datapath flows")
    }

    /// The process id (as the machine sees it) of the lab's process whose
    /// program is `name` (`ovs-vswitchd`), to read its CPU time or memory
    /// from `/proc`; the first found if there are several.
    pub fn daemon_pid(&self, name: &str) -> Option<u32> {
        procfs::all_pids().into_iter().find(|&p| {
            procfs::ns_inode(p, "pid") == Some(self.pid_ns)
                && procfs::cmdline(p).is_some_and(|c| {
                    let program = c.split(' ').next().unwrap_or("");
                    program.rsplit('/').next() == Some(name)
                })
        })
    }

    /// Waits until something in the lab listens on TCP port `port` (a
    /// controller started with [`Lab::spawn`]).
    pub fn wait_listening(&self, port: u16, timeout: Duration) -> Result<Duration> {
        let start = Instant::now();
        while !procfs::listening_on(self.holder.pid(), port) {
            if start.elapsed() > timeout {
                return Err(Error::new(format!(
                    "nothing listens on port {port} after {:.1} s",
                    timeout.as_secs_f64()
                )));
            }
            std::thread::sleep(POLL);
        }
        Ok(start.elapsed())
    }
}
