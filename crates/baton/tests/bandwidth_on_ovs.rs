//! Bandwidth on demand on real switches (issue 24 §2): `baton run --apps
//! topology,devices,bandwidth,routing` against a k=4 fat tree of Open
//! vSwitch bridges (userspace datapath, 20 switches, 16 hosts), for
//! OpenFlow 1.0 and 1.3. Every pair pings (each pair's first packet is a
//! flow request that reserves `flow_kbps` on its path); then the operator
//! reserves through the REST API for two pairs whose paths share links,
//! until a third reservation over those links is refused with a 409 that
//! names one; on 1.3 the source switch holds each reservation to its rate
//! with a meter (`ovs-ofctl dump-meters`) its flow goes through
//! (`dump-flows`), on 1.0 there is none. One reservation released, the
//! refused one fits, and every pair still pings alongside the
//! reservations' flows.
//!
//! Each test builds its own laboratory (`baton-netlab`), as
//! `network_services` does; nothing outlives the test. Run as root. Times
//! are printed, not asserted.

mod support;

use baton_netlab::{HostSpec, OfVersion, Topology};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use support::{Network, SECOND, Switches, discovers_and_delivers, dpid, tail};

/// The network services with bandwidth on demand before routing.
const APPS: Option<&str> = Some("topology,devices,bandwidth,routing");

/// A link as the API gives it (`{"src": {"dpid", "port"}, "dst": ...}`),
/// named as a refusal names it: `DPID/PORT -> DPID/PORT`.
fn link_name(link: &Value) -> String {
    let end = |e: &Value| format!("{}/{}", e["dpid"].as_str().unwrap(), e["port"]);
    format!("{} -> {}", end(&link["src"]), end(&link["dst"]))
}

/// The links a reservation crosses, by name.
fn links_of(r: &Value) -> BTreeSet<String> {
    r["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(link_name)
        .collect()
}

/// A link's capacity and what is reserved on it, kbit/s.
#[derive(Debug, Clone, Copy)]
struct Load {
    capacity: u64,
    reserved: u64,
}

/// The reservations, and every link's load by name, from one answer.
fn reservations(net: &Network) -> (Vec<Value>, BTreeMap<String, Load>) {
    let all = net.api("/api/v1/reservations");
    let loads = all["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let kbps = |k: &str| l[k].as_u64().unwrap();
            let load = Load {
                capacity: kbps("capacity_kbps"),
                reserved: kbps("reserved_kbps"),
            };
            (link_name(&l["link"]), load)
        })
        .collect();
    (all["reservations"].as_array().unwrap().clone(), loads)
}

/// What the operator's reservations hold on `link`, and what every
/// reservation (the flow requests' too) holds there, once the list and
/// the link's load agree (a flow request may come between the two reads
/// of one answer).
fn shares_on(net: &Network, link: &str) -> (u64, u64) {
    let start = Instant::now();
    loop {
        let (list, loads) = reservations(net);
        let on_link = |operator: bool| -> u64 {
            list.iter()
                .filter(|r| links_of(r).contains(link))
                .filter(|r| !operator || r["origin"] == "operator")
                .map(|r| r["kbps"].as_u64().unwrap())
                .sum()
        };
        let (operator, all) = (on_link(true), on_link(false));
        if loads[link].reserved == all {
            return (operator, all);
        }
        assert!(
            start.elapsed() < 5 * SECOND,
            "{link}: {} kbit/s reserved, the reservations crossing it hold {all}",
            loads[link].reserved
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// POST a reservation of `kbps` from `src` to `dst` for ten minutes: the
/// status and the answer.
fn reserve(net: &Network, src: &HostSpec, dst: &HostSpec, kbps: u64) -> (u16, Value) {
    let body = json!({
        "src": src.mac.to_string(),
        "dst": dst.mac.to_string(),
        "kbps": kbps,
        "duration_secs": 600,
    });
    let start = Instant::now();
    let answer = net.call("POST", "/api/v1/reservations", Some(&body));
    eprintln!(
        "  {} -> {}, {kbps} kbit/s: {} in {:?}",
        src.name,
        dst.name,
        answer.0,
        start.elapsed()
    );
    answer
}

/// A reservation that must be granted.
fn granted(net: &Network, src: &HostSpec, dst: &HostSpec, kbps: u64) -> Value {
    let (status, r) = reserve(net, src, dst, kbps);
    assert_eq!(status, 201, "{r}\n{}", tail(&net.baton.stderr()));
    assert_eq!(
        (r["kbps"].as_u64(), r["origin"].as_str()),
        (Some(kbps), Some("operator")),
        "{r}"
    );
    r
}

/// The names of the switches on reservation `r`'s path, the source's
/// first.
fn path_switches(net: &Network, r: &Value) -> Vec<String> {
    let hops = r["path"].as_array().unwrap();
    hops.iter()
        .map(|hop| {
            let dpid = dpid(hop.as_str().unwrap().rsplit_once('/').unwrap().0);
            let s = net.topo.switches.iter().find(|s| s.dpid.0 == dpid);
            s.unwrap_or_else(|| panic!("no switch {dpid:#x}"))
                .name
                .clone()
        })
        .collect()
}

/// The number written after the first `key` in `text`.
fn number_after(text: &str, key: &str) -> Option<u64> {
    let at = text.find(key)? + key.len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The flows of reservation `r` on each switch of its path, as
/// `dump-flows` prints them: those whose cookie's low 48 bits (the
/// application's own, under the runtime's tag) are its number.
fn flows_of(net: &Network, version: OfVersion, r: &Value) -> Vec<(String, String)> {
    let id = r["id"].as_u64().unwrap();
    let ours = |flow: &String| {
        let hex = flow.strip_prefix("cookie=0x")?.split(',').next()?;
        let cookie = u64::from_str_radix(hex, 16).ok()?;
        Some(cookie & ((1 << 48) - 1) == id)
    };
    path_switches(net, r)
        .into_iter()
        .flat_map(|s| {
            let flows = net.lab.dump_flows(&s, version).unwrap();
            flows
                .into_iter()
                .filter(|f| ours(f) == Some(true))
                .map(move |f| (s.clone(), f))
        })
        .collect()
}

/// The meters of `switch` (1.3): number -> the rate of its drop band,
/// kbit/s.
fn meters(net: &Network, switch: &str) -> BTreeMap<u64, u64> {
    let text = net
        .lab
        .ofctl(OfVersion::V13, ["dump-meters", switch])
        .unwrap();
    // `meter=1 kbps bands=` then, on the same line or the next, `type=drop
    // rate=5000000`.
    let mut meters = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        current = number_after(line, "meter=").or(current);
        if let (Some(id), Some(rate)) = (current, number_after(line, " rate=")) {
            assert!(line.contains("type=drop"), "{text}");
            meters.insert(id, rate);
        }
    }
    meters
}

/// Reservation `r` has a flow for its pair on every switch of its path;
/// on 1.3 the first, at the source's switch, goes through a meter there
/// whose drop band is at the reserved rate: its number. On 1.0 there is
/// none.
fn assert_installed(net: &Network, version: OfVersion, r: &Value) -> Option<u64> {
    let flows = flows_of(net, version, r);
    let on: Vec<&str> = flows.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(on, path_switches(net, r), "{r}\n{flows:#?}");
    let pair = format!(
        "dl_src={},dl_dst={}",
        r["src"].as_str().unwrap(),
        r["dst"].as_str().unwrap()
    );
    assert!(flows.iter().all(|(_, f)| f.contains(&pair)), "{flows:#?}");
    let (switch, first) = &flows[0];
    let meter = number_after(first, "meter:");
    if version == OfVersion::V10 {
        assert_eq!(meter, None, "{first}");
        return None;
    }
    let meter = meter.unwrap_or_else(|| panic!("no meter in {switch}'s flow {first}"));
    let meters = meters(net, switch);
    assert_eq!(
        meters.get(&meter).copied(),
        r["kbps"].as_u64(),
        "{switch}: meter {meter} of {first}: {meters:?}"
    );
    assert!(
        flows[1..].iter().all(|(_, f)| !f.contains("meter:")),
        "{flows:#?}"
    );
    eprintln!(
        "  {switch}: {first}\n  {switch}: meter {meter}, drop above {} kbit/s",
        meters[&meter]
    );
    Some(meter)
}

/// Lines of Open vSwitch's log that say it refused a message from baton
/// (`e1<->tcp:127.0.0.1:6653: sending OFPMMFC_... error reply to
/// OFPT_METER_MOD message`).
fn ovs_refusals(net: &Network) -> Vec<String> {
    let log =
        std::fs::read_to_string(net.lab.dir().join("log/ovs-vswitchd.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains("<->tcp:127.0.0.1:6653: sending") && l.contains("error reply"))
        .map(String::from)
        .collect()
}

/// The whole scenario on a k=4 fat tree speaking `version`.
fn bandwidth_on_demand(version: OfVersion) {
    let start = Instant::now();
    let net = discovers_and_delivers(Topology::fat_tree(4), version, Switches::Ovs, APPS);
    eprintln!(
        "{version}: every pair pinged {:?} after the start",
        start.elapsed()
    );

    // What the ports say they run at, and what the links carry.
    let speeds: BTreeSet<Option<u64>> = net
        .api("/api/v1/switches")
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["ports"].as_array().unwrap().clone())
        // Not the bridge's own (LOCAL) port.
        .filter(|p| p["no"].as_u64().is_some_and(|no| no < 0xff00))
        .map(|p| p["speed_kbps"].as_u64())
        .collect();
    let (_, loads) = reservations(&net);
    let capacities: BTreeSet<u64> = loads.values().map(|l| l.capacity).collect();
    eprintln!(
        "{version}: the ports say {speeds:?} kbit/s; the {} links carry {capacities:?} kbit/s",
        loads.len()
    );
    assert_eq!(loads.len(), net.built().len());
    assert_eq!(capacities.len(), 1, "{loads:#?}");
    let c = *capacities.first().unwrap();
    // The slower port's speed, or the default (1 Gbit/s) where none says.
    let slowest = speeds.iter().flatten().min().copied();
    assert_eq!(c, slowest.unwrap_or(1_000_000), "{speeds:?}");

    // Two hosts under e1 send to two under e3 (another pod): their paths
    // share links. Half the capacity for the first pair; a tenth less for
    // the second, which leaves room for the flow requests' reservations
    // (flow_kbps for every pair that pinged, on its path).
    let h = &net.topo.hosts;
    let (h1, h2, h5, h6) = (&h[0], &h[1], &h[4], &h[5]);
    let (kbps1, kbps2) = (c / 2, c / 2 - c / 10);
    eprintln!("{version}: reserving");
    let r1 = granted(&net, h1, h5, kbps1);
    let r2 = granted(&net, h2, h6, kbps2);
    let shared: BTreeSet<String> = links_of(&r1)
        .intersection(&links_of(&r2))
        .cloned()
        .collect();
    eprintln!(
        "{version}: {} -> {} and {} -> {} share {shared:#?}",
        h1.name, h5.name, h2.name, h6.name
    );
    assert!(!shared.is_empty(), "{r1}\n{r2}");
    for link in &shared {
        let (operator, _) = shares_on(&net, link);
        assert_eq!(operator, kbps1 + kbps2, "{link}");
    }

    // A third pair over the same links: a quarter does not fit, and the
    // refusal names one of the full links.
    let kbps3 = c / 4;
    let (status, refusal) = reserve(&net, h1, h6, kbps3);
    assert_eq!(status, 409, "{refusal}");
    let message = refusal["error"].as_str().unwrap_or_default().to_string();
    let named = shared
        .iter()
        .find(|l| message.contains(&format!("link {l} would be oversubscribed")));
    let named = named
        .unwrap_or_else(|| panic!("{message} names none of {shared:?}"))
        .clone();
    eprintln!("{version}: refused: {message}");

    // The granted ones' flows are in, each held to its rate at its source
    // switch (1.3), or not (1.0).
    let meter1 = assert_installed(&net, version, &r1);
    assert_installed(&net, version, &r2);

    // The first released: its flows and meter go, its share too, and the
    // third fits.
    let (_, before) = shares_on(&net, &named);
    let t = Instant::now();
    let path = format!("/api/v1/reservations/{}", r1["id"]);
    let answer = net.call("DELETE", &path, None);
    eprintln!("{version}: released {} in {:?}", r1["id"], t.elapsed());
    assert_eq!(answer, (204, Value::Null));
    let took = net.wait_for(5 * SECOND, "release of the flows", |net| {
        flows_of(net, version, &r1).is_empty()
    });
    eprintln!("{version}: its flows gone from the switches {took:?} later");
    if let Some(meter) = meter1 {
        let left = meters(&net, &path_switches(&net, &r1)[0]);
        assert!(!left.contains_key(&meter), "meter {meter}: {left:?}");
    }
    let (operator, after) = shares_on(&net, &named);
    eprintln!("{version}: {named}: {before} kbit/s reserved, {after} once released");
    assert_eq!(operator, kbps2);
    assert!(after < before, "{before} -> {after}");
    let r3 = granted(&net, h1, h6, kbps3);
    assert!(links_of(&r3).contains(&named), "{r3}");
    assert_installed(&net, version, &r3);

    // Reservations and plain flows side by side: every pair still pings,
    // the reserved pairs through their reservations' flows.
    let t = Instant::now();
    net.assert_all_pairs_ping();
    eprintln!("{version}: every pair pinged again in {:?}", t.elapsed());
    for r in [&r2, &r3] {
        assert_installed(&net, version, r);
        let flows = flows_of(&net, version, r);
        let carried = |f: &String| number_after(f, "n_packets=") >= Some(3);
        assert!(flows.iter().all(|(_, f)| carried(f)), "{flows:#?}");
    }
    let refusals = ovs_refusals(&net);
    assert!(refusals.is_empty(), "Open vSwitch refused: {refusals:#?}");
    eprintln!("{version}: done in {:?}", start.elapsed());
}

#[test]
fn reservations_on_a_fat_tree_k4_openflow_10() {
    bandwidth_on_demand(OfVersion::V10);
}

#[test]
fn reservations_on_a_fat_tree_k4_openflow_13() {
    bandwidth_on_demand(OfVersion::V13);
}
