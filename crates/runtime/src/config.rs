//! Runtime configuration: what `baton run`'s flags set.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// How work is spread over worker threads (Maestro §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    /// The default: per-worker run queues of ready switches, served in
    /// global rounds, with idle workers stealing switches still waiting in
    /// an older round. As fair as round-robin, as local as a partition.
    Fair,
    /// One reader thread reads every switch and feeds a queue shared by
    /// all workers (Maestro-Shared-Queue, §3.2.1). For comparison only.
    SharedQueue,
    /// Switches assigned round-robin to workers at connect time and served
    /// to completion there (NOX/Beacon, Maestro-Static-Partition, §3.2.2).
    StaticPartition,
    /// Like static, but re-partitioned periodically by measured input rate
    /// with the greedy algorithm of Fig. 3 (Maestro-Dynamic-Partition).
    DynamicPartition,
    /// Every worker serves every switch in turn, skipping and revisiting
    /// busy ones; one worker polls readiness per round and shares it
    /// (Maestro-Round-Robin, §3.2.4, thesis §4.2.2.4).
    RoundRobin,
}

impl SchedulerKind {
    /// Every scheduler, default first.
    pub const ALL: [SchedulerKind; 5] = [
        SchedulerKind::Fair,
        SchedulerKind::SharedQueue,
        SchedulerKind::StaticPartition,
        SchedulerKind::DynamicPartition,
        SchedulerKind::RoundRobin,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fair => "fair",
            SchedulerKind::SharedQueue => "shared-queue",
            SchedulerKind::StaticPartition => "static-partition",
            SchedulerKind::DynamicPartition => "dynamic-partition",
            SchedulerKind::RoundRobin => "round-robin",
        }
    }

    /// The batching a scheduler uses unless told otherwise: static-partition
    /// reads large and batches what one read returns, as NOX and Beacon do;
    /// the Maestro designs read small and batch adaptively (§4).
    pub fn default_batching(self) -> Batching {
        match self {
            SchedulerKind::StaticPartition => Batching::Static,
            _ => Batching::Adaptive,
        }
    }

    /// The smallest quantum (bytes served per service chance) a scheduler
    /// uses unless told otherwise. Maestro read a fixed 2 KB, and its
    /// designs here keep a 1 KB floor: their rounds must stay short for a
    /// light switch's delay, since it waits for a round. `fair` serves a
    /// switch ready from idle before the busy ones (`sched/queues.rs`),
    /// so a light switch waits for a service and not a round; its
    /// quantum can then be 16 KB, which costs less per response than many
    /// small turns (BENCHMARKS.md, "Fairness and the schedulers": probe
    /// 1.19 ms with a 16 KB quantum, and "Tried and not kept": 16 KB reads
    /// one turn each, 0.81 of static).
    pub fn default_min_read(self) -> usize {
        match self {
            SchedulerKind::Fair => 16 * 1024,
            _ => 1024,
        }
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchedulerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = SchedulerKind::ALL.iter().map(|k| k.name()).collect();
                format!("unknown scheduler {s:?}; one of: {}", names.join(", "))
            })
    }
}

/// How requests are grouped into batches (Maestro §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Batching {
    /// IBT adaptation (Fig. 4) with small reads; a batch may span switches.
    Adaptive,
    /// A batch is whatever one large read returns (NOX, Beacon).
    Static,
}

impl FromStr for Batching {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "adaptive" | "ibt" => Ok(Batching::Adaptive),
            "static" => Ok(Batching::Static),
            _ => Err(format!("unknown batching {s:?}; adaptive or static")),
        }
    }
}

/// Where and how to accept switches over TLS.
#[derive(Debug, Clone)]
pub struct Tls {
    /// Addresses to accept TLS switches on.
    pub listen: Vec<SocketAddr>,
    /// The certificate, key and client verification
    /// ([`crate::tls::server_config`] makes one from PEM files).
    pub server: Arc<rustls::ServerConfig>,
}

/// Everything the runtime can be told.
#[derive(Debug, Clone)]
pub struct Config {
    /// Addresses to accept switches on (plain TCP).
    pub listen: Vec<SocketAddr>,
    /// Addresses to accept switches on over TLS, and its configuration.
    pub tls: Option<Tls>,
    /// Worker threads.
    pub workers: usize,
    /// Pin worker `i` to core `i` (mod the core count).
    pub pin: bool,
    /// Workload distribution.
    pub scheduler: SchedulerKind,
    /// Batching; `None` takes the scheduler's default.
    pub batching: Option<Batching>,
    /// Batching-delay upper bound for IBT (§3.3); default 1 ms.
    pub bdu: Duration,
    /// Fewest bytes served per service chance with adaptive batching;
    /// `None` takes the scheduler's default ([`SchedulerKind::default_min_read`]).
    pub min_read: Option<usize>,
    /// Most bytes served per service chance with adaptive batching. Between
    /// the two, the quantum adapts so that one round over the ready
    /// switches takes about one BDU (see `Policy::quantum`). Also the size
    /// of a busy switch's read-ahead (see `Policy::read_size`).
    pub max_read: usize,
    /// Bytes read per service chance with static batching (Beacon: 64 KB).
    pub static_read_size: usize,
    /// A switch whose unsent output exceeds this is disconnected; one
    /// whose unsent output reaches a quarter of it is not read until it
    /// has read all of it (TCP's flow control then holds it back).
    pub max_output: usize,
    /// Bytes the kernel may queue from each switch before TCP's flow
    /// control holds the switch back (`SO_RCVBUF`, set on the listening
    /// sockets and inherited by the switches' sockets); 0 leaves it to
    /// the kernel's autotuning. Autotuning sizes a buffer by what the
    /// application reads per round trip, and a worker reads a busy switch
    /// [`Config::max_read`] at a time, so under cbench the buffers stayed
    /// near 400 KiB and the switches' sending stalled and restarted
    /// thousands of times a second, each restart a wake-up across cores:
    /// about 4,000 a second from the worker's core at 64 switches,
    /// against about 40 with 4 MiB, which answered 1.21-1.38x as many
    /// requests (BENCHMARKS.md, "The switches' receive buffers"). Not
    /// set where `net.core.rmem_max` is lower: the kernel would cap it
    /// there and turn autotuning off.
    pub recv_buffer: usize,
    /// Send ECHO_REQUEST after this long without hearing from a switch.
    pub echo_interval: Duration,
    /// Drop a switch silent for this long.
    pub echo_timeout: Duration,
    /// `miss_send_len` for SET_CONFIG.
    pub miss_send_len: u16,
    /// Install the OpenFlow 1.3 table-miss flow (send to controller) when a
    /// 1.3 switch connects; without it Open vSwitch sends no PACKET_IN.
    pub table_miss_13: bool,
    /// Most switches connected at once.
    pub max_switches: usize,
    /// Period of dynamic re-partitioning.
    pub repartition_period: Duration,
    /// Service chances per round for given datapaths (weighted max-min
    /// fairness, Maestro §3.2.1); others get 1.
    pub weights: Vec<(baton_openflow::DatapathId, u32)>,
    /// This instance is one of a cluster's (`baton-cluster`): a switch is
    /// served, and sent anything that changes it, only once
    /// [`crate::control::Control::set_mastership`] makes this instance its
    /// master ([`crate::Mastership`]).
    pub clustered: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: vec![SocketAddr::from(([0, 0, 0, 0], 6653))],
            tls: None,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pin: false,
            scheduler: SchedulerKind::Fair,
            batching: None,
            bdu: Duration::from_millis(1),
            min_read: None,
            max_read: 64 * 1024,
            static_read_size: 64 * 1024,
            max_output: 4 << 20,
            recv_buffer: 4 << 20,
            echo_interval: Duration::from_secs(5),
            echo_timeout: Duration::from_secs(15),
            miss_send_len: 128,
            table_miss_13: true,
            max_switches: 65_536,
            repartition_period: Duration::from_secs(1),
            weights: Vec::new(),
            clustered: false,
        }
    }
}

impl Config {
    /// The batching in force.
    pub fn batching(&self) -> Batching {
        self.batching
            .unwrap_or_else(|| self.scheduler.default_batching())
    }

    /// The fewest bytes served per service chance in force.
    pub fn min_read(&self) -> usize {
        self.min_read
            .unwrap_or_else(|| self.scheduler.default_min_read())
    }
}

/// Parses a `DPID=WEIGHT` pair (`DPID` in hex, with or without `0x`).
pub fn parse_weight(s: &str) -> Result<(baton_openflow::DatapathId, u32), String> {
    let (d, w) = s
        .split_once('=')
        .ok_or_else(|| format!("bad weight {s:?}: expected DPID=WEIGHT, e.g. 0xa=4"))?;
    let dpid: baton_openflow::DatapathId = d.parse()?;
    let weight: u32 = w
        .parse()
        .ok()
        .filter(|&w| w >= 1)
        .ok_or_else(|| format!("bad weight {w:?} in {s:?}: a whole number >= 1"))?;
    Ok((dpid, weight))
}

/// Parses durations like `1ms`, `250us`, `2s`, `1.5ms`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?}: expected e.g. 1ms, 500us, 2s"))?;
    let scale = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "" => 1.0,
        _ => return Err(format!("bad duration unit {unit:?} in {s:?}")),
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!("bad duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_names_round_trip() {
        for k in SchedulerKind::ALL {
            assert_eq!(k.name().parse::<SchedulerKind>(), Ok(k));
        }
        assert!("fifo".parse::<SchedulerKind>().is_err());
    }

    #[test]
    fn weights() {
        use baton_openflow::DatapathId;
        assert_eq!(parse_weight("0xa=4"), Ok((DatapathId(10), 4)));
        assert_eq!(parse_weight("10=4"), Ok((DatapathId(10), 4)));
        assert_eq!(
            parse_weight("00:00:00:00:00:00:00:01=2"),
            Ok((DatapathId(1), 2))
        );
        assert!(parse_weight("1=0").is_err());
        assert!(parse_weight("zz=1").is_err());
        assert!(parse_weight("5").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1.5ms"), Ok(Duration::from_micros(1500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
    }
}
