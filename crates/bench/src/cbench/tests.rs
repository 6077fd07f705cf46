//! Tests of the parent module. The sample output is cbench's own (oflops
//! master, built by `scripts/bench/build-cbench.sh`), from
//! `cbench -s 3 -M 1000 -l 3 -w 1 -m 200 -t` against the responder.

use super::*;
use crate::compare::scenarios;

const SAMPLE: &str = "\
16:04:38.287 3   switches: flows/sec:  151811  150213  149414   total = 2178.859984 per ms 
16:04:38.612 3   switches: flows/sec:  321997  321997  321997   total = 4797.190191 per ms 
16:04:38.912 3   switches: flows/sec:  270861  270062  270062   total = 4054.458737 per ms 
RESULT: 3 switches 2 tests min/max/avg/stdev = 4054458.74/4797190.19/4425824.46/371365.73 responses/s
";

#[test]
fn parses_the_result_and_every_test() {
    let r = parse(SAMPLE, 1).unwrap();
    assert_eq!(r.switches, 3);
    assert_eq!(r.tests, 2);
    assert_eq!(r.min, 4054458.74);
    assert_eq!(r.max, 4797190.19);
    assert_eq!(r.avg, 4425824.46);
    assert_eq!(r.stdev, 371365.73);
    assert_eq!(r.per_test.len(), 3);
    assert!((r.per_test[0] - 2178859.984).abs() < 1e-3);
    // Counted tests 2 and 3: 592858, 592059, 592059 responses.
    let j = r.jain.unwrap();
    assert!(j > 0.99999 && j <= 1.0, "{j}");
}

#[test]
fn tolerates_noise_and_takes_the_last_result() {
    let noisy = format!(
        "cbench: controller benchmarking tool\n   running in mode 'throughput'\n\
         Ignoring OpenFlow message type 18\n{SAMPLE}\
         16:04:39.000 3   switches: flows/sec:  1  2   total = 0.1 per ms\n\
         RESULT: 3 switches 1 tests min/max/avg/stdev = 1.00/2.00/1.50/0.50 responses/s\n"
    );
    let r = parse(&noisy, 0).unwrap();
    assert_eq!(r.avg, 1.5);
    assert_eq!(r.per_test, vec![100.0]);
    // The counted line lists 2 counts for 3 switches: no index from it.
    assert_eq!(r.jain, None);
}

#[test]
fn a_run_without_result_is_an_error_naming_the_last_line() {
    let e = parse("cbench: controller benchmarking tool\n... exiting\n", 1).unwrap_err();
    assert!(e.contains("... exiting"), "{e}");
    assert_eq!(parse("", 1).unwrap_err(), "cbench printed nothing");
    let garbled = "RESULT: 3 switches 2 tests min/max/avg/stdev = 1/2/x/4 responses/s\n";
    assert!(parse(garbled, 1).is_err());
    let short = "RESULT: 3 switches 2 tests min/max/avg/stdev = 1/2/3 responses/s\n";
    assert!(parse(short, 1).is_err());
}

fn case(name: &str) -> Case {
    scenarios::get(name).unwrap().cases.remove(0)
}

#[test]
fn the_command_line_of_the_issues_method() {
    let c = Case {
        duration: 5.0,
        warmup: 1.0,
        ..case("throughput-16")
    };
    let inv = Invocation::for_case(&c, 1, Duration::ZERO).unwrap();
    let addr: SocketAddr = "127.0.0.1:6653".parse().unwrap();
    assert_eq!(
        inv.args(addr).join(" "),
        "-c 127.0.0.1 -p 6653 -s 16 -M 100000 -l 6 -w 1 -m 1000 -t"
    );
    // Latency mode, connection groups, rounded whole tests.
    let c = Case {
        duration: 2.4,
        warmup: 0.0,
        macs: 10,
        ..case("latency-1")
    };
    let inv = Invocation::for_case(&c, 4, Duration::from_millis(50)).unwrap();
    assert_eq!(
        inv.args(addr).join(" "),
        "-c 127.0.0.1 -p 6653 -s 1 -M 10 -l 3 -w 1 -m 1000 -i 50 -I 4"
    );
    assert!(inv.time_limit() >= Duration::from_millis(3 * 1100));
}

#[test]
fn cases_cbench_cannot_express_say_why() {
    let g = |c: &Case| Invocation::for_case(c, 1, Duration::ZERO).unwrap_err();
    assert!(g(&case("fairness-skewed")).contains("rate"));
    let v13 = Case {
        version: Version::V13,
        ..case("throughput-16")
    };
    assert!(g(&v13).contains("1.0"));
    let probe = Case {
        probe: true,
        ..case("latency-16")
    };
    assert!(g(&probe).contains("probe"));
}

#[test]
fn a_missing_binary_is_not_found() {
    assert_eq!(find(Some(Path::new("/nonexistent/cbench"))), None);
}
