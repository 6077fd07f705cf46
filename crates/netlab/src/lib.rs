//! # baton-netlab: the end-to-end laboratory
//!
//! Real Open vSwitch bridges, hosts and controllers for end-to-end tests,
//! each laboratory in namespaces of its own, gone when the test ends. The
//! one place where tests get their network plumbing: no test writes its
//! own shell.
//!
//! ```no_run
//! use baton_netlab::{Cmd, Lab, OfVersion, SwitchOptions, Topology};
//! use std::time::Duration;
//!
//! # fn main() -> baton_netlab::Result<()> {
//! let lab = Lab::new()?; // root only; installs OVS & co. if missing
//! let topo = Topology::linear(3); // s1-s2-s3, one host on each
//! let opts = SwitchOptions::new().controller("tcp:127.0.0.1:6653");
//! lab.build(&topo, &opts)?;
//! let _ctl = lab.spawn(Cmd::new("ovs-testcontroller").arg("ptcp:6653"))?;
//! lab.wait_controller_connections(3, Duration::from_secs(10))?;
//! let report = lab.ping("h1", "10.0.0.3", 3, Duration::from_secs(5))?;
//! assert!(report.is_clean(), "{report}");
//! println!("{:?}", lab.dump_flows("s1", OfVersion::V10)?);
//! // What a controller should discover:
//! let (links, hosts) = (topo.switch_links(), topo.host_attachments());
//! # let _ = (links, hosts);
//! # Ok(())
//! # }
//! ```
//!
//! ## Design
//! - **One private namespace per lab.** [`Lab::new`] starts
//!   `unshare --net --pid --fork --kill-child --mount-proc --mount` whose
//!   PID 1 (the *holder*) brings up the loopback, mounts a tmpfs on `/run`
//!   for the hosts' namespaces, disables IPv6 and then reads a pipe from
//!   the test process. 127.0.0.1:6653 inside is the lab's own: the
//!   machine's interfaces, bridges and port 6653 are never touched.
//! - **Everything runs inside.** Commands enter with `nsenter` into the
//!   holder's mount and PID namespaces, and its network namespace or a
//!   host's ([`Cmd`], [`Place`]): the OVS daemons, the controller under
//!   test, `ovs-ofctl`, `ping`, `tcpdump`. [`Lab::spawn`] returns a
//!   [`Proc`] that captures output and kills its whole process tree when
//!   dropped; [`Lab::exec`] runs to the end under a time limit and fails
//!   with the command line and its output.
//! - **Open vSwitch as OVS-NOTES prescribes.** `ovsdb-server` and
//!   `ovs-vswitchd` started by hand with private `OVS_RUNDIR`,
//!   `OVS_LOGDIR` and `OVS_DBDIR` under the lab's directory; bridges on
//!   the userspace datapath, with fixed datapath ids, `protocols`,
//!   `fail_mode`, `max_backoff=1000` and pinned `ofport_request` numbers
//!   ([`SwitchOptions`]). Hosts are network namespaces with a veth each,
//!   `tx off` and IPv6 disabled. A switch can instead be plain veth ends
//!   for a software switch ([`SwitchOptions::veth_only`]).
//! - **Topologies are data.** [`Topology`] (`single`, `linear`, `ring`,
//!   `fat_tree`) has no I/O; [`Lab::build`] makes one with one shell
//!   script and one `ovs-vsctl` transaction, and the topology lists the
//!   links and host attachment points a controller should discover.
//! - **Lifetime tied to the test process.** When the test closes the
//!   pipe, or dies, even by SIGKILL, the holder reads end-of-file and
//!   exits; the end of a PID namespace's init kills every process in it,
//!   and with them go the namespaces, veths and bridges. Dropping a
//!   [`Lab`] also does it explicitly: closes the pipe, waits, kills what
//!   remains, removes the directory and checks with [`leftovers`] that
//!   nothing of it is left. A lab killed with its test leaves only its
//!   directory, which the next lab sweeps ([`sweep_stale`]).
//! - **Bounded.** Every command has a time limit ([`Cmd::timeout`], 30 s
//!   by default), every wait a timeout; a lab dropped during a panic
//!   prints its last commands and the end of the OVS logs
//!   ([`Lab::diagnostics`]).
//!
//! ## Modules
//! - [`topo`]: topologies as data (`ids`: datapath ids, MAC addresses).
//! - [`cmd`]: commands, their output, running processes.
//! - [`ovs`]: switch options, daemons, `ovs-vsctl` arguments, TLS files.
//! - [`ping`]: one-shot, all-pairs and continuous pings, parsed.
//! - `lab`: [`Lab`] itself (`lab/build.rs`: switches, hosts, links;
//!   `lab/control.rs`: OVS and controllers); `process`: [`Proc`], a
//!   running command; `holder`: the namespaces' holder; `net`: the `ip`
//!   commands for hosts and links; `cleanup`: what identifies a lab and
//!   what is left of it; `procfs`: process trees and TCP states from
//!   `/proc`; `deps`: root and the tools (`scripts/install-e2e-deps.sh`).
//!
//! ## Open vSwitch facts the lab handles (beyond OVS-NOTES)
//! - In secure mode, a packet that reaches OVS while no controller is
//!   connected (or before its side of the OpenFlow handshake is done)
//!   gets a `drop` datapath flow, which stays while the same packets keep
//!   coming: start traffic once the controller has the switch's
//!   FEATURES_REPLY, or call [`Lab::purge_datapath_flows`].
//! - `max_backoff` applies only after a first connection: a bridge made
//!   before its controller listens retries after 1, 2, 4, 8 s;
//!   [`Lab::reconnect_controllers`] makes it try at once.
//! - `ping -w` exits at the first ICMP error; [`Lab::ping`] does not use
//!   it, and [`Lab::wait_reachable`] retries until a path exists.
//!
//! ## Requirements
//! Root, Linux with network namespaces and veth, and the Debian packages
//! of `scripts/install-e2e-deps.sh` (installed on first use when
//! missing). No kernel Open vSwitch module is needed.
#![deny(missing_docs)]

mod cleanup;
pub mod cmd;
mod deps;
mod error;
mod holder;
mod ids;
mod lab;
mod net;
pub mod ovs;
pub mod ping;
mod process;
mod procfs;
pub mod topo;

pub use cleanup::{LabInfo, labs_root, leftovers, sweep_stale};
pub use cmd::{Cmd, Exit, Output, Place};
pub use deps::{TOOLS, ensure_installed, missing_tools, require_root};
pub use error::{Error, Result};
pub use lab::{Counters, Lab};
pub use ovs::{
    CONTROLLER_PORT, FailMode, OfVersion, SpanningTree, SslFiles, SwitchKind, SwitchOptions,
    TestPki,
};
pub use ping::{PingMatrix, PingReport, PingStream, Reply, outage_after};
pub use process::Proc;
pub use topo::{Attachment, Dpid, End, HostSpec, LinkSpec, Mac, SwitchLink, SwitchSpec, Topology};
