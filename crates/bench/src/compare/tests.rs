//! Tests of the parent module.

use super::*;

#[test]
fn medians() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[f64::NAN, 1.0]), Some(1.0));
}

#[test]
fn markdown_shows_ratios_and_gaps() {
    let case = scenarios::get("throughput-64").unwrap().cases.remove(0);
    let mk = |name: &str, v: Option<f64>, unsupported: Option<&str>| {
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
        }
    };
    let c = Comparison {
        scenario: "throughput-64".into(),
        about: "x".into(),
        runs: 3,
        bench_cpus: "0".into(),
        controller_cpus: "1".into(),
        workers: 1,
        baton_args: Vec::new(),
        cases: vec![CaseResult {
            case,
            capacity: None,
            targets: vec![
                mk("baton:fair", Some(1000.0), None),
                mk("responder", Some(2500.0), None),
                mk("ovs-testcontroller", None, Some("at most 16")),
            ],
        }],
    };
    let md = markdown(&c);
    assert!(
        md.contains("| responses/s | 1000 | 2500 (2.50x) | n/a |"),
        "{md}"
    );
    assert!(md.contains("not run (at most 16)"));
}
