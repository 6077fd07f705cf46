//! Tests of the parent module.

use super::*;

#[test]
fn medians() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[f64::NAN, 1.0]), Some(1.0));
}

fn target(name: &str, v: Option<f64>, unsupported: Option<&str>) -> TargetResult {
    let mut medians = BTreeMap::new();
    let mut ratios = BTreeMap::new();
    if let Some(v) = v {
        medians.insert("responses/s".to_string(), v);
        ratios.insert("responses/s".to_string(), v / 1000.0);
    }
    TargetResult {
        target: name.into(),
        unsupported: unsupported.map(String::from),
        errors: Vec::new(),
        medians,
        ratios,
        runs: Vec::new(),
        cbench: None,
        rounds: Vec::new(),
    }
}

fn comparison(cases: Vec<CaseResult>) -> Comparison {
    Comparison {
        scenario: "throughput-64".into(),
        about: "x".into(),
        runs: 3,
        bench_cpus: "0".into(),
        controller_cpus: "1".into(),
        workers: 1,
        baton_args: Vec::new(),
        writes: Writes::Cbench,
        cbench: None,
        cases,
    }
}

#[test]
fn markdown_shows_ratios_and_gaps() {
    let case = scenarios::get("throughput-64").unwrap().cases.remove(0);
    let mk = target;
    let c = comparison(vec![CaseResult {
        case,
        capacity: None,
        cbench: Err("not run: no cbench on PATH".into()),
        targets: vec![
            mk("baton:fair", Some(1000.0), None),
            mk("responder", Some(2500.0), None),
            mk("ovs-testcontroller", None, Some("at most 16")),
        ],
    }]);
    let md = markdown(&c);
    assert!(
        md.contains("| responses/s | 1000 | 2500 (2.50x) | n/a |"),
        "{md}"
    );
    assert!(md.contains("not run (at most 16)"));
    assert!(md.contains("- cbench: not run: no cbench on PATH"), "{md}");
    assert!(!md.contains("cbench responses/s"));
}

#[test]
fn markdown_puts_cbench_beside_the_emulator() {
    let case = scenarios::get("throughput-16").unwrap().cases.remove(0);
    let with_cbench = |name: &str, bench: f64, cbench: Option<(f64, f64)>, failed: bool| {
        let mut t = target(name, Some(bench), None);
        let mut cb = CbenchResult::default();
        if let Some((m, r)) = cbench {
            cb.median = Some(m);
            cb.ratio = Some(r);
            cb.jain = Some(0.9998);
        }
        if failed {
            cb.errors
                .push("cbench exited (exit status: 1): no RESULT line".into());
        }
        t.cbench = Some(cb);
        t
    };
    let c = comparison(vec![CaseResult {
        case,
        capacity: None,
        cbench: Ok("cbench -c 127.0.0.1 -p PORT -s 16 -t".into()),
        targets: vec![
            with_cbench("responder", 1000.0, Some((1250.0, 1.0)), false),
            // bench ratio 0.3 (300 / 1000), cbench ratio 0.25.
            with_cbench("baton:fair", 300.0, Some((312.5, 0.25)), false),
            with_cbench("os-ken", 10.0, None, true),
        ],
    }]);
    let md = markdown(&c);
    for row in [
        "| cbench responses/s | 1250 | 312 (0.25x) | - |",
        "| cbench jain | 0.9998 | 0.9998 | - |",
        "| bench / cbench responses/s | 0.80 | 0.96 | - |",
        "| bench ratio / cbench ratio | - | 1.20 | - |",
        "| cbench runs ok | 0/3 | 0/3 | 0/3 |",
    ] {
        assert!(md.contains(row), "{row} not in\n{md}");
    }
    assert!(md.contains("cbench ran as `cbench -c 127.0.0.1 -p PORT -s 16 -t`"));
    assert!(md.contains("- os-ken: 1 cbench run(s) failed, first: cbench exited"));
    // The emulator reached only 0.80 of cbench's rate on the responder:
    // said once, for the responder alone.
    assert!(
        md.contains("- the emulator drove `responder` at 0.80x cbench's rate (below 0.95x)"),
        "{md}"
    );
    assert_eq!(md.matches("the emulator drove").count(), 1, "{md}");
}

#[test]
fn a_slow_emulator_run_says_who_set_the_pace() {
    let slower = |emulator: Option<f64>, responder: Option<f64>| {
        SlowerThanCbench {
            share: 0.82,
            emulator_busy_per_thread: emulator,
            controller_busy: responder,
        }
        .to_string()
    };
    let spare = slower(Some(75.0), Some(99.0));
    assert!(
        spare.starts_with("the emulator drove `responder` at 0.82x cbench's rate (below 0.95x); its threads were busy 75% of the time, the responder 99%"),
        "{spare}"
    );
    assert!(
        spare.contains("was not the limit; the responder, busy all the time"),
        "{spare}"
    );
    for busy in [Some(99.0), None] {
        let text = slower(busy, Some(80.0));
        assert!(text.contains("the emulator may be the limit"), "{text}");
    }
    for responder in [Some(80.0), None] {
        let text = slower(Some(75.0), responder);
        assert!(text.contains("neither alone set the pace"), "{text}");
    }
}

#[test]
fn the_first_target_is_the_reference_for_cbench_ratios_too() {
    let mk = |v: &[f64]| {
        let mut t = target("x", Some(1.0), None);
        t.cbench = Some(CbenchResult {
            runs: v
                .iter()
                .map(|&avg| crate::cbench::CbenchRun {
                    switches: 1,
                    tests: 1,
                    min: avg,
                    max: avg,
                    avg,
                    stdev: 0.0,
                    per_test: vec![avg],
                    jain: Some(1.0),
                    cpu_use: None,
                })
                .collect(),
            ..CbenchResult::default()
        });
        t
    };
    let mut results = vec![mk(&[10.0, 30.0, 20.0]), mk(&[5.0]), mk(&[])];
    cbench_medians(&mut results);
    let cb = |i: usize| results[i].cbench.clone().unwrap();
    assert_eq!(cb(0).median, Some(20.0));
    assert_eq!(cb(0).ratio, Some(1.0));
    assert_eq!(cb(1).ratio, Some(0.25));
    assert_eq!(cb(2).median, None);
    assert_eq!(cb(2).ratio, None);
}

#[test]
fn the_tools_are_compared_round_by_round() {
    let mk = |rounds: &[(Option<f64>, Option<f64>)]| {
        let mut t = target("x", Some(1.0), None);
        t.cbench = Some(CbenchResult::default());
        t.rounds = rounds
            .iter()
            .map(|&(bench, cbench)| Round {
                bench,
                cbench,
                bench_cpu: Some(CpuUse {
                    generator_wait_pct: Some(2.0),
                    controller_wait_pct: None,
                    steal_pct: None,
                    generator_busy_pct: Some(97.0),
                    controller_busy_pct: Some(80.0),
                }),
                cbench_cpu: None,
            })
            .collect();
        t
    };
    // The machine halves its speed in round 2: each round's ratios still
    // agree (0.3 by both tools in round 1, 0.3 against 0.25 in round 2).
    // Round 3 lacks cbench's run against the reference and does not count.
    let mut results = vec![
        mk(&[
            (Some(1000.0), Some(900.0)),
            (Some(500.0), Some(450.0)),
            (Some(1000.0), None),
        ]),
        mk(&[
            (Some(300.0), Some(270.0)),
            (Some(150.0), Some(112.5)),
            (Some(300.0), Some(1.0)),
        ]),
    ];
    paired_agreement(&mut results);
    let a = results[1]
        .cbench
        .as_ref()
        .unwrap()
        .paired_agreement
        .unwrap();
    assert!((a - 1.1).abs() < 1e-9, "{a}");
    assert_eq!(results[0].cbench.as_ref().unwrap().paired_agreement, None);

    let case = scenarios::get("throughput-16").unwrap().cases.remove(0);
    let c = comparison(vec![CaseResult {
        case,
        capacity: None,
        cbench: Ok("cbench -t".into()),
        targets: results,
    }]);
    let md = markdown(&c);
    for row in [
        "| bench ratio / cbench ratio, paired by round | - | 1.10 |",
        "| cpu busy % (emulator / controller) | 97.0 / 80.0 | 97.0 / 80.0 |",
        "| cpu wait % (emulator / controller) | 2.0 / ? | 2.0 / ? |",
        "| cbench cpu busy % (cbench / controller) | - | - |",
        "| cbench cpu wait % (cbench / controller) | - | - |",
    ] {
        assert!(md.contains(row), "{row} not in\n{md}");
    }
}
