//! Runs the emulator against baton's controller started in this process
//! with its default applications, and prints the report.
//!
//! `cargo run --release -p baton-netemu --example against_baton -- [TOPOLOGY] [1.0|1.3] [EVENTS] [PAIRS]`
//! (`PAIRS`: that many random pairs; without it, every host sends to the
//! host half the host list away)

use baton_netemu::{Config, FileHosts, Pairs, Schedule, load, run};
use baton_openflow::Version;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let spec = args.next().unwrap_or_else(|| "fat-tree:4".into());
    let version = match args.next().as_deref() {
        None | Some("1.3") => Version::V13,
        Some("1.0") => Version::V10,
        Some(other) => return Err(format!("`{other}`: 1.0 or 1.3").into()),
    };
    let events = Schedule::parse(&args.next().unwrap_or_default())?;
    let pairs = match args.next() {
        Some(n) => Pairs::Random {
            count: n.parse()?,
            seed: 1,
        },
        None => Pairs::HalfWay,
    };
    let apps = baton_apps::DEFAULT_APPS
        .iter()
        .map(|n| baton_apps::by_name(n))
        .collect::<Result<Vec<_>, _>>()?;
    let rt = baton_runtime::Runtime::start(
        baton_runtime::Config {
            listen: vec!["127.0.0.1:0".parse()?],
            workers: 1,
            ..baton_runtime::Config::default()
        },
        apps,
    )?;
    let mut cfg = Config::new(rt.local_addrs()[0], load(&spec, FileHosts::OnePerSwitch)?);
    cfg.version = version;
    cfg.events = events;
    cfg.traffic.pairs = pairs;
    cfg.warmup = Duration::from_secs(2);
    cfg.duration = Duration::from_secs(5);
    let report = run(cfg)?;
    rt.stop();
    print!("{report}");
    Ok(())
}
