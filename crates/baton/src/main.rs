//! The `baton` command: a thin shell over the runtime, the applications,
//! the benchmark (`baton bench`) and the software switch (`baton switch`).
//! Everything it does is a library call; this file only parses flags and
//! waits for a signal.

use baton_runtime::{Batching, Config, Runtime, SchedulerKind, parse_duration, parse_weight};
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "An OpenFlow 1.0/1.3 controller that is fast, fair, and bounded in latency"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controller.
    Run(RunArgs),
    /// Benchmark a controller with emulated switches (cbench-compatible),
    /// run the reference responder, or compare controllers side by side.
    Bench(Box<baton_bench::cli::BenchArgs>),
    /// Run an OpenFlow software switch on network interfaces (AF_PACKET),
    /// in the foreground.
    Switch(SwitchArgs),
}

#[derive(Args)]
struct SwitchArgs {
    /// Datapath id: 00:00:00:00:00:00:00:01, decimal, or hex with 0x.
    #[arg(long, value_parser = parse_dpid)]
    dpid: u64,
    /// OpenFlow version: 10 or 13.
    #[arg(long = "of", value_parser = parse_version)]
    version: baton_openflow::Version,
    /// Controller to connect to, tcp:ADDR:PORT (repeatable).
    #[arg(long = "controller", value_name = "tcp:ADDR:PORT")]
    controllers: Vec<baton_switch::io::Target>,
    /// Listen for controllers and tools, ptcp:PORT[:ADDR] (repeatable).
    #[arg(long = "listen", value_name = "ptcp:PORT[:ADDR]")]
    listen: Vec<baton_switch::io::Target>,
    /// Interfaces, in port order from 1.
    #[arg(long = "port", value_name = "IFNAME", num_args = 1.., required = true)]
    ports: Vec<String>,
}

fn parse_dpid(s: &str) -> Result<u64, String> {
    s.parse::<baton_openflow::DatapathId>().map(|d| d.0)
}

/// Where to serve the API, if anywhere.
#[derive(Clone, Copy)]
struct ApiAddr(Option<SocketAddr>);

fn parse_api_addr(s: &str) -> Result<ApiAddr, String> {
    if s == "off" {
        return Ok(ApiAddr(None));
    }
    s.parse()
        .map(|a| ApiAddr(Some(a)))
        .map_err(|e| format!("bad API address {s:?}: {e} (ADDR:PORT or off)"))
}

fn parse_version(s: &str) -> Result<baton_openflow::Version, String> {
    match s {
        "10" | "1.0" => Ok(baton_openflow::Version::V10),
        "13" | "1.3" => Ok(baton_openflow::Version::V13),
        _ => Err(format!("unsupported OpenFlow version {s:?} (10 or 13)")),
    }
}

#[derive(Args)]
struct RunArgs {
    /// Address to accept switches on (repeatable).
    #[arg(
        long = "listen",
        value_name = "ADDR:PORT",
        default_value = "0.0.0.0:6653"
    )]
    listen: Vec<SocketAddr>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Pin worker i to core i.
    #[arg(long)]
    pin: bool,
    /// Workload distribution: fair, shared-queue, static-partition,
    /// dynamic-partition, round-robin.
    #[arg(long, default_value = "fair", value_parser = |s: &str| s.parse::<SchedulerKind>())]
    scheduler: SchedulerKind,
    /// Batching-delay upper bound for adaptive batching (e.g. 1ms, 500us).
    #[arg(long, default_value = "1ms", value_parser = parse_duration)]
    bdu: Duration,
    /// Input batching: adaptive (IBT) or static (one read per batch);
    /// default depends on the scheduler.
    #[arg(long, value_parser = |s: &str| s.parse::<Batching>())]
    batching: Option<Batching>,
    /// Fix the bytes served from a switch per service chance (adaptive
    /// batching); by default it adapts between 1 KB and 64 KB.
    #[arg(long)]
    read_size: Option<usize>,
    /// Applications, in pipeline order.
    #[arg(long, value_delimiter = ',', default_value = "learning-switch")]
    apps: Vec<String>,
    /// Disconnect a switch whose unsent output exceeds this many bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_output: usize,
    /// Send ECHO_REQUEST after this long without input.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    echo_interval: Duration,
    /// Drop a switch silent for this long.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    echo_timeout: Duration,
    /// Give a datapath WEIGHT service chances per round (repeatable),
    /// e.g. --weight 00:00:00:00:00:00:00:0a=4 (or 0xa=4, or 10=4).
    #[arg(long = "weight", value_name = "DPID=WEIGHT", value_parser = parse_weight)]
    weights: Vec<(baton_openflow::DatapathId, u32)>,
    /// Serve the REST API on ADDR:PORT, or `off`.
    #[arg(long, value_name = "ADDR:PORT|off", default_value = "127.0.0.1:8080", value_parser = parse_api_addr)]
    api: ApiAddr,
    /// Log a statistics line this often (0: never).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    stats_interval: Duration,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => run(args),
        Command::Bench(args) => baton_bench::cli::main(*args),
        Command::Switch(args) => switch(args),
    };
    std::process::exit(code);
}

fn stop_flag() -> Option<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            eprintln!("baton: cannot install signal handler: {e}");
            return None;
        }
    }
    Some(stop)
}

fn switch(args: SwitchArgs) -> i32 {
    use baton_switch::io::{Options, Runner, afpacket::AfPacket};
    let backend = match AfPacket::open(&args.ports) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("baton switch: {e}");
            return 1;
        }
    };
    let now = std::time::Instant::now();
    let mut sw = baton_switch::Switch::new(baton_switch::Config::new(args.dpid, args.version), now);
    match backend.port_specs() {
        Ok(specs) => specs.into_iter().for_each(|s| {
            let name = s.name.clone();
            let no = sw.add_port(s, now);
            tracing::info!(port = no.0, %name, "port added");
        }),
        Err(e) => {
            eprintln!("baton switch: {e}");
            return 1;
        }
    }
    let targets = args.controllers.into_iter().chain(args.listen).collect();
    let opts = Options {
        targets,
        ..Options::default()
    };
    let Some(stop) = stop_flag() else { return 1 };
    let mut runner = match Runner::new(sw, backend, opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("baton switch: {e}");
            return 1;
        }
    };
    tracing::info!(dpid = %baton_openflow::DatapathId(args.dpid), version = %args.version, "baton switch running");
    match runner.run(&stop) {
        Ok(()) => {
            tracing::info!("stopping");
            0
        }
        Err(e) => {
            eprintln!("baton switch: {e}");
            1
        }
    }
}

fn run(args: RunArgs) -> i32 {
    let mut apps = Vec::new();
    for name in &args.apps {
        match baton_apps::by_name(name) {
            Ok(app) => apps.push(app),
            Err(e) => {
                eprintln!("baton: {e}");
                return 2;
            }
        }
    }
    let defaults = Config::default();
    let config = Config {
        listen: args.listen,
        workers: args.workers.unwrap_or(defaults.workers).max(1),
        pin: args.pin,
        scheduler: args.scheduler,
        batching: args.batching,
        bdu: args.bdu,
        max_output: args.max_output,
        echo_interval: args.echo_interval,
        echo_timeout: args.echo_timeout,
        weights: args.weights,
        min_read: args.read_size.unwrap_or(defaults.min_read).max(64),
        max_read: args.read_size.unwrap_or(defaults.max_read).max(64),
        ..defaults
    };
    let Some(stop) = stop_flag() else { return 1 };
    let workers = config.workers;
    let scheduler = config.scheduler;
    let batching = config.batching();
    let runtime = match Runtime::start(config, apps) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("baton: cannot start: {e}");
            return 1;
        }
    };
    let api = match args.api.0 {
        None => None,
        Some(addr) => {
            let opts = baton_operator::ApiOptions { addr, token: None };
            match baton_operator::ApiServer::start(runtime.control(), opts) {
                Ok(server) => Some(server),
                Err(e) => {
                    eprintln!(
                        "baton: cannot serve the API on {addr}: {e} (choose another with --api ADDR:PORT, or --api off)"
                    );
                    runtime.stop();
                    return 1;
                }
            }
        }
    };
    let addrs: Vec<String> = runtime
        .local_addrs()
        .iter()
        .map(|a| a.to_string())
        .collect();
    tracing::info!(
        listen = %addrs.join(","),
        workers,
        scheduler = %scheduler,
        batching = ?batching,
        apps = %args.apps.join(","),
        "baton running"
    );
    let mut last = std::time::Instant::now();
    let mut last_msgs = 0u64;
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
        if !args.stats_interval.is_zero() && last.elapsed() >= args.stats_interval {
            let s = runtime.stats();
            let msgs: u64 = s.workers.iter().map(|w| w.messages).sum();
            let secs = last.elapsed().as_secs_f64();
            let ibts: Vec<String> = s.workers.iter().map(|w| w.ibt.to_string()).collect();
            tracing::info!(
                switches = s.switches.len(),
                msgs_per_sec = ((msgs - last_msgs) as f64 / secs) as u64,
                ibt = %ibts.join(","),
                "stats"
            );
            last = std::time::Instant::now();
            last_msgs = msgs;
        }
    }
    tracing::info!("stopping");
    if let Some(api) = api {
        api.stop();
    }
    runtime.stop();
    0
}
