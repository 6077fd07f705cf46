//! `netlab`: a laboratory from the command line.
//!
//! ```text
//! netlab hold TOPOLOGY [--controller TARGET]... [--standalone] [--rstp]
//! netlab measure [--runs N] [TOPOLOGY...]
//! netlab controller --run 'CMD ARGS' [--topology T] [--of 10|13] [--samples N]
//!                   [--links-api URL] [--cut A-B [--cuts N]]
//! netlab measure forwarding [--runs N] [--flow-runs N] [--secs S] [--flows N,...] [--baton PATH]
//! netlab blast IFACE SIZE SECONDS
//! ```
//! `hold` builds TOPOLOGY (`single:N`, `linear:N`, `ring:N`, `fat-tree:K`)
//! in a new laboratory, prints how to find and enter it (`dir=`,
//! `holder=`, `netns=`, `enter=`) and `ready`, then keeps it until its
//! standard input closes (or it is killed: the lab goes with it).
//! `measure` times building topologies (default: linear:3, ring:4,
//! fat-tree:4) and prints a Markdown table (see `measure.rs`).
//! `controller` measures a controller running a network: discovery,
//! first-packet latency, reconvergence after a cut (see `controller.rs`).
//! `measure forwarding` measures `baton switch` against Open vSwitch's
//! userspace datapath between two hosts (`forwarding.rs`), with `blast`
//! (`blast.rs`) as its traffic generator, run inside a host.

mod blast;
mod controller;
mod forwarding;
mod measure;

use baton_netlab::{FailMode, Lab, SpanningTree, SwitchOptions, Topology};
use std::io::Read;
use std::process::ExitCode;

const USAGE: &str = "usage: netlab hold TOPOLOGY [--controller TARGET]... [--standalone] [--rstp]
       netlab measure [--runs N] [TOPOLOGY...]
       netlab controller --run 'CMD ARGS' [--topology T] [--of 10|13] [--samples N]
                         [--links-api URL] [--cut A-B [--cuts N]]
       netlab measure forwarding [--runs N] [--flow-runs N] [--secs S] [--flows N,...] [--baton PATH]
       netlab blast IFACE SIZE SECONDS
  TOPOLOGY: single:N | linear:N | ring:N | fat-tree:K";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("hold") => hold(&args[1..]),
        Some("measure") if args.get(1).is_some_and(|a| a == "forwarding") => {
            forwarding::main(&args[2..])
        }
        Some("measure") => measure::main(&args[1..]),
        Some("controller") => controller::main(&args[1..]),
        Some("blast") => blast::main(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netlab: {e}");
            ExitCode::FAILURE
        }
    }
}

fn hold(args: &[String]) -> Result<(), String> {
    let (topo, opts) = parse_build(args)?;
    let lab = Lab::new().map_err(|e| e.to_string())?;
    lab.build(&topo, &opts).map_err(|e| e.to_string())?;
    let info = lab.info();
    println!("dir={}", info.dir.display());
    println!("holder={}", info.holder_pid);
    println!("netns={}", info.net_ns);
    println!("pidns={}", info.pid_ns);
    for (host, ns) in &info.host_net_ns {
        println!("host={host} netns={ns}");
    }
    println!(
        "enter=nsenter -t {} -n -m -p env OVS_RUNDIR={d}/run OVS_LOGDIR={d}/log OVS_DBDIR={d}/db sh",
        info.holder_pid,
        d = info.dir.display()
    );
    println!("ready");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    lab.close().map(drop).map_err(|e| e.to_string())
}

/// TOPOLOGY and the switch options from the arguments.
fn parse_build(args: &[String]) -> Result<(Topology, SwitchOptions), String> {
    let mut topo = None;
    let mut opts = SwitchOptions::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--controller" => {
                let t = it
                    .next()
                    .ok_or("--controller needs a target (tcp:127.0.0.1:6653)")?;
                opts = opts.controller(t.clone());
            }
            "--standalone" => opts = opts.fail_mode(FailMode::Standalone),
            "--rstp" => opts = opts.spanning_tree(SpanningTree::Rstp),
            spec if topo.is_none() => {
                topo = Some(Topology::named(spec).map_err(|e| e.to_string())?)
            }
            other => return Err(format!("unexpected `{other}`\n{USAGE}")),
        }
    }
    Ok((topo.ok_or(USAGE)?, opts))
}
