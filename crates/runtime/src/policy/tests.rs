//! The policy's single decisions on synthetic time; `sched/simulation.rs`
//! runs it over many switches.

use super::*;

const KB: usize = 1024;
const MS: Duration = Duration::from_millis(1);

fn params(batching: Batching, fair: bool) -> Params {
    Params {
        batching,
        fair,
        min_read: 16 * KB,
        max_read: 64 * KB,
        static_read: 64 * KB,
        bdu: MS,
    }
}

/// A policy that has measured `rate` bytes per second: one batch of that
/// many bytes per second, on synthetic time from `t0`.
fn measured(p: Params, rate: usize, t0: Instant) -> Policy {
    let mut policy = Policy::new(p);
    policy.begin(t0);
    policy.took(rate / 1000);
    policy.batch_done(t0 + MS, 0, true, MS);
    policy
}

#[test]
fn the_quantum_spreads_one_bdu_of_input_over_a_round() {
    let t0 = Instant::now();
    // 1 GB/s: a BDU (1 ms) holds 1 MB of input.
    let policy = measured(params(Batching::Adaptive, true), 1 << 30, t0);
    // Few ready switches: a large quantum, up to the ceiling.
    assert_eq!(policy.quantum(1), 64 * KB);
    assert_eq!(policy.quantum(32), (1 << 30) / 1000 / 32);
    // Many: the floor, fine-grained rounds (Maestro §3.2).
    assert_eq!(policy.quantum(1000), 16 * KB);
    // Static batching reads Beacon's fixed 64 KB whatever the load.
    let fixed = measured(params(Batching::Static, false), 1 << 30, t0);
    assert_eq!(fixed.quantum(1000), 64 * KB);
}

#[test]
fn only_the_fair_scheduler_passes_a_switch_over() {
    let t0 = Instant::now();
    let rate = 1 << 30;
    let fair = measured(params(Batching::Adaptive, true), rate, t0);
    let plain = measured(params(Batching::Adaptive, false), rate, t0);
    // At the quantum's floor a fair service may take a whole read, up to a
    // quarter of a BDU's input (here 268 KB, so max_read).
    let Service::Serve(grant) = fair.service(16 * KB, 1, 0, false) else {
        panic!("a switch without surplus is served");
    };
    assert_eq!((grant.allowance, grant.limit), (16 * KB, 64 * KB));
    assert_eq!(fair.surplus_after(grant, 64 * KB, false), Some(48 * KB));
    assert_eq!(
        fair.service(16 * KB, 1, 48 * KB, false),
        Service::PassOver { surplus: 32 * KB }
    );
    // Weight 4: four quanta per chance, so the surplus is paid at once
    // and a quantum is left.
    assert!(matches!(
        fair.service(16 * KB, 4, 48 * KB, false),
        Service::Serve(Grant { allowance, .. }) if allowance == 16 * KB
    ));
    // A switch being closed is served plainly, to read what it left.
    assert!(matches!(
        fair.service(16 * KB, 1, 48 * KB, true),
        Service::Serve(_)
    ));
    // Above the floor, or without fairness, the quantum is the limit.
    let Service::Serve(above) = fair.service(32 * KB, 1, 0, false) else {
        panic!("served");
    };
    assert_eq!(above.limit, 32 * KB);
    let Service::Serve(g) = plain.service(16 * KB, 2, 1 << 20, false) else {
        panic!("partitions never pass over");
    };
    assert_eq!((g.allowance, g.limit), (32 * KB, 32 * KB));
    assert_eq!(plain.surplus_after(g, 64 * KB, false), None);
}

#[test]
fn a_whole_read_is_at_most_a_quarter_of_a_bdu_of_input() {
    let t0 = Instant::now();
    // 40 MB/s: a BDU holds 40 KB, a quarter of it 10 KB.
    let slow = measured(params(Batching::Adaptive, true), 40_000_000, t0);
    let Service::Serve(grant) = slow.service(16 * KB, 1, 0, false) else {
        panic!("served");
    };
    assert_eq!(grant.limit, 16 * KB, "the quantum alone");
}

#[test]
fn replies_wait_for_a_write_batch_only_while_input_waits() {
    let policy = Policy::new(params(Batching::Adaptive, true));
    assert!(!policy.write_now(0, false));
    assert!(policy.write_now(100, false));
    assert!(!policy.write_now(100, true));
    assert!(policy.write_now(WRITE_BATCH, true));
    assert!(policy.may_refill(MAX_HELD_BUFFER));
    assert!(!policy.may_refill(MAX_HELD_BUFFER + 1));
    assert_eq!(policy.read_size(16 * KB, true, 0), 64 * KB);
    assert_eq!(policy.read_size(16 * KB, false, 0), 16 * KB);
    // A busy switch is read ahead to a whole read held, but a read stays
    // at least half of one.
    assert_eq!(policy.read_size(16 * KB, true, 10 * KB), 54 * KB);
    assert_eq!(policy.read_size(64 * KB, true, 40 * KB), 32 * KB);
    assert_eq!(policy.read_size(16 * KB, false, 10 * KB), 16 * KB);
}

#[test]
fn batches_adapt_ibt_on_synthetic_time() {
    let mut policy = Policy::new(params(Batching::Adaptive, true));
    let mut now = Instant::now();
    // Full batches, each faster per request than the last: IBT climbs by
    // its step (Fig. 4).
    for i in 0..5u64 {
        let n = policy.threshold() as usize;
        assert!(policy.batch_full(n, 1));
        assert!(!policy.batch_full(n - 1, 1));
        policy.begin(now);
        now += Duration::from_micros(10 - i);
        let took = policy.batch_done(now, n, true, MS);
        assert_eq!(took, Duration::from_micros(10 - i));
    }
    assert_eq!(policy.threshold(), 60);
    // A short batch with nothing pending is released and steps IBT down.
    policy.begin(now);
    policy.batch_done(now + MS, 3, false, MS);
    assert_eq!(policy.threshold(), 50);
    // A short batch while input waits leaves IBT alone.
    policy.begin(now);
    policy.batch_done(now + MS, 3, true, MS);
    assert_eq!(policy.threshold(), 50);
}

#[test]
fn static_batching_processes_each_read() {
    let mut policy = Policy::new(params(Batching::Static, false));
    assert!(policy.batch_full(1, 1));
    assert!(!policy.batch_full(0, 0));
    let now = Instant::now();
    policy.begin(now);
    policy.batch_done(now + MS, 1000, false, MS);
    assert_eq!(policy.threshold(), crate::ibt::IBT_MIN, "IBT is not used");
}

#[test]
fn the_input_rate_is_smoothed_as_ibt_s_score() {
    let mut policy = Policy::new(params(Batching::Adaptive, true));
    let now = Instant::now();
    for (bytes, expect) in [(1000, 1e6), (2000, 0.8 * 1e6 + 0.2 * 2e6)] {
        policy.begin(now);
        policy.took(bytes);
        policy.batch_done(now + MS, 0, true, MS);
        assert!((policy.input_rate() - expect).abs() < 1.0);
    }
}
