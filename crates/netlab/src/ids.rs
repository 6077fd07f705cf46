//! The identifiers a topology gives its nodes: datapath ids and Ethernet
//! addresses, written as OVS and `ip` want them.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A switch's OpenFlow datapath id (written as 16 hex digits, as OVS's
/// `other-config:datapath-id` wants it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dpid(pub u64);

impl fmt::Display for Dpid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// An Ethernet address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// The address whose last 40 bits are `n` (`00:00:00:00:00:01` for 1),
    /// as Mininet numbers its hosts.
    pub fn numbered(n: u64) -> Mac {
        let b = n.to_be_bytes();
        Mac([0, b[3], b[4], b[5], b[6], b[7]])
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e, g] = self.0;
        write!(f, "{a:02x}:{b:02x}:{c:02x}:{d:02x}:{e:02x}:{g:02x}")
    }
}

impl FromStr for Mac {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mac> {
        let bad = || {
            Error::new(format!(
                "`{s}` is not an Ethernet address (aa:bb:cc:dd:ee:ff)"
            ))
        };
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut out {
            let p = parts.next().ok_or_else(bad)?;
            if p.len() != 2 {
                return Err(bad());
            }
            *byte = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Mac(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_ovs_and_ip_want_them() {
        assert_eq!(Dpid(0x1f).to_string(), "000000000000001f");
        assert_eq!(Mac::numbered(1).to_string(), "00:00:00:00:00:01");
        assert_eq!(Mac::numbered(0x1234).to_string(), "00:00:00:00:12:34");
        assert_eq!(
            "0a:0B:00:00:00:ff".parse::<Mac>().unwrap(),
            Mac([10, 11, 0, 0, 0, 255])
        );
        for bad in [
            "0a:0b:00:00:00",
            "0a:0b:00:00:00:00:00",
            "0a:0b:00:00:00:0",
            "0a:0b:00:00:00:gg",
        ] {
            assert!(bad.parse::<Mac>().is_err(), "{bad}");
        }
    }
}
