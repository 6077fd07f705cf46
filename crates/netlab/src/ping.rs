//! Pings between the lab's hosts with `ping` from iputils: one-shot
//! ([`Lab::ping`]), between every pair ([`Lab::ping_all`]) and continuous
//! with a timestamp per reply ([`Lab::ping_stream`]), to measure how long
//! traffic stops when a link is cut. Duplicates are counted from the
//! `(DUP!)` that `ping` prints after a reply it has already seen.

use crate::cmd::Cmd;
use crate::error::{Error, Result};
use crate::lab::Lab;
use crate::process::Proc;
use std::fmt;
use std::net::Ipv4Addr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds between echo requests of [`Lab::ping`] (`ping -i`).
const INTERVAL: &str = "0.2";

/// How many pings [`Lab::ping_all`] runs at once: enough to keep both
/// cores of a small machine busy, few enough not to starve OVS.
const PARALLEL: usize = 8;

/// One echo reply, as `ping` printed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reply {
    /// Its `icmp_seq`.
    pub seq: u32,
    /// When it arrived (only with `ping -D`, as [`Lab::ping_stream`] runs
    /// it).
    pub at: Option<SystemTime>,
    /// Its round-trip time.
    pub rtt: Duration,
    /// Whether `ping` had already seen a reply with this `icmp_seq`.
    pub duplicate: bool,
}

/// The replies in `ping`'s output, in order.
pub fn parse_replies(output: &str) -> Vec<Reply> {
    output.lines().filter_map(parse_reply).collect()
}

/// How long after `cut` a continuous ping's traffic flowed again, or
/// `None` if the cut cost it nothing: the requests after the last reply
/// that arrived before `cut` are looked at, and if any of them went
/// unanswered, the answer is when the reply to the first request after
/// the last unanswered one arrived, less `cut`. Arrival, not sending:
/// `netemu`'s reroute figure is measured the same way, so the two compare
/// (they differ by at most a round trip). Requests after the last reply
/// (still in flight when `ping` stopped) are not counted as lost.
pub fn outage_after(replies: &[Reply], cut: SystemTime) -> Option<Duration> {
    let mut seqs: Vec<&Reply> = replies.iter().filter(|r| !r.duplicate).collect();
    seqs.sort_by_key(|r| r.seq);
    let before = seqs
        .iter()
        .rposition(|r| r.at.is_some_and(|at| at < cut))
        .unwrap_or(0);
    let last_lost = seqs[before..]
        .windows(2)
        .rev()
        .find(|w| w[1].seq > w[0].seq + 1)
        .map(|w| w[1].seq - 1)?;
    let resumed = seqs.iter().find(|r| r.seq > last_lost)?;
    resumed.at?.duration_since(cut).ok()
}

fn parse_reply(line: &str) -> Option<Reply> {
    if !line.contains(" bytes from ") {
        return None;
    }
    let field = |name: &str| {
        let start = line.find(name)? + name.len();
        let rest = &line[start..];
        Some(&rest[..rest.find(' ').unwrap_or(rest.len())])
    };
    let seq = field("icmp_seq=")?.parse().ok()?;
    let ms: f64 = field("time=")?.parse().ok()?;
    let at = line
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .and_then(|(t, _)| t.parse::<f64>().ok())
        .map(|secs| UNIX_EPOCH + Duration::from_secs_f64(secs));
    Some(Reply {
        seq,
        at,
        rtt: Duration::from_secs_f64(ms / 1000.0),
        duplicate: line.contains("(DUP!)"),
    })
}

/// What one `ping` run gave.
#[derive(Clone, Debug, PartialEq)]
pub struct PingReport {
    /// Echo requests sent.
    pub transmitted: u32,
    /// Distinct requests answered.
    pub received: u32,
    /// Replies to a request already answered (a loop or a flood delivers
    /// a packet twice).
    pub duplicates: u32,
    /// The round-trip time of each reply, duplicates included, in order.
    pub rtts: Vec<Duration>,
    /// What `ping` printed.
    pub output: String,
}

impl PingReport {
    /// Reads `ping`'s output: the replies, and the summary line
    /// (`3 packets transmitted, 3 received, +1 duplicates, ...`) when
    /// `ping` lived to print it.
    pub fn parse(output: &str) -> PingReport {
        let replies = parse_replies(output);
        let mut seen: Vec<u32> = replies
            .iter()
            .filter(|r| !r.duplicate)
            .map(|r| r.seq)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        let summary = output
            .lines()
            .find(|l| l.contains(" packets transmitted, "));
        let number_before = |line: &str, word: &str| -> Option<u32> {
            let end = line.find(word)?;
            line[..end]
                .trim_end()
                .rsplit([' ', ','])
                .next()?
                .parse()
                .ok()
        };
        let transmitted = summary
            .and_then(|l| number_before(l, " packets transmitted"))
            .unwrap_or_else(|| replies.iter().map(|r| r.seq).max().unwrap_or(0));
        let received = summary
            .and_then(|l| number_before(l, " received"))
            .unwrap_or(seen.len() as u32);
        PingReport {
            transmitted,
            received,
            duplicates: replies.iter().filter(|r| r.duplicate).count() as u32,
            rtts: replies.iter().map(|r| r.rtt).collect(),
            output: output.to_string(),
        }
    }

    /// Every request answered once, none twice, and at least one sent.
    pub fn is_clean(&self) -> bool {
        self.transmitted > 0 && self.received == self.transmitted && self.duplicates == 0
    }
}

impl fmt::Display for PingReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} sent, {} received, {} duplicates",
            self.transmitted, self.received, self.duplicates
        )
    }
}

/// One pair of [`Lab::ping_all`].
#[derive(Clone, Debug, PartialEq)]
pub struct PairPing {
    /// The host that pinged.
    pub from: String,
    /// The host pinged.
    pub to: String,
    /// Its address.
    pub to_ip: Ipv4Addr,
    /// What `ping` gave.
    pub report: PingReport,
}

/// The result of pinging between every ordered pair of hosts.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PingMatrix {
    /// One entry per ordered pair.
    pub pairs: Vec<PairPing>,
}

impl PingMatrix {
    /// The pairs whose ping was not clean ([`PingReport::is_clean`]).
    pub fn failures(&self) -> Vec<&PairPing> {
        self.pairs.iter().filter(|p| !p.report.is_clean()).collect()
    }

    /// Whether every pair pinged cleanly.
    pub fn all_clean(&self) -> bool {
        !self.pairs.is_empty() && self.failures().is_empty()
    }

    /// Duplicates over all pairs.
    pub fn duplicates(&self) -> u32 {
        self.pairs.iter().map(|p| p.report.duplicates).sum()
    }
}

impl fmt::Display for PingMatrix {
    /// One line, then one per pair that was not clean.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bad = self.failures();
        write!(
            f,
            "{} pairs, {} not clean, {} duplicates",
            self.pairs.len(),
            bad.len(),
            self.duplicates()
        )?;
        for p in bad {
            write!(f, "\n  {} -> {} ({}): {}", p.from, p.to, p.to_ip, p.report)?;
        }
        Ok(())
    }
}

/// A continuous `ping -D` started by [`Lab::ping_stream`]; it runs until
/// [`PingStream::stop`] or until dropped.
pub struct PingStream {
    proc: Proc,
}

impl PingStream {
    /// The replies so far.
    pub fn replies(&self) -> Vec<Reply> {
        parse_replies(&self.proc.stdout())
    }

    /// Waits until a reply arrives that was sent after `since` (its
    /// arrival minus its round-trip time is later), and returns it.
    pub fn wait_reply_after(&self, since: SystemTime, timeout: Duration) -> Result<Reply> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let found = self.replies().into_iter().find(|r| {
                r.at.is_some_and(|at| at.checked_sub(r.rtt).is_some_and(|sent| sent >= since))
            });
            if let Some(r) = found {
                return Ok(r);
            }
            if !self.proc.is_running() || std::time::Instant::now() > deadline {
                return Err(Error::new(format!(
                    "no echo reply to a request sent after the mark within {:.1} s\nran: {}\noutput:\n{}",
                    timeout.as_secs_f64(),
                    self.proc.cmdline(),
                    crate::cmd::tail(&self.proc.stdout(), 4000)
                )));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops `ping` (SIGINT, so it prints its summary) and reports.
    pub fn stop(mut self) -> Result<PingReport> {
        self.proc.signal(libc::SIGINT);
        let out = self.proc.wait_timeout(Duration::from_secs(5))?;
        Ok(PingReport::parse(&out.stdout))
    }
}

impl Lab {
    /// Pings `to_ip` from host `from`: `count` requests 0.2 s apart, each
    /// awaited at most 1 s (`ping -c COUNT -i 0.2 -W 1`). If `ping` is
    /// still running after `timeout`, it is interrupted and reports what
    /// it had. A ping that gets no answer is no error: the report says so.
    ///
    /// `ping -w` is not used: with it, `ping` exits at the first ICMP
    /// error (an unresolved ARP, for one), which a network that is still
    /// converging produces.
    pub fn ping(
        &self,
        from: &str,
        to_ip: impl fmt::Display,
        count: u32,
        timeout: Duration,
    ) -> Result<PingReport> {
        let mut p = self.spawn(ping_cmd(from, &to_ip.to_string(), count))?;
        let report = finish(&mut p, timeout)?;
        self.note(format!("ran: {} -> {report}", p.cmdline()));
        Ok(report)
    }

    /// Pings `to_ip` from `from` once every 0.1 s or so until a reply
    /// comes, and returns how long that took: how long a controller takes
    /// to make the path (ARP and flow setup included). Fails after
    /// `timeout`, with the last ping's output.
    pub fn wait_reachable(
        &self,
        from: &str,
        to_ip: impl fmt::Display,
        timeout: Duration,
    ) -> Result<Duration> {
        let start = std::time::Instant::now();
        let to_ip = to_ip.to_string();
        loop {
            let cmd = Cmd::new("ping")
                .args(["-n", "-c", "1", "-W", "0.1", &to_ip])
                .host(from);
            let out = self.output(cmd)?;
            if PingReport::parse(&out.stdout).received > 0 {
                return Ok(start.elapsed());
            }
            if start.elapsed() > timeout {
                return Err(Error::new(format!(
                    "{from} did not reach {to_ip} within {:.1} s; the last try:\n{}",
                    timeout.as_secs_f64(),
                    out.describe()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Pings between every ordered pair of hosts, eight pings at a time,
    /// each as [`Lab::ping`] does (with at most `timeout` for each group of
    /// eight).
    pub fn ping_all(&self, count: u32, timeout: Duration) -> Result<PingMatrix> {
        let names: Vec<String> = self.hosts().into_iter().map(|h| h.name).collect();
        let mut pairs = Vec::new();
        for a in &names {
            for b in &names {
                if a != b {
                    pairs.push((a.clone(), b.clone()));
                }
            }
        }
        self.ping_pairs(&pairs, count, timeout)
    }

    /// Pings from each pair's first host to its second's address, as
    /// [`Lab::ping_all`] does.
    pub fn ping_pairs(
        &self,
        pairs: &[(String, String)],
        count: u32,
        timeout: Duration,
    ) -> Result<PingMatrix> {
        let hosts = self.hosts();
        let ip_of = |name: &str| {
            hosts
                .iter()
                .find(|h| h.name == name)
                .map(|h| h.ip)
                .ok_or_else(|| Error::new(format!("there is no host `{name}`")))
        };
        let mut matrix = PingMatrix::default();
        for wave in pairs.chunks(PARALLEL) {
            let started = std::time::Instant::now();
            let mut running = Vec::new();
            for (from, to) in wave {
                let ip = ip_of(to)?;
                running.push((
                    from,
                    to,
                    ip,
                    self.spawn(ping_cmd(from, &ip.to_string(), count))?,
                ));
            }
            for (from, to, ip, mut proc) in running {
                let report = finish(&mut proc, timeout.saturating_sub(started.elapsed()))?;
                matrix.pairs.push(PairPing {
                    from: from.clone(),
                    to: to.clone(),
                    to_ip: ip,
                    report,
                });
            }
        }
        Ok(matrix)
    }

    /// Starts pinging `to_ip` from host `from` every `interval` until
    /// stopped, each reply stamped with its arrival time (`ping -D -O`).
    pub fn ping_stream(
        &self,
        from: &str,
        to_ip: impl fmt::Display,
        interval: Duration,
    ) -> Result<PingStream> {
        let cmd = Cmd::new("ping")
            .args(["-n", "-D", "-O", "-W", "1", "-i"])
            .arg(format!("{:.3}", interval.as_secs_f64()))
            .arg(to_ip.to_string())
            .host(from);
        Ok(PingStream {
            proc: self.spawn(cmd)?,
        })
    }
}

/// `ping -c count`, 0.2 s apart, each reply awaited at most 1 s.
fn ping_cmd(from: &str, to_ip: &str, count: u32) -> Cmd {
    Cmd::new("ping")
        .args([
            "-n",
            "-c",
            &count.to_string(),
            "-i",
            INTERVAL,
            "-W",
            "1",
            to_ip,
        ])
        .host(from)
}

/// Waits up to `timeout` for a `ping` to end, then interrupts it (SIGINT:
/// it prints its summary), and reads its report.
fn finish(p: &mut Proc, timeout: Duration) -> Result<PingReport> {
    let out = match p.wait_until_exit(timeout) {
        Some(out) => out,
        None => {
            p.signal(libc::SIGINT);
            p.wait_timeout(Duration::from_secs(5))?
        }
    };
    if out.stdout.is_empty() {
        return Err(Error::new(format!(
            "ping printed nothing\n{}",
            out.describe()
        )));
    }
    Ok(PingReport::parse(&out.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPED: &str = "PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data.
64 bytes from 10.0.0.3: icmp_seq=1 ttl=64 time=1.13 ms
64 bytes from 10.0.0.3: icmp_seq=1 ttl=64 time=1.52 ms (DUP!)
64 bytes from 10.0.0.3: icmp_seq=2 ttl=64 time=0.338 ms
From 10.0.0.1 icmp_seq=3 Destination Host Unreachable

--- 10.0.0.3 ping statistics ---
3 packets transmitted, 2 received, +1 duplicates, 33.3333% packet loss, time 402ms
rtt min/avg/max/mdev = 0.338/0.609/1.131/0.368 ms
";

    #[test]
    fn counts_replies_duplicates_and_losses() {
        let r = PingReport::parse(LOOPED);
        assert_eq!((r.transmitted, r.received, r.duplicates), (3, 2, 1));
        assert_eq!(r.rtts.len(), 3);
        assert_eq!(r.rtts[2], Duration::from_micros(338));
        assert!(!r.is_clean());
        assert_eq!(r.to_string(), "3 sent, 2 received, 1 duplicates");
    }

    fn reply(seq: u32, at_ms: u64) -> Reply {
        Reply {
            seq,
            at: Some(UNIX_EPOCH + Duration::from_millis(at_ms)),
            rtt: Duration::from_micros(500),
            duplicate: false,
        }
    }

    #[test]
    fn an_outage_ends_at_the_reply_after_the_last_lost_request() {
        let cut = UNIX_EPOCH + Duration::from_millis(1_005);
        // A request every 10 ms; 2 and 3 lost; 4 answered; 6 lost; 7 on.
        let replies: Vec<Reply> = [0, 1, 4, 5, 7, 8]
            .into_iter()
            .map(|seq| reply(seq, 990 + 10 * u64::from(seq)))
            .collect();
        assert_eq!(
            outage_after(&replies, cut),
            Some(Duration::from_millis(1_060 - 1_005))
        );
        // Unbroken: the cut cost nothing. Before the cut: not this cut's.
        let whole: Vec<Reply> = (0..6).map(|s| reply(s, 990 + 10 * u64::from(s))).collect();
        assert_eq!(outage_after(&whole, cut), None);
        let early = [
            reply(0, 900),
            reply(3, 930),
            reply(4, 1_010),
            reply(5, 1_020),
        ];
        assert_eq!(outage_after(&early, cut), None);
        // Nothing after the loss yet: no figure rather than a wrong one.
        assert_eq!(outage_after(&[reply(0, 990), reply(1, 1_000)], cut), None);
    }

    #[test]
    fn a_killed_ping_is_read_from_its_replies() {
        let out = "[1795445082.063725] 64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.500 ms
[1795445082.113725] no answer yet for icmp_seq=2
[1795445082.163725] 64 bytes from 10.0.0.2: icmp_seq=3 ttl=64 time=0.250 ms
";
        let replies = parse_replies(out);
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[1].seq, 3);
        let at = replies[0].at.unwrap().duration_since(UNIX_EPOCH).unwrap();
        assert!((at.as_secs_f64() - 1795445082.063725).abs() < 1e-5);
        let r = PingReport::parse(out);
        assert_eq!((r.transmitted, r.received, r.duplicates), (3, 2, 0));
    }

    #[test]
    fn nothing_sent_is_not_clean() {
        let r = PingReport::parse("");
        assert_eq!((r.transmitted, r.received), (0, 0));
        assert!(!r.is_clean());
        assert!(!PingMatrix::default().all_clean());
    }
}
