//! Applications stopped, started and failing while traffic flows, seen
//! through the API (Beacon §3.4's runtime modularity): two hosts behind
//! a software switch exchange frames all along; the learning switch is
//! stopped (its flows leave the switch, the switch stays connected) and
//! started again (traffic recovers); an application that panics on a
//! packet is reported failed while the rest carries on.

use crate::support::{Controller, SoftSwitch, wait_for};
use baton_openflow::{MacAddr, PortNo, Version};
use baton_runtime::{AnyApp, App, PacketInBatch, SwitchCtx};
use baton_switch::io::shared::PortsHandle;
use baton_switch::testutil::udp_frame;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

const A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
const B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

/// Host A on port 1 and host B on port 2 sending to each other every
/// few milliseconds; counts what arrives at the other side.
struct Traffic {
    delivered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Traffic {
    fn start(ports: PortsHandle, from_a: Vec<u8>, from_b: Vec<u8>) -> Traffic {
        let delivered = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, flag) = (delivered.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Acquire) {
                ports.inject(PortNo(1), &from_a);
                ports.inject(PortNo(2), &from_b);
                std::thread::sleep(Duration::from_millis(5));
                // What reached B from A, and A from B (a flood sends a
                // frame back nowhere else: the switch has two ports).
                let at_b = ports.take_output(PortNo(2));
                let at_a = ports.take_output(PortNo(1));
                let n = at_b.iter().filter(|f| f[6..12] == A).count()
                    + at_a.iter().filter(|f| f[6..12] == B).count();
                count.fetch_add(n as u64, Ordering::Relaxed);
            }
        });
        Traffic {
            delivered,
            stop,
            thread: Some(thread),
        }
    }

    /// Waits until `n` more frames have arrived than now.
    fn recovers(&self, what: &str, n: u64) {
        let from = self.delivered.load(Ordering::Relaxed);
        wait_for(what, || self.delivered.load(Ordering::Relaxed) >= from + n);
    }
}

impl Drop for Traffic {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The flows on `dpid` that `app` installed.
fn flows_of(c: &Controller, dpid: &str, app: &str) -> Vec<Value> {
    c.flows(dpid)
        .into_iter()
        .filter(|f| f["installed_by"] == app)
        .collect()
}

/// The switch's connection age, seconds: it only grows while the same
/// connection lasts.
fn connected_for(c: &Controller, dpid: &str) -> f64 {
    let (code, s) = c.get(&format!("/api/v1/switches/{dpid}"));
    assert_eq!(code, 200, "{s}");
    s["connected_secs"]
        .as_f64()
        .unwrap_or_else(|| panic!("no connected_secs in {s}"))
}

#[test]
fn the_learning_switch_stopped_and_started_while_traffic_flows() {
    for version in [Version::V10, Version::V13] {
        let c = Controller::start(&[("learning-switch", json!({}))], Some("t"));
        let sw = SoftSwitch::connect(c.openflow(), 1, version, 2);
        let dpid = "00:00:00:00:00:00:00:01";
        let traffic = Traffic::start(sw.ports.clone(), udp_frame(A, B, 7), udp_frame(B, A, 7));
        traffic.recovers("traffic between the hosts", 20);
        wait_for("the learnt flows", || {
            flows_of(&c, dpid, "learning-switch").len() >= 2
        });
        let age = connected_for(&c, dpid);

        let (code, stopped) = c.call("POST", "/api/v1/apps/learning-switch/stop", None);
        assert_eq!(code, 200, "{version}: {stopped}");
        assert_eq!(stopped["app"]["state"], "stopped", "{version}: {stopped}");
        // (1.0 deletes each flow; 1.3 all at once, by cookie.)
        assert!(
            stopped["flows_deleted"].as_u64().unwrap() >= 1,
            "{version}: {stopped}"
        );
        // Its flows have left the switch, and nothing puts them back
        // while traffic keeps knocking.
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            flows_of(&c, dpid, "learning-switch"),
            Vec::<Value>::new(),
            "{version}"
        );
        // The switch stayed connected: the same connection, older.
        let (_, switches) = c.get("/api/v1/switches");
        assert_eq!(switches.as_array().unwrap().len(), 1, "{version}");
        assert!(connected_for(&c, dpid) >= age, "{version}");

        let (code, started) = c.call("POST", "/api/v1/apps/learning-switch/start", None);
        assert_eq!(
            (code, &started["state"]),
            (200, &json!("running")),
            "{version}"
        );
        traffic.recovers("traffic after the restart", 20);
        wait_for("the flows learnt again", || {
            flows_of(&c, dpid, "learning-switch").len() >= 2
        });
    }
}

/// Panics on the first frame from `cursed` it sees.
struct Cursed {
    cursed: [u8; 6],
}

impl App for Cursed {
    type Switch = ();
    fn name(&self) -> &str {
        "cursed"
    }
    fn switch_up(&self, _: &mut SwitchCtx<'_>) {}
    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|_, _, pi| {
            assert_ne!(
                pi.eth_src(),
                Some(MacAddr(self.cursed)),
                "a cursed host sent a frame"
            );
        });
    }
}

#[test]
fn an_application_that_panics_on_a_packet_is_reported_and_the_rest_carry_on() {
    let cursed = [2, 0, 0, 0, 0, 0xc];
    let learning = baton_apps::by_name("learning-switch").unwrap();
    let c = Controller::with_apps(vec![AnyApp::new(Cursed { cursed }), learning], None);
    let sw = SoftSwitch::connect(c.openflow(), 1, Version::V13, 3);
    let other = SoftSwitch::connect(c.openflow(), 2, Version::V10, 2);
    let traffic = Traffic::start(sw.ports.clone(), udp_frame(A, B, 7), udp_frame(B, A, 7));
    traffic.recovers("traffic before the panic", 10);

    sw.ports.inject(PortNo(3), &udp_frame(cursed, A, 9));
    wait_for("the panic in the API", || {
        let (_, apps) = c.get("/api/v1/apps");
        apps[0]["state"] == "failed"
    });
    let (_, apps) = c.get("/api/v1/apps");
    let failed = &apps[0];
    assert_eq!(failed["name"], "cursed");
    assert_eq!(failed["panics"], 1, "{failed}");
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(error.contains("a cursed host sent a frame"), "{failed}");
    assert_eq!(apps[1]["state"], "running", "{apps}");
    let (_, metrics) = c.get("/metrics");
    assert!(
        metrics
            .as_str()
            .unwrap()
            .lines()
            .any(|l| l == "baton_app_panics_total{app=\"cursed\"} 1"),
        "{metrics}"
    );

    // The controller, both switches and the learning switch carry on.
    traffic.recovers("traffic after the panic", 20);
    let (_, switches) = c.get("/api/v1/switches");
    assert_eq!(switches.as_array().unwrap().len(), 2, "{switches}");
    let far = Traffic::start(other.ports.clone(), udp_frame(A, B, 8), udp_frame(B, A, 8));
    far.recovers("traffic on the other switch", 10);
}
