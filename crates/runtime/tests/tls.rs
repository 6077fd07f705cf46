//! OpenFlow over TLS through the runtime, with rustls clients as switches
//! and certificates made here (rcgen): the handshake in both versions,
//! replies in order under a burst, switch certificates checked against a
//! CA, and clients that are not TLS closed without harm to a TCP switch
//! beside them.

mod support;

use baton_openflow::neutral::{ActionSpec, PacketOut};
use baton_openflow::{BufferId, PortNo, Version, v10, v13};
use baton_runtime::config::Tls;
use baton_runtime::{AnyApp, App, Config, PacketInBatch, Runtime, SchedulerKind, SwitchCtx};
use rcgen::{BasicConstraints, CertificateParams, CertifiedKey, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{Msg, TestSwitch, mac, tcp_frame};

/// Answers every PACKET_IN with a PACKET_OUT flood carrying its buffer id.
struct Flooder;

impl App for Flooder {
    type Switch = ();
    fn name(&self) -> &str {
        "flooder"
    }
    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, pi| {
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &[ActionSpec::Output {
                    port: PortNo::FLOOD,
                    max_len: 0,
                }],
            });
        });
    }
}

/// A CA, and certificates it signs.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new() -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A certificate for `name`, signed by this CA.
    fn sign(&self, name: &str) -> CertifiedKey {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_string()])
            .unwrap()
            .signed_by(&key, &self.cert, &self.key)
            .unwrap();
        CertifiedKey {
            cert,
            key_pair: key,
        }
    }

    fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }
}

fn private_key(k: &CertifiedKey) -> PrivateKeyDer<'static> {
    PrivatePkcs8KeyDer::from(k.key_pair.serialize_der()).into()
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A directory of this test's own for PEM files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("baton-tls-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap();
    p
}

/// The controller's side: a certificate for `localhost` from `ca`, loaded
/// from PEM files as `baton run` loads them, switches checked against
/// `client_ca` if given.
fn server(ca: &Ca, client_ca: Option<&Ca>, dir: &Path) -> Arc<rustls::ServerConfig> {
    let me = ca.sign("localhost");
    let cert = write(dir, "cert.pem", &me.cert.pem());
    let key = write(dir, "key.pem", &me.key_pair.serialize_pem());
    let client_ca = client_ca.map(|c| write(dir, "client-ca.pem", &c.cert.pem()));
    baton_runtime::tls::server_config(&cert, &key, client_ca.as_deref()).expect("TLS config")
}

/// A switch's side: trusts `ca` for the controller's certificate, and
/// presents `identity` if given.
fn client(ca: &Ca, identity: Option<&CertifiedKey>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let b = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    Arc::new(match identity {
        None => b.with_no_client_auth(),
        Some(k) => b
            .with_client_auth_cert(vec![k.cert.der().clone()], private_key(k))
            .unwrap(),
    })
}

fn start(tls: Arc<rustls::ServerConfig>, tcp: bool, echo_timeout: Duration) -> Runtime {
    let cfg = Config {
        listen: if tcp {
            vec!["127.0.0.1:0".parse().unwrap()]
        } else {
            Vec::new()
        },
        tls: Some(Tls {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            server: tls,
        }),
        workers: 2,
        scheduler: SchedulerKind::Fair,
        echo_timeout,
        ..Config::default()
    };
    Runtime::start(cfg, vec![AnyApp::from(Arc::new(Flooder))]).expect("runtime starts")
}

fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + support::PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn closed(rt: &Runtime, label: &str) -> u64 {
    rt.stats()
        .closed
        .iter()
        .find(|(l, _)| *l == label)
        .map_or(0, |(_, n)| *n)
}

fn packet_out_buffer(m: &Msg) -> Option<BufferId> {
    match m {
        Msg::V10(v10::Message::PacketOut(p)) => Some(p.buffer_id),
        Msg::V13(v13::Message::PacketOut(p)) => Some(p.buffer_id),
        _ => None,
    }
}

/// `n` PACKET_INs in one write, then their PACKET_OUTs back in order.
fn burst_in_order(sw: &mut TestSwitch, n: usize) {
    let frame = tcp_frame(mac(1), mac(2));
    let mut out = Vec::new();
    let ids: Vec<BufferId> = (0..n as u32).map(|i| BufferId(1000 + i)).collect();
    for &id in &ids {
        sw.encode_packet_in(&mut out, id, 1, &frame);
    }
    sw.send(&out);
    for &id in &ids {
        let got = loop {
            let m = sw.recv().expect("PACKET_OUT");
            if let Some(b) = packet_out_buffer(&m) {
                break b;
            }
        };
        assert_eq!(got, id);
    }
}

#[test]
fn openflow_handshake_and_replies_over_tls_in_both_versions() {
    let dir = scratch("both");
    let ca = Ca::new();
    let rt = start(server(&ca, None, &dir), false, Duration::from_secs(15));
    let addr = rt.local_tls_addrs()[0];
    assert!(rt.local_addrs().is_empty());
    let tls = client(&ca, None);
    let mut s10 = TestSwitch::connect_tls(addr, &tls, Version::V10, 0x10);
    let mut s13 = TestSwitch::connect_tls(addr, &tls, Version::V13, 0x13);
    // 1.3: the table-miss flow follows SET_CONFIG.
    match s13.recv() {
        Some(Msg::V13(v13::Message::FlowMod(fm))) => assert_eq!(fm.priority, 0),
        other => panic!("expected the table-miss FLOW_MOD, got {other:?}"),
    }
    wait_for("two switches up", || rt.network().switches().len() == 2);
    // Enough to need several TLS records each way, and more than one
    // read and write.
    burst_in_order(&mut s10, 3000);
    burst_in_order(&mut s13, 3000);
    let stats = rt.stats();
    assert_eq!(stats.accepted, 2);
    drop(s10);
    wait_for("one switch down", || rt.network().switches().len() == 1);
    assert_eq!(closed(&rt, "peer_closed"), 1);
    rt.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_a_client_ca_only_switches_it_signed_get_in() {
    let dir = scratch("client-ca");
    let ca = Ca::new();
    let switches = Ca::new();
    let rt = start(
        server(&ca, Some(&switches), &dir),
        false,
        Duration::from_secs(15),
    );
    let addr = rt.local_tls_addrs()[0];
    // Signed by the switches' CA: in, both versions.
    let good = client(&ca, Some(&switches.sign("switch-1")));
    let _s10 = TestSwitch::connect_tls(addr, &good, Version::V10, 1);
    let _s13 = TestSwitch::connect_tls(addr, &good, Version::V13, 2);
    wait_for("two switches up", || rt.network().switches().len() == 2);
    // Signed by another CA, or no certificate at all: refused.
    let stranger = Ca::new();
    for (n, bad) in [
        client(&ca, Some(&stranger.sign("switch-2"))),
        client(&ca, None),
    ]
    .iter()
    .enumerate()
    {
        let mut sw = TestSwitch::raw_tls(addr, bad);
        assert!(
            sw.recv_raw().is_none(),
            "a switch without a certificate from the CA got a message"
        );
        wait_for("the refusal counted", || closed(&rt, "tls") == n as u64 + 1);
    }
    assert_eq!(rt.network().switches().len(), 2);
    rt.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clients_that_do_not_speak_tls_are_closed_and_a_tcp_switch_beside_them_carries_on() {
    let dir = scratch("garbage");
    let ca = Ca::new();
    let rt = start(server(&ca, None, &dir), true, Duration::from_secs(15));
    let (tcp, tls) = (rt.local_addrs()[0], rt.local_tls_addrs()[0]);
    let mut plain = TestSwitch::connect(tcp, Version::V13, 7);
    // An OpenFlow HELLO where a TLS ClientHello belongs.
    let mut hello = TestSwitch::raw(tls);
    hello.send(&baton_runtime::testing::hello(Version::V13));
    // A record of a content type TLS does not have.
    let mut junk = TestSwitch::raw(tls);
    junk.send(&[0x99, 0x03, 0x03, 0x00, 0x02, 1, 2]);
    assert!(hello.closed_by_controller());
    assert!(junk.closed_by_controller());
    wait_for("two TLS closes", || closed(&rt, "tls") == 2);
    // The TCP switch was served all along.
    burst_in_order(&mut plain, 100);
    assert_eq!(rt.network().switches().len(), 1);
    rt.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tls_handshake_that_never_finishes_is_closed_at_the_echo_timeout() {
    let dir = scratch("mute");
    let ca = Ca::new();
    let rt = start(server(&ca, None, &dir), false, Duration::from_millis(300));
    let tls = rt.local_tls_addrs()[0];
    // Connected and silent, or half a record and silent.
    let mut mute = TestSwitch::raw(tls);
    let mut half = TestSwitch::raw(tls);
    half.send(&[0x16, 0x03, 0x01, 0x40, 0x00, 1, 2, 3]);
    assert!(mute.closed_by_controller());
    assert!(half.closed_by_controller());
    wait_for("two TLS closes", || closed(&rt, "tls") == 2);
    rt.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
