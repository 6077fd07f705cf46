//! The named scenarios of `baton bench compare`: each is one or more cases
//! (emulator settings) with durations chosen so a comparison of five
//! controllers with three interleaved runs stays within minutes.
//!
//! Rates relative to capacity (`2c`) are resolved by a short throughput
//! run against the first target, so every controller sees the same
//! absolute offered load (as in Maestro Table 1).

use crate::emulator::Writes;
use crate::spec::{Mode, PhaseSpec, Rate, RateSpec, parse_phases};
use baton_openflow::Version;

/// One emulator configuration of a scenario.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Case {
    /// Name, unique within the scenario.
    pub name: String,
    /// Mode.
    pub mode: Mode,
    /// Switches.
    pub switches: usize,
    /// MACs per switch.
    pub macs: usize,
    /// Counted seconds (without phases).
    pub duration: f64,
    /// Warm-up seconds.
    pub warmup: f64,
    /// Rates (rate mode).
    pub rates: Option<RateSpec>,
    /// Phases (rate mode).
    pub phases: Option<Vec<PhaseSpec>>,
    /// With the probe switch.
    pub probe: bool,
    /// OpenFlow version.
    #[serde(skip)]
    pub version: Version,
    /// How the emulator's switches write in throughput mode.
    pub writes: Writes,
}

impl Case {
    fn new(name: &str, mode: Mode, switches: usize) -> Case {
        Case {
            name: name.to_string(),
            mode,
            switches,
            macs: 100_000,
            duration: 10.0,
            warmup: 2.0,
            rates: None,
            phases: None,
            probe: false,
            version: Version::V10,
            writes: Writes::Cbench,
        }
    }

    /// Whether some rate is relative to the controller's capacity.
    pub fn needs_capacity(&self) -> bool {
        self.rates
            .as_ref()
            .and_then(|r| r.aggregate())
            .is_some_and(Rate::is_relative)
            || self
                .phases
                .iter()
                .flatten()
                .any(|p| p.aggregate.is_relative())
    }

    /// Counted seconds plus warm-up.
    pub fn total_seconds(&self) -> f64 {
        let counted = match &self.phases {
            Some(p) => p.iter().map(|p| p.duration.as_secs_f64()).sum(),
            None => self.duration,
        };
        self.warmup + counted
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} switches, {} mode, OpenFlow {}",
            self.switches,
            self.mode,
            match self.version {
                Version::V10 => "1.0",
                Version::V13 => "1.3",
            }
        );
        if let Some(r) = &self.rates {
            s += &format!(", rates {r:?}");
        }
        if let Some(p) = &self.phases {
            s += &format!(", {} phases", p.len());
        }
        if self.probe {
            s += ", probe";
        }
        s
    }
}

/// A named set of cases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Scenario {
    /// Name (`throughput-16`, ...).
    pub name: &'static str,
    /// What it shows.
    pub about: &'static str,
    /// Its cases.
    pub cases: Vec<Case>,
}

fn pareto(shape: f64, agg: Rate) -> RateSpec {
    RateSpec::Pareto {
        shape,
        aggregate: agg,
    }
}

/// Every scenario.
pub fn all() -> Vec<Scenario> {
    let names = [
        "throughput-16",
        "throughput-64",
        "latency-1",
        "latency-16",
        "fairness-uniform",
        "fairness-skewed",
        "ibt-phases",
        "few-switches",
        "switch-scaling",
    ];
    names.iter().filter_map(|n| get(n)).collect()
}

/// The scenario called `name`.
pub fn get(name: &str) -> Option<Scenario> {
    let s = |name, about, cases| Some(Scenario { name, about, cases });
    match name {
        "throughput-16" => s(
            "throughput-16",
            "cbench -t with 16 switches: peak responses/s",
            vec![Case::new("throughput-16", Mode::Throughput, 16)],
        ),
        "throughput-64" => s(
            "throughput-64",
            "cbench -t with 64 switches (Beacon's setting, Beacon §6)",
            vec![Case::new("throughput-64", Mode::Throughput, 64)],
        ),
        "latency-1" => s(
            "latency-1",
            "cbench latency mode, one switch: round-trip time of one request",
            vec![Case::new("latency-1", Mode::Latency, 1)],
        ),
        "latency-16" => s(
            "latency-16",
            "latency mode with 16 switches, one request in flight each",
            vec![Case::new("latency-16", Mode::Latency, 16)],
        ),
        "fairness-uniform" => s(
            "fairness-uniform",
            "32 switches at equal rates, 2x capacity in total, with probe (Maestro §4.2, scenario one)",
            vec![Case {
                rates: Some(RateSpec::Uniform(Rate::Capacity(2.0))),
                probe: true,
                ..Case::new("fairness-uniform", Mode::Rate, 32)
            }],
        ),
        "fairness-skewed" => s(
            "fairness-skewed",
            "32 switches with Pareto(1.1) rates, 2x capacity in total, with probe (Maestro §4.2, scenario two)",
            vec![Case {
                rates: Some(pareto(1.1, Rate::Capacity(2.0))),
                probe: true,
                ..Case::new("fairness-skewed", Mode::Rate, 32)
            }],
        ),
        "ibt-phases" => s(
            "ibt-phases",
            "skewed rates changing every 10 s: 4x, 0.8x, 0.5x, 0.8x, 4x capacity, with probe (Maestro §4.3, Table 1)",
            vec![Case {
                rates: Some(pareto(1.1, Rate::Capacity(1.0))),
                phases: parse_phases("4cx10,0.8cx10,0.5cx10,0.8cx10,4cx10").ok(),
                probe: true,
                ..Case::new("ibt-phases", Mode::Rate, 16)
            }],
        ),
        "few-switches" => s(
            "few-switches",
            "4 switches at full rate: a design that binds switches to workers cannot use more than 4 (Maestro §4.4.1)",
            vec![Case::new("few-switches", Mode::Throughput, 4)],
        ),
        "switch-scaling" => s(
            "switch-scaling",
            "throughput with 1 to 256 switches, and latency mode with 16 to 10,000 switches (McNettle Fig. 13-14)",
            [1, 4, 16, 64, 256]
                .iter()
                .map(|&n| Case {
                    duration: 5.0,
                    warmup: 1.0,
                    ..Case::new(&format!("switches-{n}"), Mode::Throughput, n)
                })
                .chain([16, 64, 256, 1000, 10_000].iter().map(|&n| Case {
                    duration: 5.0,
                    warmup: 2.0,
                    ..Case::new(&format!("latency-switches-{n}"), Mode::Latency, n)
                }))
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_is_well_formed() {
        let all = all();
        assert_eq!(all.len(), 9);
        for s in &all {
            assert!(!s.cases.is_empty(), "{}", s.name);
            for c in &s.cases {
                assert!(c.total_seconds() > 0.0);
                assert_eq!(
                    c.mode == Mode::Rate,
                    c.rates.is_some() || c.phases.is_some()
                );
            }
        }
        let ibt = get("ibt-phases").unwrap();
        assert!(ibt.cases[0].needs_capacity());
        assert_eq!(ibt.cases[0].phases.as_ref().unwrap().len(), 5);
        assert_eq!(ibt.cases[0].total_seconds(), 52.0);
        assert!(!get("throughput-16").unwrap().cases[0].needs_capacity());
        assert!(get("nope").is_none());
    }
}
