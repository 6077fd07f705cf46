//! Memory per emulated switch: builds a topology's network (default
//! `torus:100x100`), connects every switch in process (HELLOs exchanged,
//! as after a real handshake) and prints the resident memory it took.
//!
//! `cargo run --release -p baton-netemu --example footprint -- [TOPOLOGY] [1.0|1.3] [TABLES]`
//! (`TABLES`: flow tables of a 1.3 switch, default 1)
//! (one version per run: freed memory is not always returned to the
//! system, so a second network in the same process would be measured
//! wrongly).

use baton_netemu::report::resident_bytes;
use baton_netemu::{Config, FileHosts, Network, Pairs, SwitchId, load};
use baton_openflow::Version;
use baton_openflow::hello::Hello;
use baton_openflow::types::Xid;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let spec = args.next().unwrap_or_else(|| "torus:100x100".into());
    let version = match args.next().as_deref() {
        None | Some("1.3") => Version::V13,
        Some("1.0") => Version::V10,
        Some(other) => return Err(format!("`{other}`: 1.0 or 1.3").into()),
    };
    let tables: u8 = match args.next() {
        Some(t) => t.parse()?,
        None => 1,
    };
    let graph = load(&spec, FileHosts::OnePerSwitch)?;
    let before = resident_bytes().unwrap_or(0);
    let mut cfg = Config::new("127.0.0.1:9".parse()?, graph);
    cfg.version = version;
    cfg.switch.tables_13 = tables;
    cfg.traffic.pairs = Pairs::None;
    let t0 = Instant::now();
    let mut net = Network::new(&cfg, t0)?;
    let built = t0.elapsed();
    let mut hello = Vec::new();
    Hello::baton().encode(version, Xid(1), &mut hello);
    for s in 0..net.len() {
        let s = SwitchId(s as u32);
        net.connect(s, t0);
        let n = net.output(s).len();
        net.consume_output(s, n);
        net.handle_input(s, t0, &hello);
    }
    let after = resident_bytes().unwrap_or(0);
    let n = net.len();
    println!(
        "{spec}, {version}, {tables} table(s) in 1.3: {n} switches ({} ready), built in {built:?}; resident {:.1} MiB more, {:.1} KiB per switch",
        net.ready_count(),
        (after - before) as f64 / 1048576.0,
        (after - before) as f64 / 1024.0 / n as f64
    );
    Ok(())
}
