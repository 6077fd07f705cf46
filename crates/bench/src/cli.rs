//! The `baton bench` command line: [`BenchArgs`] (clap derive, meant to be
//! embedded as a subcommand of the `baton` binary) and [`main`], which runs
//! the emulator, the responder or a comparison and returns the exit code.
//!
//! A run prints a table and, as its very last line, a one-line summary
//! (total responses/s, Jain's index, probe delay); `--json` writes the
//! whole [`Report`], `--plot DIR` the charts.

use crate::Error;
use crate::emulator::{self, Config, Writes, default_threads, resolve};
use crate::report::Report;
use crate::report::render::write_json;
use crate::spec::{Mode, OfVersion, PhaseSpec, RateSpec, Schedule, parse_phases};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

const AFTER_HELP: &str = "\
RATES SPEC (--rates):
  uniform:AGG          AGG requests/s in total, spread evenly
  pareto:SHAPE:AGG     per-switch rates shaped like Pareto(SHAPE) (1.1 is very
                       skewed), AGG requests/s in total, fixed seed
  list:R1,R2,...       explicit per-switch rates (repeated when shorter)
  AGG is a number (200000, 2e5, 200k, 1.5M) or a multiple of the controller's
  capacity (2c), which needs --capacity (compare measures it).

PHASES SPEC (--phases):
  RATExSECONDS,...     aggregate rates over time, e.g. 4cx10,0.8cx10,0.5cx10
                       (4x capacity for 10 s, then 80 %, then 50 %); the
                       per-switch shape comes from --rates (uniform if absent).
                       Replaces --duration; implies --mode rate.

COUNTING (as cbench): a response is a FLOW_MOD (ADD or MODIFY_STRICT) or a
non-LLDP PACKET_OUT; a request is answered when a response names its
buffer_id (min(responses, requests) if the controller never echoes ids).
Nothing before a switch's first PACKET_IN counts.";

/// `baton bench`: the whole argument set.
#[derive(clap::Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct BenchArgs {
    /// `responder` or `compare`; without one, run the emulator.
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    /// The emulator's options.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The subcommands of `baton bench`.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum BenchCommand {
    /// Run the do-nothing reference controller (the ceiling).
    Responder(ResponderArgs),
    /// Run a scenario against several controllers and compare them.
    Compare(Box<crate::compare::CompareArgs>),
}

/// A parsed `--phases`.
#[derive(Debug, Clone, PartialEq)]
pub struct Phases(pub Vec<PhaseSpec>);

fn phases_parser(s: &str) -> Result<Phases, String> {
    parse_phases(s).map(Phases).map_err(|e| e.0)
}

fn rates_parser(s: &str) -> Result<RateSpec, String> {
    s.parse().map_err(|e: crate::spec::SpecError| e.0)
}

/// Options of an emulator run.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The controller to benchmark.
    #[arg(long, value_name = "ADDR:PORT")]
    pub controller: Option<String>,
    /// throughput: keep send buffers full; latency: one request in flight
    /// per switch; rate: send at --rates / --phases. Default: rate when
    /// --rates or --phases is given, else throughput.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Emulated switches.
    #[arg(long, default_value_t = 16)]
    pub switches: usize,
    /// Distinct source MACs per switch.
    #[arg(long, default_value_t = 100_000)]
    pub macs: usize,
    /// Counted seconds (ignored with --phases).
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Seconds of traffic before counting starts.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Per-switch rates (see below).
    #[arg(long, value_name = "SPEC", value_parser = rates_parser)]
    pub rates: Option<RateSpec>,
    /// Schedule of aggregate rates (see below).
    #[arg(long, value_name = "SPEC", value_parser = phases_parser)]
    pub phases: Option<Phases>,
    /// Split the counted time into intervals of this many seconds, each
    /// reported as a phase (any mode): `--duration 600 --intervals 60`
    /// reads a soak minute by minute; with --phases, each phase is split.
    #[arg(long, value_name = "SECONDS")]
    pub intervals: Option<f64>,
    /// The controller's capacity in requests/s, for rates given as `Nc`.
    #[arg(long)]
    pub capacity: Option<f64>,
    /// Add a 5 requests/s probe switch whose delay is reported apart.
    #[arg(long)]
    pub probe: bool,
    /// OpenFlow version of the switches.
    #[arg(long, value_enum, default_value = "10")]
    pub of: OfVersion,
    /// The controller's pid, to report its CPU time per 1000 responses
    /// and its resident memory (per phase and over the run).
    #[arg(long, value_name = "PID")]
    pub controller_pid: Option<u32>,
    /// Write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write charts (SVG and PNG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Throughput mode: `cbench` writes to a switch only while the kernel
    /// reports its socket writable (at most 2/3 of the send buffer queued),
    /// with Nagle on, as cbench; `fill` writes until the kernel refuses,
    /// keeping the send buffer full (more requests in flight).
    #[arg(long, value_enum, default_value = "cbench")]
    pub writes: Writes,
    /// Emulator threads (default: one per CPU this process may run on, so
    /// one under `taskset -c 0`).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Milliseconds between connection groups (cbench -i).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub connect_delay: u64,
    /// Switches per connection group (cbench -I).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub connect_group: usize,
    /// Seconds to wait for every handshake after the last connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Print only the summary line (no table, no progress bar).
    #[arg(long)]
    pub quiet: bool,
    /// An emulated network instead of unlinked switches (`--topology`).
    #[command(flatten)]
    pub network: crate::topology::TopologyArgs,
}

/// `baton bench responder`.
#[derive(clap::Args, Debug, Clone)]
pub struct ResponderArgs {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:6653")]
    pub listen: SocketAddr,
    /// I/O threads (default: one per CPU this process may run on).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Learn each PACKET_IN's source and look its destination up in a MAC
    /// table (the learning switch's), and send the FLOW_MOD to the port
    /// found: the ceiling a learning switch can reach on this machine.
    #[arg(long)]
    pub learning: bool,
    /// With --learning: answer with the learning switch's own FLOW_MOD
    /// with its default `match = "l2"`, the frame's L2 match built per
    /// request by the codec.
    #[arg(long, requires = "learning", conflicts_with = "exact_match")]
    pub l2_match: bool,
    /// With --learning: answer with the learning switch's FLOW_MOD with
    /// `match = "exact"`, the frame's exact match built per request by the
    /// codec.
    #[arg(long, requires = "learning")]
    pub exact_match: bool,
    /// Bytes the kernel may queue from each switch (`SO_RCVBUF`), as
    /// `baton run --recv-buffer` and with its default, so that a reference
    /// reads with the buffers baton does; 0 leaves it to the kernel's
    /// autotuning.
    #[arg(long, value_name = "BYTES", default_value_t = baton_runtime::Config::default().recv_buffer)]
    pub recv_buffer: usize,
}

impl ResponderArgs {
    /// The mode the flags ask for.
    pub fn mode(&self) -> crate::responder::ResponderMode {
        use crate::responder::ResponderMode as M;
        match (self.learning, self.l2_match, self.exact_match) {
            (false, _, _) => M::Template,
            (true, false, false) => M::Learning,
            (true, true, _) => M::LearningL2,
            (true, false, true) => M::LearningExact,
        }
    }
}

fn secs(s: f64, what: &str) -> Result<Duration, Error> {
    // Negative, non-finite and too large values are all refused here.
    Duration::try_from_secs_f64(s)
        .map_err(|_| Error::new(format!("--{what} must be a number of seconds >= 0")))
}

impl RunArgs {
    /// The mode these options mean.
    pub fn effective_mode(&self) -> Mode {
        self.mode
            .unwrap_or(if self.rates.is_some() || self.phases.is_some() {
                Mode::Rate
            } else {
                Mode::Throughput
            })
    }

    /// The emulator configuration these options mean, for `controller`.
    pub fn to_config(&self, controller: SocketAddr) -> Result<Config, Error> {
        let mode = self.effective_mode();
        if self.phases.is_some() && mode != Mode::Rate {
            return Err(Error::new("--phases needs --mode rate"));
        }
        let mut schedule = Schedule::build(
            mode,
            self.switches,
            secs(self.warmup, "warmup")?,
            secs(self.duration, "duration")?,
            self.rates.as_ref(),
            self.phases.as_ref().map(|p| p.0.as_slice()),
            self.capacity,
        )?;
        if schedule.end_us() == schedule.counted_start_us() {
            return Err(Error::new("nothing to count: --duration is 0"));
        }
        if let Some(every) = self.intervals {
            let every = match secs(every, "intervals") {
                Ok(d) if every > 0.0 => d,
                _ => return Err(Error::new("--intervals must be a number of seconds > 0")),
            };
            schedule
                .split_counted(every)
                .map_err(|e| Error::new(format!("--intervals: {e}")))?;
        }
        Ok(Config {
            controller,
            mode,
            switches: self.switches,
            macs: self.macs.clamp(1, crate::frames::MAX_HOSTS),
            version: self.of.into(),
            schedule,
            probe: self.probe,
            threads: self.threads.unwrap_or_else(default_threads).max(1),
            writes: self.writes,
            connect_delay: Duration::from_millis(self.connect_delay),
            connect_group: self.connect_group.max(1),
            connect_timeout: secs(self.connect_timeout, "connect-timeout")?,
            learn_timeout: Duration::from_secs(1),
            controller_pid: self.controller_pid,
            progress: !self.quiet,
        })
    }
}

/// Runs `baton bench ARGS`; returns the process exit code.
pub fn main(args: BenchArgs) -> i32 {
    let r = match args.command {
        Some(BenchCommand::Responder(a)) => responder_main(&a),
        Some(BenchCommand::Compare(a)) => crate::compare::main(&a),
        None => run_main(&args.run),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("baton bench: {e}");
            1
        }
    }
}

fn run_main(args: &RunArgs) -> Result<(), Error> {
    let addr = args
        .controller
        .as_deref()
        .ok_or_else(|| Error::new("--controller ADDR:PORT is required"))?;
    if args.network.topology.is_some() {
        let common = crate::topology::Common {
            controller: resolve(addr)?,
            of: args.of,
            warmup: args.warmup,
            duration: args.duration,
            controller_pid: args.controller_pid,
            json: args.json.clone(),
            quiet: args.quiet,
        };
        return crate::topology::main(&args.network, &common);
    }
    let config = args.to_config(resolve(addr)?)?;
    let data = emulator::run(&config)?;
    let report = Report::from_run(&data);
    if !args.quiet {
        print!("{}", report.table());
    }
    if let Some(path) = &args.json {
        write_json(path, &report)?;
        if !args.quiet {
            println!("wrote {}", path.display());
        }
    }
    if let Some(dir) = &args.plot {
        match crate::plot::write_all(dir, &[("", &report)]) {
            Ok(files) if !args.quiet => {
                println!("wrote {} charts into {}", files.len(), dir.display())
            }
            Ok(_) => {}
            Err(e) => eprintln!("baton bench: no charts: {e}"),
        }
    }
    println!("{}", report.summary_line());
    Ok(())
}

fn responder_main(args: &ResponderArgs) -> Result<(), Error> {
    let threads = args.threads.unwrap_or_else(default_threads);
    let recv_buffer = baton_runtime::recv_buffer_to_ask(args.recv_buffer);
    let r = crate::responder::Responder::start(args.listen, threads, args.mode(), recv_buffer)
        .map_err(|e| Error::new(format!("cannot listen on {}: {e}", args.listen)))?;
    println!(
        "responder listening on {} with {threads} threads",
        r.local_addr()
    );
    let start = std::time::Instant::now();
    let mut last = (start, 0u64);
    loop {
        std::thread::sleep(Duration::from_secs(1));
        if let Some(d) = args.duration {
            if start.elapsed().as_secs_f64() >= d {
                break;
            }
        }
        let n = r.answered();
        let now = std::time::Instant::now();
        let rate = (n - last.1) as f64 / (now - last.0).as_secs_f64();
        if rate > 0.0 {
            eprintln!("responder: {rate:.0} packet-ins/s answered");
        }
        last = (now, n);
    }
    let n = r.stop();
    println!("responder: answered {n} packet-ins");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_openflow::Version;
    use clap::Parser;

    #[derive(Parser)]
    struct Baton {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(clap::Subcommand)]
    enum Cmd {
        Bench(BenchArgs),
    }

    fn parse(args: &[&str]) -> BenchArgs {
        let mut v = vec!["baton", "bench"];
        v.extend_from_slice(args);
        match Baton::try_parse_from(v).unwrap().cmd {
            Cmd::Bench(b) => b,
        }
    }

    #[test]
    fn parses_as_a_baton_subcommand() {
        let b = parse(&[
            "--controller",
            "127.0.0.1:6653",
            "--mode",
            "latency",
            "--switches",
            "4",
            "--of",
            "13",
            "--probe",
            "--json",
            "x.json",
        ]);
        assert!(b.command.is_none());
        assert_eq!(b.run.effective_mode(), Mode::Latency);
        assert_eq!(b.run.of, OfVersion::V13);
        assert!(b.run.probe);
        let c = b.run.to_config("127.0.0.1:1".parse().unwrap()).unwrap();
        assert_eq!(c.switches, 4);
        assert_eq!(c.version, Version::V13);

        let b = parse(&[
            "--controller",
            "h:1",
            "--phases",
            "1000x1,2cx2",
            "--capacity",
            "500",
        ]);
        assert_eq!(b.run.effective_mode(), Mode::Rate);
        let c = b.run.to_config("127.0.0.1:1".parse().unwrap()).unwrap();
        assert_eq!(c.schedule.segments[2].aggregate, Some(1000.0));

        use crate::responder::ResponderMode as M;
        for (flags, mode) in [
            (&[][..], M::Template),
            (&["--learning"][..], M::Learning),
            (&["--learning", "--l2-match"][..], M::LearningL2),
            (&["--learning", "--exact-match"][..], M::LearningExact),
        ] {
            let b = parse(&[&["responder", "--listen", "127.0.0.1:0"][..], flags].concat());
            let Some(BenchCommand::Responder(r)) = b.command else {
                panic!("{flags:?}: not the responder");
            };
            assert_eq!(r.mode(), mode);
        }
        let exact_alone = ["baton", "bench", "responder", "--exact-match"];
        assert!(Baton::try_parse_from(exact_alone).is_err());
        let both = [
            "baton",
            "bench",
            "responder",
            "--learning",
            "--l2-match",
            "--exact-match",
        ];
        assert!(Baton::try_parse_from(both).is_err());
        let b = parse(&["compare", "throughput-16", "--runs", "2"]);
        assert!(matches!(b.command, Some(BenchCommand::Compare(_))));
    }

    #[test]
    fn bad_options_are_errors() {
        let v = vec!["baton", "bench", "--rates", "zipf:1"];
        assert!(Baton::try_parse_from(v).is_err());
        let b = parse(&[
            "--controller",
            "h:1",
            "--mode",
            "throughput",
            "--phases",
            "10x1",
        ]);
        assert!(b.run.to_config("127.0.0.1:1".parse().unwrap()).is_err());
        let b = parse(&["--mode", "rate"]);
        assert!(b.run.to_config("127.0.0.1:1".parse().unwrap()).is_err());
        for bad in ["0", "-1", "NaN", "inf", "1e30", "0.0000001", "0.001"] {
            let flag = format!("--intervals={bad}");
            let b = parse(&["--controller", "h:1", "--duration", "600", &flag]);
            let e = b.run.to_config("127.0.0.1:1".parse().unwrap());
            assert!(e.is_err(), "--intervals {bad} was accepted");
        }
        let b = parse(&["--controller", "h:1", "--duration", "1e30"]);
        assert!(b.run.to_config("127.0.0.1:1".parse().unwrap()).is_err());
    }

    #[test]
    fn intervals_become_phases_in_any_mode() {
        let addr = "127.0.0.1:1".parse().unwrap();
        let b = parse(&[
            "--controller",
            "h:1",
            "--mode",
            "latency",
            "--duration",
            "600",
            "--warmup",
            "1",
            "--intervals",
            "60",
        ]);
        assert_eq!(b.run.intervals, Some(60.0));
        let c = b.run.to_config(addr).unwrap();
        assert_eq!(c.mode, Mode::Latency);
        assert_eq!(c.schedule.phases(), 10);
        assert_eq!(c.schedule.counted_start_us(), 1_000_000);
        assert_eq!(c.schedule.end_us(), 601_000_000);

        let b = parse(&[
            "--controller",
            "h:1",
            "--phases",
            "1000x60,2000x5",
            "--intervals",
            "10",
        ]);
        let c = b.run.to_config(addr).unwrap();
        assert_eq!(c.schedule.phases(), 7);
        assert_eq!(c.schedule.segments[6].aggregate, Some(1000.0));
        assert_eq!(c.schedule.segments[7].aggregate, Some(2000.0));

        // Without --intervals nothing is split.
        let b = parse(&["--controller", "h:1", "--duration", "600"]);
        assert_eq!(b.run.to_config(addr).unwrap().schedule.phases(), 1);
    }
}
