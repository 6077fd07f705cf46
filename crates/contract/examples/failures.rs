//! Every single-link failure of a committed topology, CONTRACT beside No
//! Coordination: `cargo run --release -p baton-contract --example
//! failures -- [TOPOLOGY|FILE.json] [SEED]`.

use baton_contract::sim::{Failure, Mode, Params, Setup, simulate};
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
    let t0 = std::time::Instant::now();
    let setup = Setup::optimised(&topo, &params);
    println!("initial weights optimised in {:?}", t0.elapsed());
    let base = simulate(&topo, &params, &setup, Mode::NoCoordination, Failure::None);
    println!(
        "{name}: {} flows; loss-num with no failure {}",
        base.flows, base.loss_num
    );
    let mut sums = [[0f64; 6]; 2];
    for l in 0..topo.links.len() {
        let mut line = format!("link {l:3}:");
        for (i, mode) in [Mode::Contract, Mode::NoCoordination]
            .into_iter()
            .enumerate()
        {
            let o = simulate(&topo, &params, &setup, mode, Failure::Link(l));
            let sla3 = o
                .sla_violations
                .iter()
                .find(|(k, _)| *k == 3.0)
                .map_or(0.0, |x| x.1);
            sums[i][0] += o.loss_num as f64;
            sums[i][1] += o.malicious_leaked as f64;
            sums[i][2] += sla3;
            sums[i][3] += o.approvals as f64;
            sums[i][4] += o.lost_to_congestion as f64;
            sums[i][5] += o.lost_to_routing as f64;
            line += &format!(
                "  {mode:?}: loss {:3} (cong {:3}, route {:3}) leaked {} sla3 {:.3} apr {}",
                o.loss_num,
                o.lost_to_congestion,
                o.lost_to_routing,
                o.malicious_leaked,
                sla3,
                o.approvals
            );
        }
        println!("{line}");
    }
    let n = topo.links.len() as f64;
    for (i, mode) in ["CONTRACT", "No Coordination"].iter().enumerate() {
        println!(
            "{mode}: mean loss-num {:.1} (congestion {:.1}, routing {:.1}), leaked {:.2}, sla-v x3 {:.3}, approvals {:.1}",
            sums[i][0] / n,
            sums[i][4] / n,
            sums[i][5] / n,
            sums[i][1] / n,
            sums[i][2] / n,
            sums[i][3] / n
        );
    }
    println!("{} failures in {:?}", topo.links.len(), t0.elapsed());
}
