//! The web UI in a real browser: headless Chromium (driven over the
//! DevTools protocol, `browser/`) opens `baton run`'s page while baton
//! serves a 3×3 torus of Open vSwitch bridges with a host each (Mininet's
//! `torus,3,3`, where a person first found the drawing wanting;
//! `baton-netlab`), and the test checks what the page draws against what
//! the laboratory built: every switch, link and host in the graph; no two
//! nodes (labels included) drawn over each other; switches that stay put
//! while hosts appear and a link is cut; a cut link gone from the graph;
//! the switches' table whole within its panel; rates over a window that
//! a quiet second does not zero (the page's own code on made-up
//! counters); the applications' buttons stopping and starting an
//! application, as the REST API then reports; no error in the page.
//!
//! The browser runs inside the lab, where baton's API listens on the
//! lab's own loopback. Run as root; the lab installs Open vSwitch, and
//! `scripts/install-ui-deps.sh` Chromium, when missing. Screenshots are
//! written to `$CARGO_TARGET_TMPDIR/ui-hosts.png` (once the hosts are
//! drawn) and `ui.png` (at the end); with `BATON_UI_SCREENSHOT=1` the
//! test lets traffic run for a while first and writes `docs/ui.png`.

mod browser;

use baton_netlab::{Cmd, Lab, OfVersion, SwitchOptions, Topology};
use browser::Browser;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);
const URL: &str = "http://127.0.0.1:8080/";
const WIDTH: u32 = 1400;
const HEIGHT: u32 = 1250;

/// A datapath id as the API writes it: 00:00:00:00:00:00:00:01.
fn dpid(n: u64) -> String {
    let hex = format!("{n:016x}");
    hex.as_bytes()
        .chunks(2)
        .map(|b| std::str::from_utf8(b).unwrap())
        .collect::<Vec<_>>()
        .join(":")
}

/// GET `path` from baton's API inside the lab, as JSON: what a script
/// sees, independently of the page.
fn api(lab: &Lab, path: &str) -> Value {
    let out = lab
        .exec(Cmd::new("python3").args([
            "-c",
            "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())",
            &format!("http://127.0.0.1:8080{path}"),
        ]))
        .unwrap();
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{path}: {e}: {}", out.stdout))
}

/// The cables the graph draws, each as its two ends "dpid/port" in order.
const DRAWN_LINKS: &str = "baton.cy.edges('.link').map(e => { const l = e.data('link'); \
     return [`${l.src.dpid}/${l.src.port}`, `${l.dst.dpid}/${l.dst.port}`].sort(); })";

fn drawn_links(b: &mut Browser) -> BTreeSet<(String, String)> {
    let v = b.eval(DRAWN_LINKS).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().into(), p[1].as_str().unwrap().into()))
        .collect()
}

/// Where each switch is drawn (in the graph's own coordinates, which a
/// zoom or a pan of the view does not change).
fn switch_places(b: &mut Browser) -> BTreeMap<String, (f64, f64)> {
    let v = b
        .eval("baton.cy.nodes('.switch').map(n => [n.id(), n.position('x'), n.position('y')])")
        .unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let xy = (n[1].as_f64().unwrap(), n[2].as_f64().unwrap());
            (n[0].as_str().unwrap().to_string(), xy)
        })
        .collect()
}

/// The pairs of nodes whose boxes, labels included, overlap.
fn overlapping_nodes(b: &mut Browser) -> Vec<String> {
    let v = b
        .eval(
            "baton.cy.nodes().map(n => { const b = n.boundingBox({includeLabels: true, includeOverlays: false}); \
             return [n.id(), b.x1, b.y1, b.x2, b.y2]; })",
        )
        .unwrap();
    let boxes: Vec<(String, [f64; 4])> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let c = |i: usize| n[i].as_f64().unwrap();
            (n[0].as_str().unwrap().to_string(), [c(1), c(2), c(3), c(4)])
        })
        .collect();
    let mut pairs = Vec::new();
    for (i, (a, p)) in boxes.iter().enumerate() {
        for (b, q) in &boxes[i + 1..] {
            if p[0] < q[2] && q[0] < p[2] && p[1] < q[3] && q[1] < p[3] {
                pairs.push(format!("{a} {p:?} and {b} {q:?}"));
            }
        }
    }
    pairs
}

/// A step's outcome, or the test fails with it and the end of baton's log.
fn check<T>(r: Result<T, String>, baton: &baton_netlab::Proc) -> T {
    r.unwrap_or_else(|e| {
        let log = baton.stderr();
        let from = log.len().saturating_sub(4000);
        panic!("{e}\n--- baton (end of its log) ---\n{}", &log[from..])
    })
}

#[test]
fn the_web_ui_draws_a_torus_apart_keeps_it_still_follows_a_cut_link_and_steers_applications() {
    let start = Instant::now();
    let lab = Lab::new().unwrap();
    let baton = lab
        .spawn(
            Cmd::new(env!("CARGO_BIN_EXE_baton"))
                .args([
                    "run",
                    "--listen",
                    "127.0.0.1:6653",
                    "--api",
                    "127.0.0.1:8080",
                    "--workers",
                    "2",
                    "--apps",
                    "topology,devices,routing",
                ])
                .env("RUST_LOG", "info"),
        )
        .unwrap();
    lab.wait_listening(6653, 10 * SECOND).unwrap();
    lab.wait_listening(8080, 10 * SECOND).unwrap();

    // The page opens before the network exists, as for a person who
    // starts the controller and then Mininet: switches and links arrive
    // one by one under their eyes.
    let mut b = Browser::launch(&lab, WIDTH, HEIGHT);
    check(b.open(URL, WIDTH, HEIGHT), &baton);
    let (_, t) = check(
        b.wait_until(
            "the live feed",
            "document.querySelector('#feed').dataset.state === 'live'",
            10 * SECOND,
        ),
        &baton,
    );
    eprintln!("page open and live {t:?} after navigation");

    let topo = Topology::torus(3, 3);
    let opts = SwitchOptions::new()
        .controller("tcp:127.0.0.1:6653")
        .protocols(&[OfVersion::V13]);
    lab.build(&topo, &opts).unwrap();
    lab.wait_controller_connections(9, 30 * SECOND).unwrap();
    let network_up = start.elapsed();

    // Every switch and every cable, as the lab made them.
    let want: BTreeSet<(String, String)> = topo
        .switch_links()
        .iter()
        .map(|l| {
            let a = format!("{}/{}", dpid(l.a.0.0), l.a.1);
            let b = format!("{}/{}", dpid(l.b.0.0), l.b.1);
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    assert_eq!(want.len(), 18);
    let (counts, t) = check(
        b.wait_until(
            "9 switches and 18 links drawn",
            "(() => { const c = baton.counts(); \
             return c.switches === 9 && c.links === 18 && c.oneway === 0 ? c : null; })()",
            30 * SECOND,
        ),
        &baton,
    );
    eprintln!("graph complete {t:?} later: {counts}");
    assert_eq!(drawn_links(&mut b), want);
    let graph = b
        .eval("Object.assign({}, document.querySelector('#graph').dataset)")
        .unwrap();
    assert_eq!(graph["switches"], "9");
    assert_eq!(graph["links"], "18");
    let rows = b
        .eval("[...document.querySelectorAll('#switches tbody tr')].map(r => r.dataset.dpid)")
        .unwrap();
    let want_rows: Vec<String> = (1..=9).map(dpid).collect();
    assert_eq!(rows, serde_json::json!(want_rows), "the switch table");
    let switches_placed = switch_places(&mut b);
    assert_eq!(switches_placed.len(), 9);

    // Hosts appear once they talk.
    for i in 1..=9 {
        let to = format!("10.0.0.{}", i % 9 + 1);
        lab.wait_reachable(&format!("h{i}"), to, 10 * SECOND)
            .unwrap();
    }
    let (_, t) = check(
        b.wait_until(
            "9 hosts drawn, each beside its switch",
            "(() => { const c = baton.counts(); return c.hosts === 9 && c.attachments === 9; })()",
            10 * SECOND,
        ),
        &baton,
    );
    eprintln!("hosts drawn {t:?} after the pings");
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-hosts.png");
    check(b.screenshot(&shot), &baton);
    let attached = b
        .eval(
            "baton.cy.edges('.attachment').map(e => \
             `${e.source().data('mac')}@${e.target().data('dpid')}`).sort()",
        )
        .unwrap();
    let want_hosts: Vec<String> = (1..=9)
        .map(|i| format!("00:00:00:00:00:0{i}@{}", dpid(i)))
        .collect();
    assert_eq!(attached, serde_json::json!(want_hosts));
    // Drawn apart, and the switches stayed where they were while the
    // hosts came.
    assert_eq!(overlapping_nodes(&mut b), Vec::<String>::new());
    assert_eq!(
        switch_places(&mut b),
        switches_placed,
        "switches moved when hosts appeared"
    );
    // Every switch's ports cell inside the panel, not cut at its edge.
    let clipped = b
        .eval(
            "(() => { const panel = document.querySelector('#switches').getBoundingClientRect(); \
             const seen = document.querySelector('#switches .scroll').getBoundingClientRect(); \
             return [...document.querySelectorAll('#switches tbody tr')].filter(r => { \
               const c = r.cells[r.cells.length - 1].getBoundingClientRect(); \
               return !(c.left >= seen.left && c.right <= seen.right && seen.right <= panel.right); \
             }).map(r => r.dataset.dpid); })()",
        )
        .unwrap();
    assert_eq!(
        clipped,
        serde_json::json!([]),
        "ports cells cut at the panel's edge"
    );
    windowed_rates_survive_quiet_seconds(&mut b);

    if std::env::var_os("BATON_UI_SCREENSHOT").is_some() {
        // Load for the charts, then the picture for the docs.
        let load = control_plane_load(&lab);
        std::thread::sleep(25 * SECOND);
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ui.png");
        check(b.screenshot(&docs), &baton);
        drop(load);
        eprintln!("wrote {}", docs.display());
    }

    // Cut s1-s2 (datapaths 1 and 2, the first row's first two): the
    // graph loses exactly that cable, and nothing moves.
    let cut = Instant::now();
    lab.set_link_down("s0x0", "s0x1").unwrap();
    let (_, t) = check(
        b.wait_until(
            "the cut link gone from the graph",
            "baton.counts().links === 17",
            10 * SECOND,
        ),
        &baton,
    );
    eprintln!(
        "cut link gone from the graph {t:?} after the cut ({:?} since the cut)",
        cut.elapsed()
    );
    let s1_s2 = want
        .iter()
        .find(|(a, b)| a.starts_with(&dpid(1)) && b.starts_with(&dpid(2)))
        .unwrap()
        .clone();
    let mut left = want.clone();
    left.remove(&s1_s2);
    assert_eq!(drawn_links(&mut b), left);
    let topology = api(&lab, "/api/v1/topology");
    assert_eq!(
        topology["links"].as_array().unwrap().len(),
        34,
        "{topology}"
    );
    assert_eq!(
        switch_places(&mut b),
        switches_placed,
        "switches moved when a link was cut"
    );

    // The applications, with a button each.
    let apps = b
        .eval(
            "[...document.querySelectorAll('#apps tbody tr')].map(r => \
             [r.dataset.app, r.dataset.state, r.querySelector('button').dataset.action])",
        )
        .unwrap();
    assert_eq!(
        apps,
        serde_json::json!([
            ["topology", "running", "stop"],
            ["devices", "running", "stop"],
            ["routing", "running", "stop"]
        ])
    );
    lifecycle_from_the_buttons(&lab, &mut b, &baton);

    // "Lay out again" places everything afresh, still apart.
    check(b.click("#relayout", |_| Ok(())), &baton);
    assert_eq!(overlapping_nodes(&mut b), Vec::<String>::new());

    // Nothing went wrong in the page.
    assert!(
        b.problems.is_empty(),
        "the page reported: {:#?}",
        b.problems
    );
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui.png");
    check(b.screenshot(&shot), &baton);
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);

    b.close();
    drop(baton);
    lab.close().unwrap();
    eprintln!(
        "network up in {network_up:?}; whole test {:?}",
        start.elapsed()
    );
}

/// The page's windowed rates (`WindowedRates` in `ui/charts.js`) on
/// made-up counters: a switch whose only traffic is a burst of 50
/// messages every 5 s, sampled every second, reads 10 messages a second
/// in every sample once the window has filled (its one-second rate would
/// read 50 then four zeros), and a counter that starts again (the switch
/// reconnected) gives no negative rate.
fn windowed_rates_survive_quiet_seconds(b: &mut Browser) {
    let rates = b
        .eval(
            "(async () => { const { WindowedRates } = await import('/ui/charts.js'); \
             const w = new WindowedRates(5); const out = []; let n = 0; \
             for (let t = 0; t <= 20; t++) { \
               if (t % 5 === 1) n += 50; \
               const msgs = t === 20 ? 3 : n; \
               w.push({ at_ms: 1000 * t, switches: [{ dpid: 'x', rx_msgs: msgs, tx_msgs: 2 * msgs }], \
                        scheduler: { workers: [{ messages: msgs, batches: msgs / 10 }] } }); \
               const r = w.rates(); \
               out.push(r && [r.rx, r.tx, r.switches.get('x').rx, r.workers[0].msgPerSec, r.workers[0].batch]); } \
             return out; })()",
        )
        .unwrap();
    let rates = rates.as_array().unwrap();
    assert_eq!(rates[0], Value::Null, "no rate from one sample");
    for (t, r) in rates.iter().enumerate().take(20).skip(5) {
        assert_eq!(r, &serde_json::json!([10, 20, 10, 10, 10]), "second {t}");
    }
    let last = rates[20].as_array().unwrap();
    assert!(
        last.iter().all(|x| x.as_f64().is_some_and(|x| x >= 0.0)),
        "a counter that started again: {last:?}"
    );
}

/// Frames from each host to Ethernet addresses nobody has, at 400, 200,
/// 100 and 50 a second from h1 to h4: each reaches baton as a PACKET_IN
/// (routing floods it over the spanning tree), so the charts have
/// throughput, unequal shares for the fairness index, and batches.
fn control_plane_load(lab: &Lab) -> Vec<baton_netlab::Proc> {
    const SEND: &str = "import socket, sys, time
iface, mac, rate = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':', '')), float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
gap, t, i = 1.0 / rate, time.monotonic(), 0
while True:
    i += 1
    s.send(bytes([2, 0, 0]) + (i % 65536).to_bytes(3, 'big') + mac + bytes([0x88, 0xb5]) + bytes(46))
    t += gap
    time.sleep(max(0.0, t - time.monotonic()))
";
    [(1, "400"), (2, "200"), (3, "100"), (4, "50")]
        .into_iter()
        .map(|(i, rate)| {
            let cmd = Cmd::new("python3")
                .args([
                    "-c",
                    SEND,
                    &format!("h{i}-eth0"),
                    &format!("00:00:00:00:00:0{i}"),
                    rate,
                ])
                .host(format!("h{i}"))
                .timeout(Duration::from_secs(120));
            lab.spawn(cmd).unwrap()
        })
        .collect()
}

/// Stops `routing` with its button and starts it again, checking the
/// page and the API after each.
fn lifecycle_from_the_buttons(lab: &Lab, b: &mut Browser, baton: &baton_netlab::Proc) {
    for (action, state) in [("stop", "stopped"), ("start", "running")] {
        let t = Instant::now();
        // The button is held while a snapshot re-renders the table, as a
        // person's click may be: the click must still count.
        let held = |b: &mut Browser| {
            let seen = b.eval("window.baton.snapshots")?;
            b.wait_until(
                "a snapshot rendered while the button is held",
                &format!("window.baton.snapshots > {seen} || null"),
                5 * SECOND,
            )
            .map(drop)
        };
        check(
            b.click(
                &format!("button[data-app='routing'][data-action='{action}']"),
                held,
            ),
            baton,
        );
        check(
            b.wait_until(
                &format!("routing {state} in the page"),
                &format!(
                    "document.querySelector(\"#apps tr[data-app='routing']\").dataset.state === '{state}'"
                ),
                5 * SECOND,
            ),
            baton,
        );
        let apps = api(lab, "/api/v1/apps");
        let routing = apps
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "routing")
            .unwrap();
        assert_eq!(routing["state"], state, "{routing}");
        eprintln!("{action} from the page: {state} in {:?}", t.elapsed());
    }
    let notice = b.eval("document.querySelector('#notice').hidden").unwrap();
    assert_eq!(notice, true, "the page showed an error");
}
