//! Every single-link failure of a committed topology under No
//! Coordination: `cargo run --release -p baton-contract --example
//! no_coordination -- [TOPOLOGY] [SEED]`.

use baton_contract::sim::{Failure, Params, Setup, no_coordination};
use baton_contract::topo::Topology;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "uninett2010".into());
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("SEED"));
    let params = Params {
        seed,
        ..Params::default()
    };
    let topo = if name.ends_with(".json") {
        Topology::from_json(
            &std::fs::read_to_string(&name).expect("read"),
            params.capacity_bps,
        )
    } else {
        Topology::built_in(&name, params.capacity_bps)
    }
    .expect("topology");
    let setup = Setup::new(&topo, &params, vec![1; topo.links.len()]);
    let t0 = std::time::Instant::now();
    let none = no_coordination(&topo, &params, &setup, Failure::None);
    println!("{name}: {} flows; no failure: {none:?}", none.flows);
    let mut total = 0;
    for l in 0..topo.links.len() {
        let o = no_coordination(&topo, &params, &setup, Failure::Link(l));
        total += o.loss_num;
        println!(
            "link {l:3}: loss-num {:3} (congestion {:3}, routing {:3}), leaked {}, sla x3 {:.3}, lsas {}",
            o.loss_num,
            o.lost_to_congestion,
            o.lost_to_routing,
            o.malicious_leaked,
            o.sla_violations
                .iter()
                .find(|(k, _)| *k == 3.0)
                .map_or(0.0, |x| x.1),
            o.lsas
        );
    }
    println!(
        "mean loss-num {:.1} over {} failures in {:?}",
        total as f64 / topo.links.len() as f64,
        topo.links.len(),
        t0.elapsed()
    );
}
