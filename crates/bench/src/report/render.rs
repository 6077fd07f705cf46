//! The renderings of a [`Report`]: the one-line summary a run prints
//! last, the table for the terminal, and JSON written to a file (for a
//! run's report and for a comparison alike).

use super::Report;
use crate::Error;
use std::fmt::Write as _;

impl Report {
    /// The one-line summary a run prints last.
    pub fn summary_line(&self) -> String {
        let mut s = format!(
            "summary: {:.0} responses/s ({:.0} requests/s answered), jain {:.4}",
            self.responses_per_sec, self.requests_per_sec, self.jain
        );
        if let Some(p) = self.probe_delay_ms {
            let _ = write!(s, ", probe delay {p:.3} ms");
        }
        if let Some(l) = &self.latency_ms {
            let _ = write!(s, ", latency p50 {:.3} ms", l.p50);
        }
        s
    }

    /// A readable table of the results (without the summary line).
    pub fn table(&self) -> String {
        let mut s = String::new();
        let c = &self.config;
        let _ = writeln!(
            s,
            "{} switches (OpenFlow {}), {} mode, {:.1} s counted after {:.1} s warm-up, controller {}{}",
            c.switches,
            c.of,
            c.mode,
            c.duration_s,
            c.warmup_s,
            c.controller,
            if c.probe { ", with probe" } else { "" }
        );
        let _ = writeln!(
            s,
            "{:>5} {:>10} {:>10} {:>12} {:>11} {:>7} {:>22} {:>17} {:>9} {:>9} {:>9}",
            "phase",
            "offered/s",
            "sent/s",
            "responses/s",
            "requests/s",
            "jain",
            "deviation min/med/max",
            "latency p50/p99",
            "probe ms",
            "cpu s",
            "rss MiB"
        );
        let opt =
            |v: Option<f64>, prec: usize| v.map_or("-".to_string(), |x| format!("{x:.prec$}"));
        for p in &self.phases {
            let dev = format!(
                "{}/{}/{}",
                opt(p.deviation_min.map(|d| d * 100.0), 1),
                opt(p.deviation_median.map(|d| d * 100.0), 1),
                opt(p.deviation_max.map(|d| d * 100.0), 1)
            );
            let lat = p
                .latency_ms
                .map_or("-".to_string(), |l| format!("{:.3}/{:.3}", l.p50, l.p99));
            let _ = writeln!(
                s,
                "{:>5} {:>10} {:>10.0} {:>12.0} {:>11.0} {:>7.4} {:>21}% {:>17} {:>9} {:>9} {:>9}",
                p.phase,
                opt(p.offered_per_sec, 0),
                p.sent_per_sec,
                p.responses_per_sec,
                p.requests_per_sec,
                p.jain,
                dev,
                lat,
                opt(p.probe_delay_ms.map(|d| d.mean), 3),
                opt(p.cpu_seconds, 2),
                opt(p.controller_rss_mib, 1),
            );
        }
        if let Some(l) = &self.latency_ms {
            let _ = writeln!(
                s,
                "latency ms: n {} mean {:.3} p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}",
                l.count, l.mean, l.p50, l.p90, l.p99, l.p999, l.max
            );
        }
        if let Some(p) = &self.probe_ms {
            let _ = writeln!(
                s,
                "probe delay ms: n {} mean {:.3} p50 {:.3} p90 {:.3} p99 {:.3} max {:.3}",
                p.count, p.mean, p.p50, p.p90, p.p99, p.max
            );
        }
        if let Some(cpu) = &self.cpu {
            let _ = writeln!(
                s,
                "controller cpu: {:.2} s ({:.0}% of a core), {} s per 1000 responses, {} s per 1000 requests",
                cpu.seconds,
                cpu.utilisation * 100.0,
                opt(cpu.per_1k_responses, 5),
                opt(cpu.per_1k_requests, 5)
            );
        }
        if let Some(m) = &self.controller_rss {
            let _ = writeln!(
                s,
                "controller rss: {:.1} MiB when counting started, {:.1} MiB at the end ({:+.1} MiB), peak {:.1} MiB",
                m.start_mib,
                m.end_mib,
                m.end_mib - m.start_mib,
                m.peak_mib
            );
        }
        let w = &self.cpu_use;
        if w.generator_busy_pct.is_some() || w.controller_busy_pct.is_some() {
            let _ = writeln!(
                s,
                "ran on a CPU: emulator {}% ({} thread{}), controller {}% of the time (100% is one core busy)",
                opt(w.generator_busy_pct, 0),
                self.config.threads,
                if self.config.threads == 1 { "" } else { "s" },
                opt(w.controller_busy_pct, 0)
            );
        }
        if w.generator_wait_pct.is_some() || w.controller_wait_pct.is_some() {
            let _ = writeln!(
                s,
                "waited for a CPU: emulator {}%, controller {}% of the time; hypervisor steal {}%",
                opt(w.generator_wait_pct, 1),
                opt(w.controller_wait_pct, 1),
                opt(w.steal_pct, 1)
            );
        }
        if self.switches.len() <= 32 {
            let _ = writeln!(
                s,
                "{:>6} {:>10} {:>12} {:>11} {:>11} {:>10}",
                "dpid", "offered/s", "responses/s", "requests/s", "fair share", "deviation"
            );
            for w in &self.switches {
                let _ = writeln!(
                    s,
                    "{:>6} {:>10} {:>12.0} {:>11.0} {:>11.0} {:>9}%",
                    w.dpid,
                    opt(w.offered_per_sec, 0),
                    w.responses_per_sec,
                    w.requests_per_sec,
                    w.fair_share,
                    opt(w.deviation.map(|d| d * 100.0), 2)
                );
            }
        } else {
            let mut r: Vec<f64> = self.switches.iter().map(|w| w.requests_per_sec).collect();
            r.sort_by(f64::total_cmp);
            let q = |x| crate::stats::quantile(&r, x).unwrap_or(0.0);
            let _ = writeln!(
                s,
                "per-switch requests/s: min {:.0} p10 {:.0} median {:.0} p90 {:.0} max {:.0}",
                q(0.0),
                q(0.1),
                q(0.5),
                q(0.9),
                q(1.0)
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        s
    }
}

/// Writes `value` as pretty JSON to `path`, creating its directory.
pub fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<(), Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
    }
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::new(format!("cannot serialise the report: {e}")))?;
    std::fs::write(path, text)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
}
