//! The learning switches on the real runtime over loopback TCP: flood an
//! unknown destination, then install a flow once it is learnt, in both
//! OpenFlow versions and under every scheduler.

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

use baton_apps::{GlobalLearningSwitch, LearningConfig, LearningSwitch};
use baton_openflow::{BufferId, PortNo, Version, v10, v13};
use baton_runtime::{App, Config, Runtime, SchedulerKind};
use std::sync::Arc;
use support::{Msg, TestSwitch, mac, tcp_frame};

fn runtime(app: Arc<dyn App>, scheduler: SchedulerKind) -> Runtime {
    let cfg = Config {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 2,
        scheduler,
        ..Config::default()
    };
    Runtime::start(cfg, vec![app]).expect("runtime starts")
}

/// (output port, buffer id) of a PACKET_OUT.
fn packet_out(m: &Msg) -> Option<(PortNo, BufferId)> {
    match m {
        Msg::V10(v10::Message::PacketOut(p)) => match p.actions.as_slice() {
            [v10::Action::Output { port, .. }] => Some((*port, p.buffer_id)),
            _ => None,
        },
        Msg::V13(v13::Message::PacketOut(p)) => match p.actions.as_slice() {
            [v13::Action::Output { port, .. }] => Some((*port, p.buffer_id)),
            _ => None,
        },
        _ => None,
    }
}

/// (output port, buffer id, matched eth_dst) of a FLOW_MOD.
fn flow_mod(m: &Msg) -> Option<(PortNo, BufferId, [u8; 6])> {
    match m {
        Msg::V10(v10::Message::FlowMod(f)) => match f.actions.as_slice() {
            [v10::Action::Output { port, .. }] => Some((*port, f.buffer_id, f.match_.dl_dst.0)),
            _ => None,
        },
        Msg::V13(v13::Message::FlowMod(f)) => {
            let port = f.instructions.iter().find_map(|i| match i {
                v13::Instruction::ApplyActions(a) => match a.as_slice() {
                    [v13::Action::Output { port, .. }] => Some(*port),
                    _ => None,
                },
                _ => None,
            })?;
            let dst = f.match_.fields.iter().find_map(|o| match o {
                v13::Oxm::EthDst { value, mask: None } => Some(value.0),
                _ => None,
            })?;
            Some((port, f.buffer_id, dst))
        }
        _ => None,
    }
}

fn learns_then_installs(app: Arc<dyn App>, version: Version, scheduler: SchedulerKind) {
    let rt = runtime(app, scheduler);
    let mut sw = TestSwitch::connect(rt.local_addrs()[0], version, 5);
    if version == Version::V13 {
        let _table_miss = sw.recv();
    }
    // h1 (port 1) -> h2: unknown, flooded.
    let b1 = sw.packet_in(1, &tcp_frame(mac(1), mac(2)), true);
    let m = sw.recv().unwrap();
    assert_eq!(
        packet_out(&m),
        Some((PortNo::FLOOD, b1)),
        "{version} {scheduler}: flood"
    );
    // h2 (port 2) -> h1: h1 was learnt on port 1: a flow, using the buffer.
    let b2 = sw.packet_in(2, &tcp_frame(mac(2), mac(1)), true);
    let m = sw.recv().unwrap();
    assert_eq!(
        flow_mod(&m),
        Some((PortNo(1), b2, mac(1))),
        "{version} {scheduler}: flow"
    );
    // Unbuffered h1 -> h2: h2 is now known on port 2: a flow, and the
    // packet itself goes out with a PACKET_OUT.
    sw.packet_in(1, &tcp_frame(mac(1), mac(2)), false);
    let m = sw.recv().unwrap();
    assert_eq!(flow_mod(&m), Some((PortNo(2), BufferId::NONE, mac(2))));
    let m = sw.recv().unwrap();
    assert_eq!(packet_out(&m), Some((PortNo(2), BufferId::NONE)));
    rt.stop();
}

#[test]
fn learning_switch_floods_then_installs_flows() {
    for scheduler in SchedulerKind::ALL {
        for version in [Version::V10, Version::V13] {
            let app = Arc::new(LearningSwitch::new(LearningConfig::default()));
            learns_then_installs(app, version, scheduler);
        }
    }
}

#[test]
fn global_learning_switch_floods_then_installs_flows() {
    for version in [Version::V10, Version::V13] {
        let app = Arc::new(GlobalLearningSwitch::new(LearningConfig::default()));
        learns_then_installs(app, version, SchedulerKind::Fair);
    }
}

#[test]
fn local_tables_are_per_switch_and_the_global_table_is_shared() {
    // A host learnt at switch A is unknown to switch B's local table...
    let rt = runtime(
        Arc::new(LearningSwitch::new(LearningConfig::default())),
        SchedulerKind::Fair,
    );
    let addr = rt.local_addrs()[0];
    let mut a = TestSwitch::connect(addr, Version::V10, 1);
    let mut b = TestSwitch::connect(addr, Version::V10, 2);
    a.packet_in(1, &tcp_frame(mac(1), mac(9)), true);
    assert_eq!(
        packet_out(&a.recv().unwrap()).map(|p| p.0),
        Some(PortNo::FLOOD)
    );
    b.packet_in(4, &tcp_frame(mac(7), mac(1)), true);
    assert_eq!(
        packet_out(&b.recv().unwrap()).map(|p| p.0),
        Some(PortNo::FLOOD)
    );
    rt.stop();

    // ...while the global table knows it everywhere (and, lacking topology,
    // still floods from a switch where the host is not attached).
    let global = Arc::new(GlobalLearningSwitch::new(LearningConfig::default()));
    let rt = runtime(global.clone(), SchedulerKind::Fair);
    let addr = rt.local_addrs()[0];
    let mut a = TestSwitch::connect(addr, Version::V10, 1);
    let mut b = TestSwitch::connect(addr, Version::V10, 2);
    a.packet_in(1, &tcp_frame(mac(1), mac(9)), true);
    let _ = a.recv();
    b.packet_in(4, &tcp_frame(mac(7), mac(1)), true);
    assert_eq!(
        packet_out(&b.recv().unwrap()).map(|p| p.0),
        Some(PortNo::FLOOD)
    );
    assert_eq!(
        global.locate(&baton_openflow::MacAddr(mac(1))),
        Some((baton_openflow::DatapathId(1), PortNo(1)))
    );
    assert_eq!(global.len(), 2);
    drop(a);
    // A switch's hosts are forgotten when it leaves.
    let deadline = std::time::Instant::now() + support::PATIENCE;
    while global.locate(&baton_openflow::MacAddr(mac(1))).is_some() {
        assert!(std::time::Instant::now() < deadline, "host not forgotten");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    rt.stop();
}
