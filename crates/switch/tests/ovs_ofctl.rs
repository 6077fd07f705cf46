//! Interoperability with a tool no one here wrote: Open vSwitch's
//! `ovs-ofctl`, for `-O OpenFlow10` and `-O OpenFlow13`, drives the
//! switch through its passive listener on a free loopback port, while
//! the test injects frames on in-process ports and checks where they come
//! out: `show` lists the ports by name, and `add-flow`, `dump-flows`
//! (with counters), `mod-flows` and `del-flows` do what they say.
//!
//! `ovs-ofctl` comes from Debian's `openvswitch-common`, installed with
//! apt when missing (as `crates/openflow/tests/ofp_print.rs` does).

use baton_openflow::Version;
use baton_openflow::types::PortNo;
use baton_switch::io::shared::{PortsHandle, shared_ports};
use baton_switch::io::{Options, Runner, Running};
use baton_switch::testutil::udp_frame;
use baton_switch::{Config, PortSpec, Switch};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const OVS_PACKAGE: &str = "openvswitch-common";

fn apt_get(args: &[&str]) -> bool {
    Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ensure_ovs_ofctl() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let works = || {
            Command::new("ovs-ofctl")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if works() {
            return;
        }
        let install = ["install", "-y", "-o", "DPkg::Lock::Timeout=300", OVS_PACKAGE];
        if !apt_get(&install) {
            apt_get(&["update", "-o", "DPkg::Lock::Timeout=300"]);
            apt_get(&install);
        }
        assert!(
            works(),
            "ovs-ofctl is missing and installing {OVS_PACKAGE} failed: run `apt-get install {OVS_PACKAGE}` (as root) and retry"
        );
    });
}

struct Rig {
    running: Option<Running>,
    ports: PortsHandle,
    target: String,
    proto: &'static str,
}

impl Rig {
    fn new(version: Version) -> Rig {
        ensure_ovs_ofctl();
        let now = Instant::now();
        let mut sw = Switch::new(Config::new(0x5eed, version), now);
        for (i, name) in ["p1", "p2", "p3"].iter().enumerate() {
            sw.add_port(PortSpec::named(*name, i as u32 + 1), now);
        }
        let (backend, ports) = shared_ports();
        let opts = Options {
            targets: vec!["ptcp:0:127.0.0.1".parse().unwrap()],
            ..Options::default()
        };
        let running = Running::spawn(Runner::new(sw, backend, opts).unwrap());
        let target = format!("tcp:{}", running.local_addrs()[0]);
        let proto = match version {
            Version::V10 => "OpenFlow10",
            Version::V13 => "OpenFlow13",
        };
        Rig {
            running: Some(running),
            ports,
            target,
            proto,
        }
    }

    /// Runs `ovs-ofctl -O PROTO CMD TARGET [ARG]`; returns stdout, and
    /// fails the test on an error.
    fn ofctl(&self, cmd: &str, arg: Option<&str>) -> String {
        let mut c = Command::new("timeout");
        c.args(["20", "ovs-ofctl", "-O", self.proto, cmd, &self.target]);
        c.args(arg);
        let out = c.output().expect("ovs-ofctl runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "ovs-ofctl {cmd} {arg:?} failed:\n{stdout}{stderr}"
        );
        assert!(!stderr.contains("OFPT_ERROR"), "ovs-ofctl {cmd}: {stderr}");
        stdout
    }

    /// Injects a frame on port `p` and returns the ports it came out of.
    fn send(&self, p: u32) -> Vec<u32> {
        let f = udp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 4000 + p as u16);
        self.ports.inject(PortNo(p), &f);
        let mut out = Vec::new();
        // Wait for the frame where a flow may send it; a short wait where
        // none does.
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            for q in 1..=3 {
                if !self.ports.take_output(PortNo(q)).is_empty() {
                    out.push(q);
                }
            }
            if !out.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        out
    }

    fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.stop().unwrap();
        }
    }
}

fn drive(version: Version) {
    let rig = Rig::new(version);
    let show = rig.ofctl("show", None);
    for (n, name) in [(1, "p1"), (2, "p2"), (3, "p3")] {
        assert!(show.contains(&format!(" {n}({name}): addr:")), "{show}");
    }
    assert!(show.contains("dpid:0000000000005eed"), "{show}");

    rig.ofctl("add-flow", Some("in_port=1,actions=output:2"));
    assert_eq!(rig.send(1), [2]);
    assert_eq!(rig.send(1), [2]);
    let dump = rig.ofctl("dump-flows", None);
    assert!(dump.contains("n_packets=2"), "{dump}");
    assert!(dump.contains("n_bytes=120"), "{dump}");
    assert!(dump.contains("in_port=1"), "{dump}");
    assert!(dump.contains("actions=output:2"), "{dump}");

    rig.ofctl(
        "add-flow",
        Some("priority=200,udp,tp_dst=4002,actions=output:1,output:3"),
    );
    assert_eq!(rig.send(2), [1, 3]);

    rig.ofctl("mod-flows", Some("in_port=1,actions=output:3"));
    assert_eq!(rig.send(1), [3]);
    let dump = rig.ofctl("dump-flows", None);
    assert!(dump.contains("actions=output:3"), "{dump}");
    // A modify keeps the counters.
    assert!(dump.contains("n_packets=3"), "{dump}");

    rig.ofctl("del-flows", Some("in_port=1"));
    assert!(rig.send(1).is_empty());
    assert_eq!(rig.send(2), [1, 3]);
    rig.ofctl("del-flows", None);
    assert!(rig.send(2).is_empty());
    let dump = rig.ofctl("dump-flows", None);
    assert!(!dump.contains("cookie="), "{dump}");
    rig.stop();
}

#[test]
fn ovs_ofctl_drives_an_openflow10_switch() {
    drive(Version::V10);
}

#[test]
fn ovs_ofctl_drives_an_openflow13_switch() {
    drive(Version::V13);
}
