//! The web UI in a real browser: headless Chromium (driven over the
//! DevTools protocol, `browser/`) opens `baton run`'s page while baton
//! serves a ring of four Open vSwitch bridges with a host each
//! (`baton-netlab`), and the test checks what the page draws against what
//! the laboratory built: every switch, link and host in the graph; a cut
//! link gone from it; the applications' buttons stopping and starting an
//! application, as the REST API then reports; no error in the page.
//!
//! The browser runs inside the lab, where baton's API listens on the
//! lab's own loopback. Run as root; the lab installs Open vSwitch, and
//! `scripts/install-ui-deps.sh` Chromium, when missing. A screenshot is
//! written to `$CARGO_TARGET_TMPDIR/ui.png`; with `BATON_UI_SCREENSHOT=1`
//! the test lets traffic run for a while first and writes `docs/ui.png`.

mod browser;

use baton_netlab::{Cmd, Lab, OfVersion, SwitchOptions, Topology};
use browser::Browser;
use serde_json::Value;
use std::collections::BTreeSet;
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

/// A step's outcome, or the test fails with it and the end of baton's log.
fn check<T>(r: Result<T, String>, baton: &baton_netlab::Proc) -> T {
    r.unwrap_or_else(|e| {
        let log = baton.stderr();
        let from = log.len().saturating_sub(4000);
        panic!("{e}\n--- baton (end of its log) ---\n{}", &log[from..])
    })
}

#[test]
fn the_web_ui_draws_the_network_follows_a_cut_link_and_steers_applications() {
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
    let topo = Topology::ring(4);
    let opts = SwitchOptions::new()
        .controller("tcp:127.0.0.1:6653")
        .protocols(&[OfVersion::V13]);
    lab.build(&topo, &opts).unwrap();
    lab.wait_controller_connections(4, 20 * SECOND).unwrap();
    let network_up = start.elapsed();

    // The browser starts meanwhile (a second or so).
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
    assert_eq!(want.len(), 4);
    let (counts, t) = check(
        b.wait_until(
            "4 switches and 4 links drawn",
            "(() => { const c = baton.counts(); \
             return c.switches === 4 && c.links === 4 && c.oneway === 0 ? c : null; })()",
            20 * SECOND,
        ),
        &baton,
    );
    eprintln!("graph complete {t:?} later: {counts}");
    assert_eq!(drawn_links(&mut b), want);
    let graph = b
        .eval("Object.assign({}, document.querySelector('#graph').dataset)")
        .unwrap();
    assert_eq!(graph["switches"], "4");
    assert_eq!(graph["links"], "4");
    let rows = b
        .eval("[...document.querySelectorAll('#switches tbody tr')].map(r => r.dataset.dpid)")
        .unwrap();
    assert_eq!(
        rows,
        serde_json::json!([dpid(1), dpid(2), dpid(3), dpid(4)]),
        "the switch table"
    );

    // Hosts appear once they talk.
    for i in 1..=4 {
        let to = format!("10.0.0.{}", i % 4 + 1);
        lab.wait_reachable(&format!("h{i}"), to, 10 * SECOND)
            .unwrap();
    }
    let (_, t) = check(
        b.wait_until(
            "4 hosts drawn, each beside its switch",
            "(() => { const c = baton.counts(); return c.hosts === 4 && c.attachments === 4; })()",
            10 * SECOND,
        ),
        &baton,
    );
    eprintln!("hosts drawn {t:?} after the pings");
    let attached = b
        .eval(
            "baton.cy.edges('.attachment').map(e => \
             `${e.source().data('mac')}@${e.target().data('dpid')}`).sort()",
        )
        .unwrap();
    let want_hosts: Vec<String> = (1..=4)
        .map(|i| format!("00:00:00:00:00:0{i}@{}", dpid(i)))
        .collect();
    assert_eq!(attached, serde_json::json!(want_hosts));

    if std::env::var_os("BATON_UI_SCREENSHOT").is_some() {
        // Load for the charts, then the picture for the docs.
        let load = control_plane_load(&lab);
        std::thread::sleep(25 * SECOND);
        let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ui.png");
        check(b.screenshot(&docs), &baton);
        drop(load);
        eprintln!("wrote {}", docs.display());
    }

    // Cut s1-s2: the graph loses exactly that cable.
    let cut = Instant::now();
    lab.set_link_down("s1", "s2").unwrap();
    let (_, t) = check(
        b.wait_until(
            "the cut link gone from the graph",
            "baton.counts().links === 3",
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
    assert_eq!(topology["links"].as_array().unwrap().len(), 6, "{topology}");

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
