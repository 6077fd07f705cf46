//! The `baton` command: a thin shell over the runtime, the applications,
//! the operator interface (`baton run`'s API, `baton config`, `baton
//! show`, `baton app`), the benchmark (`baton bench`) and the software
//! switch (`baton switch`). Everything it does is a library call; this
//! file only parses flags and waits for a signal.

mod allocator;
mod contract;

use baton_operator::client::{self, AppAction, Client, Output, Show};
use baton_operator::config::{
    self, Addr, ApiLayer, ApiListen, ClusterLayer, Layer, LogFilter, Parsed, Settings, Source,
    Sourced, TlsLayer,
};
use baton_runtime::{Batching, Runtime, SchedulerKind, parse_weight};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
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
    Run(Box<RunArgs>),
    /// Benchmark a controller with emulated switches (cbench-compatible),
    /// run the reference responder, or compare controllers side by side.
    Bench(Box<baton_bench::cli::BenchArgs>),
    /// Run an OpenFlow software switch on network interfaces (AF_PACKET),
    /// in the foreground.
    Switch(SwitchArgs),
    /// Check a configuration file without starting anything.
    Config {
        #[command(subcommand)]
        what: ConfigCommand,
    },
    /// Show what a running controller knows, through its REST API.
    Show(ShowArgs),
    /// Stop, start or configure an application of a running controller.
    App(AppArgs),
    /// CONTRACT (Maestro thesis ch. 5) in simulation: a controller
    /// coordinated with a link-state IGP, against the IGP alone.
    Contract(contract::ContractArgs),
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Check FILE as `baton run --config FILE` would read it.
    Check {
        /// The configuration file (TOML).
        file: PathBuf,
    },
}

/// Where the API is and how to talk to it.
#[derive(Args)]
struct ApiClientArgs {
    /// The controller's API, ADDR:PORT or http://...
    #[arg(long, global = true, default_value = "127.0.0.1:8080")]
    api: String,
    /// The API token, for changes (or BATON_TOKEN).
    #[arg(long, global = true, env = "BATON_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Args)]
struct ShowArgs {
    #[command(subcommand)]
    what: ShowWhat,
    #[command(flatten)]
    api: ApiClientArgs,
}

#[derive(Subcommand)]
enum ShowWhat {
    /// Connected switches, their ports, counters, rates and weights.
    Switches,
    /// Links discovered between switches (needs the topology app).
    Links,
    /// Hosts seen (needs the devices app).
    Hosts,
    /// A switch's flows, read from it now.
    Flows {
        /// Datapath id: 00:00:00:00:00:00:00:01, decimal or 0x hex.
        dpid: String,
    },
    /// Applications, their state and counters.
    Apps,
    /// Application DAGs: their stages, trigger, views read and written,
    /// commits, conflicts, reruns and aborts.
    Dags,
    /// Bandwidth reservations (needs the bandwidth app) and each link's
    /// reserved share of its capacity.
    Reservations,
    /// The scheduler, each worker's batching and IBT, and fairness.
    Scheduler,
    /// The cluster: its members, the etcd endpoints' health and which
    /// member masters each switch (an error when not in a cluster).
    Cluster,
}

#[derive(Args)]
struct AppArgs {
    #[command(subcommand)]
    what: AppWhat,
    #[command(flatten)]
    api: ApiClientArgs,
}

#[derive(Subcommand)]
enum AppWhat {
    /// Stop it; its flows are deleted from every switch unless
    /// --keep-flows.
    Stop {
        /// The application.
        name: String,
        /// Leave its flows on the switches.
        #[arg(long)]
        keep_flows: bool,
    },
    /// Start it again.
    Start {
        /// The application.
        name: String,
    },
    /// Change settings: KEY=VALUE... (values are JSON where they parse).
    Set {
        /// The application.
        name: String,
        /// KEY=VALUE pairs.
        #[arg(required = true)]
        settings: Vec<String>,
    },
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
    /// Listen for controllers and tools, ptcp:PORT or ptcp:PORT:ADDR (repeatable);
    /// as in Open vSwitch, these get asynchronous messages only after a
    /// SET_CONFIG with a nonzero miss_send_len or a SET_ASYNC.
    #[arg(long = "listen", value_name = "ptcp:PORT[:ADDR]")]
    listen: Vec<baton_switch::io::Target>,
    /// Interfaces, in port order from 1.
    #[arg(long = "port", value_name = "IFNAME", num_args = 1.., required = true)]
    ports: Vec<String>,
}

fn parse_dpid(s: &str) -> Result<u64, String> {
    s.parse::<baton_openflow::DatapathId>().map(|d| d.0)
}

fn parse_version(s: &str) -> Result<baton_openflow::Version, String> {
    match s {
        "10" | "1.0" => Ok(baton_openflow::Version::V10),
        "13" | "1.3" => Ok(baton_openflow::Version::V13),
        _ => Err(format!("unsupported OpenFlow version {s:?} (10 or 13)")),
    }
}

/// `baton run`'s flags: each overrides the configuration file's key of
/// the same name; left out, the file's value (or the default) stands.
#[derive(Args)]
struct RunArgs {
    /// A configuration file (TOML; see docs/baton.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to accept switches on (repeatable) [default: 0.0.0.0:6653,
    /// or none when --listen-tls is given alone].
    #[arg(long = "listen", value_name = "ADDR:PORT", value_parser = |s: &str| s.parse::<Addr>())]
    listen: Vec<Addr>,
    /// Address to accept switches on over TLS (repeatable; needs
    /// --tls-cert and --tls-key).
    #[arg(long = "listen-tls", value_name = "ADDR:PORT", value_parser = |s: &str| s.parse::<Addr>())]
    listen_tls: Vec<Addr>,
    /// The controller's certificate chain for TLS (PEM).
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Verify switches' certificates against this CA (PEM).
    #[arg(long, value_name = "FILE")]
    tls_client_ca: Option<PathBuf>,
    /// Worker threads [default: one per core].
    #[arg(long)]
    workers: Option<usize>,
    /// Pin worker i to core i.
    #[arg(long)]
    pin: bool,
    /// Workload distribution: fair, shared-queue, static-partition,
    /// dynamic-partition, round-robin [default: fair].
    #[arg(long, value_parser = |s: &str| s.parse::<SchedulerKind>())]
    scheduler: Option<SchedulerKind>,
    /// Batching-delay upper bound for adaptive batching, microseconds,
    /// 10 to 1000000 [default: 1000].
    #[arg(long, value_name = "MICROSECONDS")]
    bdu_us: Option<u64>,
    /// Input batching: adaptive (IBT) or static (one read per batch);
    /// default depends on the scheduler.
    #[arg(long, value_parser = |s: &str| s.parse::<Batching>())]
    batching: Option<Batching>,
    /// Fix the bytes served from a switch per service chance (adaptive
    /// batching); by default it adapts between 16 KB (fair; 1 KB for the
    /// other adaptive schedulers) and 64 KB.
    #[arg(long)]
    read_size: Option<usize>,
    /// Applications, in pipeline order [default: topology,devices,routing,
    /// safe on loops; --help lists them].
    #[arg(long, value_delimiter = ',', value_name = "NAME,...", long_help = apps_help())]
    apps: Option<Vec<String>>,
    /// Disconnect a switch whose unsent output exceeds this many bytes
    /// (one whose output reaches a quarter of it is not read until it
    /// reads it all) [default: 4194304].
    #[arg(long)]
    max_output: Option<usize>,
    /// Bytes the kernel may queue from each switch before TCP holds it
    /// back (SO_RCVBUF; 0 leaves it to the kernel's autotuning; not set
    /// where net.core.rmem_max is lower) [default: 4194304].
    #[arg(long)]
    recv_buffer: Option<usize>,
    /// Send ECHO_REQUEST after this long without input, milliseconds
    /// [default: 5000].
    #[arg(long, value_name = "MILLISECONDS")]
    echo_interval_ms: Option<u64>,
    /// Drop a switch silent for this long, milliseconds [default: 15000].
    #[arg(long, value_name = "MILLISECONDS")]
    echo_timeout_ms: Option<u64>,
    /// Give a datapath WEIGHT service chances per round (repeatable),
    /// e.g. --weight 00:00:00:00:00:00:00:0a=4 (or 0xa=4, or 10=4).
    #[arg(long = "weight", value_name = "DPID=WEIGHT", value_parser = parse_weight)]
    weights: Vec<(baton_openflow::DatapathId, u32)>,
    /// Serve the REST API on ADDR:PORT, or `off` [default: 127.0.0.1:8080].
    /// Any address that is not loopback needs a token.
    #[arg(long, value_name = "ADDR:PORT|off", value_parser = |s: &str| s.parse::<ApiListen>())]
    api: Option<ApiListen>,
    /// A file holding the API token that changes must present.
    #[arg(long, value_name = "FILE")]
    api_token_file: Option<PathBuf>,
    /// The API token itself (visible to other users in the process list;
    /// prefer --api-token-file).
    #[arg(long, value_name = "TOKEN")]
    api_token: Option<String>,
    /// Log a statistics line this often, milliseconds [default: 0, never].
    #[arg(long, value_name = "MILLISECONDS")]
    stats_interval_ms: Option<u64>,
    /// What to log, in the RUST_LOG syntax (`debug`,
    /// `info,baton_runtime=debug`) [default: info]; RUST_LOG, when set,
    /// wins.
    #[arg(long, value_name = "FILTER", value_parser = |s: &str| s.parse::<LogFilter>())]
    log: Option<LogFilter>,
    /// Join a cluster of baton instances acting as one controller,
    /// coordinated through these etcd client URLs (needs --node). Switches
    /// connect to every instance; each switch has one master (OpenFlow
    /// 1.3 roles).
    #[arg(long, value_delimiter = ',', value_name = "URL,...")]
    cluster: Vec<String>,
    /// This instance's name in the cluster.
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// The cluster lease's time to live, in milliseconds (whole seconds,
    /// at least 2000; etcd's shortest lease is one and a half election
    /// timeouts, rounded up to a second) [default: 3000]: how long a dead
    /// instance's switches wait for a new master, at most.
    #[arg(long, value_name = "MS")]
    cluster_ttl_ms: Option<u64>,
}

/// `--apps`'s long help: every application, a line each.
fn apps_help() -> String {
    format!(
        "Applications, in pipeline order [default: {}].\n\
         The default runs any network, loops included; the learning switches\n\
         and the hub flood out of every port, so a loop makes a storm\n\
         (they notice it, say so in the log and pace their floods).\n\n{}",
        baton_apps::DEFAULT_APPS.join(","),
        baton_apps::describe_apps()
    )
}

impl RunArgs {
    /// The flags as a configuration layer.
    fn layer(&self) -> Layer {
        let addrs = |v: &[Addr]| (!v.is_empty()).then(|| v.iter().map(|a| Parsed(*a)).collect());
        Layer {
            listen: addrs(&self.listen),
            listen_tls: addrs(&self.listen_tls),
            workers: self.workers,
            pin: self.pin.then_some(true),
            scheduler: self.scheduler.map(Parsed),
            batching: self.batching.map(Parsed),
            bdu_us: self.bdu_us,
            read_size: self.read_size,
            max_output: self.max_output,
            recv_buffer: self.recv_buffer,
            echo_interval_ms: self.echo_interval_ms,
            echo_timeout_ms: self.echo_timeout_ms,
            stats_interval_ms: self.stats_interval_ms,
            log: self.log.clone().map(Parsed),
            weights: self.weights.iter().map(|&(d, w)| (Parsed(d), w)).collect(),
            apps: self.apps.clone(),
            app: Default::default(),
            dag: Default::default(),
            api: ApiLayer {
                listen: self.api.map(Parsed),
                token: self.api_token.clone(),
                token_file: self.api_token_file.clone(),
            },
            tls: TlsLayer {
                cert: self.tls_cert.clone(),
                key: self.tls_key.clone(),
                client_ca: self.tls_client_ca.clone(),
            },
            cluster: ClusterLayer {
                etcd: (!self.cluster.is_empty()).then(|| self.cluster.clone()),
                node: self.node.clone(),
                ttl_ms: self.cluster_ttl_ms,
            },
        }
    }

    /// The file, if any, with the flags over it, checked.
    fn settings(&self) -> Result<Settings, config::ConfigError> {
        match &self.config {
            Some(path) => {
                let file = config::read_file(path)?;
                self.layer()
                    .over(file, Source::File(path.clone()))
                    .resolve()
            }
            None => Sourced::flags(self.layer()).resolve(),
        }
    }
}

/// Logs to stderr what `RUST_LOG` asks for, else `configured`, else
/// `info`. A failed write to stderr (closed, a full pipe's reader gone)
/// loses the line and nothing else: .log_internal_errors(false)` keeps
/// the subscriber from reporting it with `eprintln!`, which would panic
/// the thread that logged.
fn init_logging(configured: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var(EnvFilter::DEFAULT_ENV) {
        Ok(env) => EnvFilter::builder().parse_lossy(env),
        Err(_) => EnvFilter::builder().parse_lossy(configured.unwrap_or("info")),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .log_internal_errors(false)
        .init();
}

fn main() {
    let cli = Cli::parse();
    // `run` logs as its configuration says, once it has read it.
    if !matches!(cli.command, Command::Run(_)) {
        init_logging(None);
    }
    let code = match cli.command {
        Command::Run(args) => run(*args),
        Command::Bench(args) => baton_bench::cli::main(*args),
        Command::Switch(args) => switch(args),
        Command::Config {
            what: ConfigCommand::Check { file },
        } => config_check(&file),
        Command::Show(args) => show(args),
        Command::App(args) => app(args),
        Command::Contract(args) => contract::main(args),
    };
    std::process::exit(code);
}

/// Set by the first SIGINT or SIGTERM; a second one, while stopping,
/// exits at once (status 1) without waiting for anything.
fn stop_flag() -> Option<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The second registered first: the first signal finds the flag
        // unset, then sets it.
        let registered = signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone())
            .and_then(|_| signal_hook::flag::register(sig, stop.clone()));
        if let Err(e) = registered {
            eprintln!("baton: cannot install signal handler: {e}");
            return None;
        }
    }
    Some(stop)
}

/// How long `baton run` waits for its threads once told to stop before it
/// exits without them: a worker busy in a long computation must not keep
/// the process for minutes after SIGTERM (one did for 18, at the end of a
/// 10,000-switch soak; BENCHMARKS.md).
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Exits the process with status 1 if it is still running `STOP_GRACE`
/// from now, saying why.
fn exit_after_grace() {
    std::thread::spawn(|| {
        std::thread::sleep(STOP_GRACE);
        tracing::error!(
            grace_s = STOP_GRACE.as_secs(),
            "not stopped within the grace (a worker is still busy): exiting without waiting for it"
        );
        std::process::exit(1);
    });
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
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("baton: {e}");
            return 2;
        }
    };
    init_logging(settings.log.as_deref());
    allocator::purge_in_background();
    let Settings {
        runtime: mut config,
        apps,
        dags,
        api,
        tls,
        stats_interval,
        log: _,
        cluster,
    } = settings;
    if let Some(tls) = tls {
        // The files were found readable; here their contents are checked.
        match baton_runtime::tls::server_config(&tls.cert, &tls.key, tls.client_ca.as_deref()) {
            Ok(server) => {
                config.tls = Some(baton_runtime::config::Tls {
                    listen: tls.listen,
                    server,
                })
            }
            Err(e) => {
                eprintln!("baton: TLS: {e}");
                return 2;
            }
        }
    }
    let names: Vec<String> = apps.iter().map(|a| a.name().to_string()).collect();
    let Some(stop) = stop_flag() else { return 1 };
    let workers = config.workers;
    let scheduler = config.scheduler;
    let batching = config.batching();
    let runtime = match Runtime::start_with_dags(config, apps, dags) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("baton: cannot start: {e}");
            return 1;
        }
    };
    let member = cluster.map(|options| {
        let record = baton_cluster::member::Record {
            openflow: runtime
                .local_addrs()
                .first()
                .or(runtime.local_tls_addrs().first())
                .map_or_else(String::new, |a| a.to_string()),
            api: api.as_ref().map(|a| a.addr.to_string()),
        };
        baton_cluster::member::Member::join(options, record, runtime.control())
    });
    let api = match api {
        None => None,
        Some(mut opts) => {
            opts.cluster = member.as_ref().map(|m| m.source());
            let addr = opts.addr;
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
    let addrs = |a: &[std::net::SocketAddr]| -> String {
        a.iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    tracing::info!(
        listen = %addrs(runtime.local_addrs()),
        listen_tls = %addrs(runtime.local_tls_addrs()),
        workers,
        scheduler = %scheduler,
        batching = ?batching,
        apps = %names.join(","),
        "baton running"
    );
    let mut last = std::time::Instant::now();
    let mut last_msgs = 0u64;
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
        if !stats_interval.is_zero() && last.elapsed() >= stats_interval {
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
    tracing::info!("stopping (a second SIGINT or SIGTERM exits at once)");
    exit_after_grace();
    if let Some(api) = api {
        api.stop();
    }
    if let Some(member) = member {
        member.leave();
    }
    runtime.stop();
    0
}

fn config_check(file: &std::path::Path) -> i32 {
    match config::check_file(file) {
        Ok(s) => {
            if let Some(t) = &s.tls {
                if let Err(e) =
                    baton_runtime::tls::server_config(&t.cert, &t.key, t.client_ca.as_deref())
                {
                    eprintln!("baton: TLS: {e}");
                    return 1;
                }
            }
            let apps: Vec<&str> = s.apps.iter().map(|a| a.name()).collect();
            let tcp = s.runtime.listen.iter().map(|a| a.to_string());
            let tls = s.tls.iter().flat_map(|t| &t.listen);
            let listen: Vec<String> = tcp.chain(tls.map(|a| format!("{a} (TLS)"))).collect();
            let api = s.api.as_ref().map_or("off".to_string(), |a| {
                let token = if a.token.is_some() {
                    ", with a token"
                } else {
                    ""
                };
                format!("{}{token}", a.addr)
            });
            let cluster = s.cluster.as_ref().map_or(String::new(), |c| {
                format!(
                    ", cluster node {} on etcd {}",
                    c.node,
                    c.endpoints.join(",")
                )
            });
            println!(
                "{}: ok: switches on {}, {} workers, {} scheduler, apps {}, API {}{}",
                file.display(),
                listen.join(","),
                s.runtime.workers,
                s.runtime.scheduler,
                apps.join(","),
                api,
                cluster,
            );
            0
        }
        Err(e) => {
            eprintln!("baton: {e}");
            1
        }
    }
}

fn output(json: bool) -> Output {
    if json { Output::Json } else { Output::Table }
}

fn print(result: Result<String, client::ClientError>) -> i32 {
    match result {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(e) => {
            eprintln!("baton: {e}");
            1
        }
    }
}

fn show(args: ShowArgs) -> i32 {
    let c = Client::new(&args.api.api, args.api.token);
    let what = match args.what {
        ShowWhat::Switches => Show::Switches,
        ShowWhat::Links => Show::Links,
        ShowWhat::Hosts => Show::Hosts,
        ShowWhat::Flows { dpid } => Show::Flows(dpid),
        ShowWhat::Apps => Show::Apps,
        ShowWhat::Dags => Show::Dags,
        ShowWhat::Reservations => Show::Reservations,
        ShowWhat::Scheduler => Show::Scheduler,
        ShowWhat::Cluster => Show::Cluster,
    };
    print(client::show(&c, &what, output(args.api.json)))
}

fn app(args: AppArgs) -> i32 {
    let c = Client::new(&args.api.api, args.api.token);
    let (name, action) = match args.what {
        AppWhat::Stop { name, keep_flows } => (name, AppAction::Stop { keep_flows }),
        AppWhat::Start { name } => (name, AppAction::Start),
        AppWhat::Set { name, settings } => (name, AppAction::Set(settings)),
    };
    print(client::app(&c, &name, &action, output(args.api.json)))
}
