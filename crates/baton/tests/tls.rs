//! OpenFlow over TLS with Open vSwitch (issue 11): `baton run
//! --listen-tls` with the learning switch, a bridge whose controller
//! target is `ssl:` (`ovs-vsctl set-ssl KEY CERT CA-CERT`), and two hosts
//! that ping through it, in OpenFlow 1.0 and 1.3. The certificates are
//! made here with rcgen (X.509 v3, ECDSA P-256): one CA signs the
//! controller's and the switch's, another one an intruder's.
//!
//! The 1.0 run accepts any switch, as over TCP. The 1.3 run has baton
//! check switches' certificates against the CA (`--tls-client-ca`), and
//! while the bridge is connected, clients with no certificate and with
//! one from the other CA (`openssl s_client`) are refused with a log line
//! saying why, the bridge carrying on. A bridge presenting a certificate
//! from the other CA is refused too.
//!
//! Each test builds its own laboratory (`baton-netlab`): a private
//! namespace, so `127.0.0.1:6653` is the lab's; nothing outlives the
//! test, failed or not. Run as root.

use baton_netlab::{Cmd, Lab, OfVersion, Proc, SslFiles, SwitchOptions, Topology};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use std::time::Duration;

const SECOND: Duration = Duration::from_secs(1);

/// What baton logs when a connection's TLS fails before its switch is up
/// (the runtime's `TransportError::Tls`, counted as `tls`).
const TLS_FAILED: &str = "TLS connection failed";

/// A certificate authority made for the test.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// Writes a key and a certificate for `name`, signed by this CA, as
    /// `<dir>/<name>-key.pem` and `<dir>/<name>-cert.pem`; `trust` is the
    /// CA certificate its holder checks its peer's against.
    fn issue(&self, dir: &Path, name: &str, trust: &Path) -> SslFiles {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec![name.to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        SslFiles {
            private_key: write(dir, &format!("{name}-key.pem"), &key.serialize_pem()),
            certificate: write(dir, &format!("{name}-cert.pem"), &cert.pem()),
            ca_cert: trust.to_path_buf(),
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The test's certificates, in the lab's directory (gone with the lab).
struct Pki {
    /// The CA that signed the controller's and the switch's certificates.
    ca_cert: PathBuf,
    controller: SslFiles,
    switch: SslFiles,
    /// Signed by another CA; trusts the right one for the controller.
    intruder: SslFiles,
}

impl Pki {
    fn new(lab: &Lab) -> Pki {
        let dir = lab.dir().join("pki");
        std::fs::create_dir_all(&dir).unwrap();
        let ca = Ca::new("baton-test-ca");
        let ca_cert = write(&dir, "ca-cert.pem", &ca.cert.pem());
        let other = Ca::new("baton-test-other-ca");
        Pki {
            controller: ca.issue(&dir, "controller", &ca_cert),
            switch: ca.issue(&dir, "switch", &ca_cert),
            intruder: other.issue(&dir, "intruder", &ca_cert),
            ca_cert,
        }
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Starts `baton run` in `lab` with the learning switch, serving TLS on
/// 127.0.0.1:6653 with the controller's certificate, switches checked
/// against the CA if `check_switches`.
fn start_baton(lab: &Lab, pki: &Pki, check_switches: bool) -> Proc {
    let c = &pki.controller;
    let mut args = vec![
        "run".to_string(),
        "--listen-tls".into(),
        "127.0.0.1:6653".into(),
        "--tls-cert".into(),
        path(&c.certificate),
        "--tls-key".into(),
        path(&c.private_key),
        "--apps".into(),
        "learning-switch".into(),
        "--api".into(),
        "off".into(),
    ];
    if check_switches {
        args.extend(["--tls-client-ca".into(), path(&pki.ca_cert)]);
    }
    let baton = lab
        .spawn(
            Cmd::new(env!("CARGO_BIN_EXE_baton"))
                .args(args)
                .env("RUST_LOG", "info"),
        )
        .unwrap();
    lab.wait_listening(6653, 10 * SECOND).unwrap();
    baton
}

/// A single bridge with two hosts, speaking `version` to
/// `ssl:127.0.0.1:6653`.
fn build(lab: &Lab, version: OfVersion) {
    lab.build(
        &Topology::single(2),
        &SwitchOptions::new()
            .controller("ssl:127.0.0.1:6653")
            .protocols(&[version]),
    )
    .unwrap();
}

/// Hosts ping each other through the bridge, cleanly.
fn ping(lab: &Lab) {
    lab.wait_reachable("h2", "10.0.0.1", 10 * SECOND).unwrap();
    let r = lab.ping("h2", "10.0.0.1", 3, 10 * SECOND).unwrap();
    assert!(r.is_clean(), "{r}\n{}", r.output);
}

/// `openssl s_client` connecting to baton as a switch would, presenting
/// `identity` if given; returns what it printed. It sends no OpenFlow:
/// its standard input is empty.
fn intrude(lab: &Lab, pki: &Pki, identity: Option<&SslFiles>) -> String {
    let mut cmd = Cmd::new("openssl").args([
        "s_client",
        "-connect",
        "127.0.0.1:6653",
        "-CAfile",
        &path(&pki.ca_cert),
    ]);
    if let Some(id) = identity {
        cmd = cmd.args([
            "-cert",
            &path(&id.certificate),
            "-key",
            &path(&id.private_key),
        ]);
    }
    let out = lab.output(cmd.stdin("").timeout(30 * SECOND)).unwrap();
    format!("{}{}", out.stdout, out.stderr)
}

fn hosts_ping_through_baton_over_tls(version: OfVersion, check_switches: bool) {
    let lab = Lab::new().unwrap();
    let pki = Pki::new(&lab);
    lab.set_ssl(&pki.switch).unwrap();
    let baton = start_baton(&lab, &pki, check_switches);
    build(&lab, version);
    lab.wait_controller_connections(1, 10 * SECOND).unwrap();
    baton
        .wait_for_output("switch connected", 10 * SECOND)
        .unwrap();
    let want = match version {
        OfVersion::V13 => "OpenFlow 1.3",
        _ => "OpenFlow 1.0",
    };
    assert!(baton.stderr().contains(want), "{}", baton.stderr());
    ping(&lab);
    // The bridge's controller connection is the TLS one.
    let status = lab.vsctl(["get", "controller", "s1", "target"]).unwrap();
    assert_eq!(status.trim(), "\"ssl:127.0.0.1:6653\"");
    assert!(
        !baton.stderr().contains(TLS_FAILED),
        "a TLS failure was logged:\n{}",
        baton.stderr()
    );
    if check_switches {
        // No certificate, then one from the other CA: each refused, and
        // said so.
        let said = intrude(&lab, &pki, None);
        baton.wait_for_matches(TLS_FAILED, 1, 10 * SECOND).unwrap();
        let said2 = intrude(&lab, &pki, Some(&pki.intruder));
        baton.wait_for_matches(TLS_FAILED, 2, 10 * SECOND).unwrap();
        let log = baton.stderr();
        let failures: Vec<&str> = log.lines().filter(|l| l.contains(TLS_FAILED)).collect();
        assert!(
            failures[0].contains("no certificates"),
            "{failures:?}\ns_client said:\n{said}"
        );
        assert!(
            failures[1].contains("invalid peer certificate"),
            "{failures:?}\ns_client said:\n{said2}"
        );
        // The bridge was not disturbed: still connected, still served.
        assert!(!log.contains("switch disconnected"), "{log}");
        ping(&lab);
        assert!(!baton.stderr().contains("switch disconnected"));
        assert_eq!(baton.stderr().matches("switch connected").count(), 1);
    }
    lab.close().unwrap();
}

#[test]
fn ovs_reaches_baton_over_tls_in_openflow_1_0() {
    hosts_ping_through_baton_over_tls(OfVersion::V10, false);
}

#[test]
fn ovs_reaches_baton_over_tls_in_openflow_1_3_and_clients_without_a_good_certificate_are_refused() {
    hosts_ping_through_baton_over_tls(OfVersion::V13, true);
}

#[test]
fn a_bridge_with_a_certificate_from_another_ca_is_refused() {
    let lab = Lab::new().unwrap();
    let pki = Pki::new(&lab);
    lab.set_ssl(&pki.intruder).unwrap();
    let baton = start_baton(&lab, &pki, true);
    build(&lab, OfVersion::V13);
    baton.wait_for_output(TLS_FAILED, 10 * SECOND).unwrap();
    let log = baton.stderr();
    assert!(log.contains("invalid peer certificate"), "{log}");
    assert!(!log.contains("switch connected"), "{log}");
    lab.close().unwrap();
}
