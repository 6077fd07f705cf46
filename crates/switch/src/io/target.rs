//! Controller targets as Open vSwitch writes them (`tcp:ADDR:PORT`,
//! `ptcp:PORT[:ADDR]`), and the reconnect backoff of active ones.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

/// Where the switch meets its controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `tcp:ADDR:PORT`: connect to a controller, reconnecting with backoff.
    Active(SocketAddr),
    /// `ptcp:PORT[:ADDR]`: listen for controllers and tools (`ovs-ofctl`);
    /// what it accepts are service connections
    /// ([`Connection::into_service`](crate::proto::Connection::into_service)).
    Passive(SocketAddr),
}

/// A target that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTarget(pub String);

impl std::fmt::Display for BadTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bad target {:?}: expected tcp:ADDR:PORT or ptcp:PORT[:ADDR]",
            self.0
        )
    }
}

impl std::error::Error for BadTarget {}

impl FromStr for Target {
    type Err = BadTarget;

    fn from_str(s: &str) -> Result<Target, BadTarget> {
        let bad = || BadTarget(s.to_string());
        if let Some(rest) = s.strip_prefix("tcp:") {
            // ADDR:PORT, with IPv6 addresses in brackets.
            let addr = SocketAddr::from_str(rest)
                .or_else(|_| {
                    let (ip, port) = rest.rsplit_once(':').ok_or(())?;
                    let ip = IpAddr::from_str(ip).map_err(|_| ())?;
                    Ok::<_, ()>(SocketAddr::new(ip, port.parse().map_err(|_| ())?))
                })
                .map_err(|_| bad())?;
            return Ok(Target::Active(addr));
        }
        if let Some(rest) = s.strip_prefix("ptcp:") {
            let (port, ip) = match rest.split_once(':') {
                Some((p, ip)) => {
                    let ip = ip.trim_start_matches('[').trim_end_matches(']');
                    (p, IpAddr::from_str(ip).map_err(|_| bad())?)
                }
                None => (rest, IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
            };
            let port = port.parse().map_err(|_| bad())?;
            return Ok(Target::Passive(SocketAddr::new(ip, port)));
        }
        Err(bad())
    }
}

/// Exponential backoff between connection attempts (Open vSwitch's
/// `rconn`: 1 s doubling up to `max_backoff`, 8 s by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub min: Duration,
    /// The longest wait.
    pub max: Duration,
    current: Duration,
}

impl Backoff {
    /// A backoff from `min` to `max`.
    pub fn new(min: Duration, max: Duration) -> Backoff {
        Backoff {
            min,
            max: max.max(min),
            current: min,
        }
    }

    /// The wait before the next attempt; each call doubles the next.
    pub fn next_delay(&mut self) -> Duration {
        let d = self.current;
        self.current = (self.current * 2).min(self.max);
        d
    }

    /// A connection succeeded: start again from `min`.
    pub fn reset(&mut self) {
        self.current = self.min;
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(Duration::from_secs(1), Duration::from_secs(8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_ovs_writes_them() {
        assert_eq!(
            "tcp:127.0.0.1:6653".parse(),
            Ok(Target::Active("127.0.0.1:6653".parse().unwrap()))
        );
        assert_eq!(
            "tcp:[::1]:6653".parse(),
            Ok(Target::Active("[::1]:6653".parse().unwrap()))
        );
        assert_eq!(
            "ptcp:6634".parse(),
            Ok(Target::Passive("0.0.0.0:6634".parse().unwrap()))
        );
        assert_eq!(
            "ptcp:6634:127.0.0.1".parse(),
            Ok(Target::Passive("127.0.0.1:6634".parse().unwrap()))
        );
        assert!("udp:1.2.3.4:5".parse::<Target>().is_err());
        assert!("tcp:nowhere".parse::<Target>().is_err());
        assert!("ptcp:x".parse::<Target>().is_err());
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(500));
        let d: Vec<_> = (0..5).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(d, [100, 200, 400, 500, 500]);
        b.reset();
        assert_eq!(b.next_delay().as_millis(), 100);
    }
}
