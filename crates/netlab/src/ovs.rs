//! Open vSwitch in a laboratory: how its daemons are started, and the
//! `ovs-vsctl` arguments that make a bridge the way OVS-NOTES prescribes
//! (userspace datapath, fixed datapath id, pinned port numbers,
//! `max_backoff=1000`). Generating arguments is kept apart from running
//! them, so that [`crate::Lab::build`] can put a whole topology in one
//! `ovs-vsctl` transaction.

use crate::topo::Dpid;
use std::fmt;
use std::path::{Path, PathBuf};

/// An OpenFlow version, named as OVS names it in `protocols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OfVersion {
    /// OpenFlow 1.0.
    V10,
    /// OpenFlow 1.1.
    V11,
    /// OpenFlow 1.2.
    V12,
    /// OpenFlow 1.3.
    V13,
    /// OpenFlow 1.4.
    V14,
    /// OpenFlow 1.5.
    V15,
}

impl OfVersion {
    /// The name OVS uses: `OpenFlow13`; `ovs-ofctl -O` takes it too.
    pub fn ovs_name(self) -> &'static str {
        match self {
            OfVersion::V10 => "OpenFlow10",
            OfVersion::V11 => "OpenFlow11",
            OfVersion::V12 => "OpenFlow12",
            OfVersion::V13 => "OpenFlow13",
            OfVersion::V14 => "OpenFlow14",
            OfVersion::V15 => "OpenFlow15",
        }
    }
}

impl fmt::Display for OfVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ovs_name())
    }
}

/// What a bridge does when no controller is connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailMode {
    /// Forward nothing but what the flow table says (and keep the flows
    /// over reconnections): what a controller test wants.
    #[default]
    Secure,
    /// Act as an ordinary learning switch (OVS's `NORMAL` action).
    Standalone,
}

impl FailMode {
    fn ovs_name(self) -> &'static str {
        match self {
            FailMode::Secure => "secure",
            FailMode::Standalone => "standalone",
        }
    }
}

/// Whether a bridge runs a spanning tree protocol of its own (only
/// meaningful in [`FailMode::Standalone`], or with a controller that uses
/// the `NORMAL` action).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SpanningTree {
    /// None: a loop of standalone bridges storms.
    #[default]
    Off,
    /// 802.1D STP (converges in ~30 s).
    Stp,
    /// 802.1w RSTP (a ring of 4 converges in ~3 s on the userspace
    /// datapath).
    Rstp,
}

/// What stands for a switch in the laboratory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SwitchKind {
    /// An Open vSwitch bridge.
    #[default]
    Ovs,
    /// No bridge: the switch's ports are plain veth ends in the lab's
    /// network namespace, named `<switch>-eth<port>`, up and left for a
    /// software switch (`baton switch`) started with
    /// [`crate::Lab::spawn`] to open with AF_PACKET.
    Veth,
}

/// How to make a switch: protocols, controllers, fail mode. The default
/// is an OVS bridge speaking OpenFlow 1.0 and 1.3, in secure mode, with no
/// controller and no spanning tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchOptions {
    /// The OpenFlow versions the bridge offers.
    pub protocols: Vec<OfVersion>,
    /// Controller targets: `tcp:127.0.0.1:6653`, `ssl:127.0.0.1:6653`
    /// (after [`crate::Lab::set_ssl`]), ...
    pub controllers: Vec<String>,
    /// What the bridge does without a controller.
    pub fail_mode: FailMode,
    /// Whether the bridge runs STP or RSTP itself.
    pub spanning_tree: SpanningTree,
    /// The longest wait between reconnection attempts, in milliseconds
    /// (OVS's default is 8000). OVS applies it once a controller has been
    /// connected: it bounds how long a bridge takes to come back to a
    /// restarted controller, not its first connection
    /// ([`crate::Lab::reconnect_controllers`]).
    pub max_backoff_ms: u32,
    /// An OVS bridge, or plain veth ends.
    pub kind: SwitchKind,
}

impl Default for SwitchOptions {
    fn default() -> SwitchOptions {
        SwitchOptions {
            protocols: vec![OfVersion::V10, OfVersion::V13],
            controllers: Vec::new(),
            fail_mode: FailMode::Secure,
            spanning_tree: SpanningTree::Off,
            max_backoff_ms: 1000,
            kind: SwitchKind::Ovs,
        }
    }
}

impl SwitchOptions {
    /// The defaults.
    pub fn new() -> SwitchOptions {
        SwitchOptions::default()
    }

    /// Adds a controller target (`tcp:127.0.0.1:6653`).
    pub fn controller(mut self, target: impl Into<String>) -> SwitchOptions {
        self.controllers.push(target.into());
        self
    }

    /// Sets the OpenFlow versions offered.
    pub fn protocols(mut self, versions: &[OfVersion]) -> SwitchOptions {
        self.protocols = versions.to_vec();
        self
    }

    /// Sets the fail mode.
    pub fn fail_mode(mut self, mode: FailMode) -> SwitchOptions {
        self.fail_mode = mode;
        self
    }

    /// Sets the spanning tree protocol.
    pub fn spanning_tree(mut self, stp: SpanningTree) -> SwitchOptions {
        self.spanning_tree = stp;
        self
    }

    /// Sets the longest reconnection backoff.
    pub fn max_backoff_ms(mut self, ms: u32) -> SwitchOptions {
        self.max_backoff_ms = ms;
        self
    }

    /// No OVS bridge: plain veth ends for a software switch
    /// ([`SwitchKind::Veth`]).
    pub fn veth_only(mut self) -> SwitchOptions {
        self.kind = SwitchKind::Veth;
        self
    }
}

/// The port a controller listens on in a laboratory by default (each lab
/// has a loopback of its own, so every lab may use it).
pub const CONTROLLER_PORT: u16 = 6653;

/// The private key, certificate and CA certificate a TLS connection
/// needs (PEM files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SslFiles {
    /// The private key.
    pub private_key: PathBuf,
    /// Its certificate.
    pub certificate: PathBuf,
    /// The certificate of the CA that signed the peer's certificate.
    pub ca_cert: PathBuf,
}

/// A throw-away PKI for OpenFlow over TLS: a CA, and a key and
/// certificate signed by it for each side. Made by
/// [`crate::Lab::test_pki`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestPki {
    /// What the switches (OVS, [`crate::Lab::set_ssl`]) use.
    pub switch: SslFiles,
    /// What the controller uses (for `ovs-testcontroller`: `-p KEY -c
    /// CERT -C CACERT pssl:6653`).
    pub controller: SslFiles,
}

/// The shell script that makes [`TestPki`]'s files in `dir` with
/// `openssl` (P-256 keys: quick to make, and OVS's TLS accepts them).
pub(crate) fn pki_script(dir: &Path) -> (String, TestPki) {
    let d = dir.display();
    let mut script = format!(
        "mkdir -p {d} && cd {d}\n\
         openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
         -keyout ca-key.pem -out ca-cert.pem -days 7 -subj /CN=netlab-ca 2>/dev/null\n"
    );
    for who in ["switch", "controller"] {
        script.push_str(&format!(
            "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
             -keyout {who}-key.pem -out {who}-req.pem -subj /CN=netlab-{who} 2>/dev/null\n\
             openssl x509 -req -in {who}-req.pem -CA ca-cert.pem -CAkey ca-key.pem \
             -CAcreateserial -out {who}-cert.pem -days 7 2>/dev/null\n"
        ));
    }
    let files = |who: &str| SslFiles {
        private_key: dir.join(format!("{who}-key.pem")),
        certificate: dir.join(format!("{who}-cert.pem")),
        ca_cert: dir.join("ca-cert.pem"),
    };
    (
        script,
        TestPki {
            switch: files("switch"),
            controller: files("controller"),
        },
    )
}

/// The script that starts `ovsdb-server` and `ovs-vswitchd` with the
/// database, sockets, pid files and logs under the directories named by
/// `OVS_DBDIR`, `OVS_RUNDIR` and `OVS_LOGDIR` (which the lab sets for
/// every command, so `ovs-vsctl` and `ovs-ofctl` find them too). Paths are
/// spelt out on the daemons' command lines, so they can be told apart by
/// their lab's directory from outside.
pub(crate) const START_DAEMONS: &str = r#"
ovsdb-tool create "$OVS_DBDIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server "$OVS_DBDIR/conf.db" --remote="punix:$OVS_RUNDIR/db.sock" \
    --pidfile="$OVS_RUNDIR/ovsdb-server.pid" --log-file="$OVS_LOGDIR/ovsdb-server.log" \
    --unixctl="$OVS_RUNDIR/ovsdb-server.ctl" --detach -vconsole:off
ovs-vsctl --timeout=30 --no-wait init
ovs-vswitchd "unix:$OVS_RUNDIR/db.sock" \
    --pidfile="$OVS_RUNDIR/ovs-vswitchd.pid" --log-file="$OVS_LOGDIR/ovs-vswitchd.log" \
    --detach -vconsole:off
"#;

/// `ovs-vsctl` arguments (one or more `--`-separated commands) that make
/// bridge `name` with datapath id `dpid` as `opts` says.
pub(crate) fn bridge_args(name: &str, dpid: Dpid, opts: &SwitchOptions) -> Vec<String> {
    let protocols: Vec<&str> = opts.protocols.iter().map(|v| v.ovs_name()).collect();
    let mut a: Vec<String> = vec![
        "--".into(),
        "add-br".into(),
        name.into(),
        "--".into(),
        "set".into(),
        "bridge".into(),
        name.into(),
        "datapath_type=netdev".into(),
        format!("fail_mode={}", opts.fail_mode.ovs_name()),
        format!("protocols={}", protocols.join(",")),
        format!("other-config:datapath-id={dpid}"),
        // The controller is reached over the lab's loopback, never
        // through the bridge: no hidden in-band flows.
        "other-config:disable-in-band=true".into(),
        format!("stp_enable={}", opts.spanning_tree == SpanningTree::Stp),
        format!("rstp_enable={}", opts.spanning_tree == SpanningTree::Rstp),
    ];
    a.extend(controller_args(name, opts));
    a
}

/// `ovs-vsctl` arguments that give bridge `name` the controllers of
/// `opts` (none if it has none).
///
/// `max_backoff` takes effect only once a controller has been connected:
/// OVS 3.1 makes the connection with a maximum backoff of 8 s and applies
/// the configured one when the first connection is up (`connmgr.c`,
/// `ofservice_create`), so it bounds reconnections, not the first
/// connection of a bridge made before its controller listens; for that,
/// see [`crate::Lab::reconnect_controllers`].
pub(crate) fn controller_args(name: &str, opts: &SwitchOptions) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let mut ids = Vec::new();
    for (i, target) in opts.controllers.iter().enumerate() {
        let id = format!("@ctl_{name}_{i}");
        a.extend([
            "--".into(),
            format!("--id={id}"),
            "create".into(),
            "controller".into(),
            format!("target=\"{target}\""),
            format!("max_backoff={}", opts.max_backoff_ms),
        ]);
        ids.push(id);
    }
    if !ids.is_empty() {
        a.extend([
            "--".into(),
            "set".into(),
            "bridge".into(),
            name.into(),
            format!("controller={}", ids.join(",")),
        ]);
    }
    a
}

/// `ovs-vsctl` arguments that add interface `iface` to `bridge` as
/// OpenFlow port `port`.
pub(crate) fn port_args(bridge: &str, iface: &str, port: u16) -> Vec<String> {
    vec![
        "--".into(),
        "add-port".into(),
        bridge.into(),
        iface.into(),
        "--".into(),
        "set".into(),
        "interface".into(),
        iface.into(),
        format!("ofport_request={port}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bridge_is_made_as_ovs_notes_prescribe() {
        let opts = SwitchOptions::new()
            .controller("tcp:127.0.0.1:6653")
            .controller("ssl:127.0.0.1:6654");
        let a = bridge_args("s1", Dpid(1), &opts).join(" ");
        for want in [
            "add-br s1",
            "datapath_type=netdev",
            "fail_mode=secure",
            "protocols=OpenFlow10,OpenFlow13",
            "other-config:datapath-id=0000000000000001",
            "stp_enable=false rstp_enable=false",
            "--id=@ctl_s1_0 create controller target=\"tcp:127.0.0.1:6653\" max_backoff=1000",
            "--id=@ctl_s1_1 create controller target=\"ssl:127.0.0.1:6654\" max_backoff=1000",
            "set bridge s1 controller=@ctl_s1_0,@ctl_s1_1",
        ] {
            assert!(a.contains(want), "`{want}` missing from `{a}`");
        }
        let plain = SwitchOptions::new()
            .fail_mode(FailMode::Standalone)
            .spanning_tree(SpanningTree::Rstp)
            .protocols(&[OfVersion::V13]);
        let a = bridge_args("s2", Dpid(0xab), &plain).join(" ");
        assert!(
            a.contains("fail_mode=standalone protocols=OpenFlow13"),
            "{a}"
        );
        assert!(a.contains("rstp_enable=true"), "{a}");
        assert!(!a.contains("controller"), "{a}");
        assert_eq!(
            port_args("s1", "s1-eth2", 2).join(" "),
            "-- add-port s1 s1-eth2 -- set interface s1-eth2 ofport_request=2"
        );
    }

    #[test]
    fn the_pki_names_its_files() {
        let (script, pki) = pki_script(Path::new("/x/pki"));
        assert!(script.starts_with("mkdir -p /x/pki && cd /x/pki\n"));
        assert_eq!(pki.switch.ca_cert, Path::new("/x/pki/ca-cert.pem"));
        assert_eq!(
            pki.controller.private_key,
            Path::new("/x/pki/controller-key.pem")
        );
        assert!(
            script.contains("-out switch-cert.pem") && script.contains("-out controller-cert.pem")
        );
    }
}
