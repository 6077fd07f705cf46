//! The probes of topology discovery: LLDP frames (IEEE 802.1AB) that say
//! which switch port sent them, with an authenticator so that a frame a
//! host forges or replays is told apart from one the controller sent.
//!
//! A probe is an LLDP frame to the nearest-bridge group address with the
//! mandatory Chassis ID (the datapath id, as 16 hex digits, locally
//! assigned), Port ID (the port number, port component) and TTL TLVs,
//! then an organisationally specific TLV of baton's holding the datapath
//! id, port, send time and a nonce, and a keyed hash (HMAC-SHA256, cut to
//! 16 bytes) of those with a secret of the controller's. Decoding checks
//! every length, requires each mandatory TLV once, and checks that the
//! chassis and port TLVs agree with baton's; nothing here panics on any
//! input.

use baton_openflow::{DatapathId, MacAddr, PortNo};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

/// The nearest-bridge group address LLDP is sent to.
pub const LLDP_DST: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
/// The LLDP ethertype.
pub const ETH_TYPE_LLDP: u16 = 0x88cc;

/// The organisationally unique identifier of baton's TLV. Not a registered
/// OUI: it only has to differ from the ones real LLDP speakers use, and a
/// frame that merely copies it still fails the authenticator.
const OUI: [u8; 3] = [0xba, 0x70, 0x0e];
const SUBTYPE: u8 = 1;
const TAG_LEN: usize = 16;
/// dpid (8), port (4), sent (8), nonce (8), tag (16).
const BATON_BODY: usize = 8 + 4 + 8 + 8 + TAG_LEN;

const TLV_END: u8 = 0;
const TLV_CHASSIS: u8 = 1;
const TLV_PORT: u8 = 2;
const TLV_TTL: u8 = 3;
const TLV_ORG: u8 = 127;
const CHASSIS_LOCAL: u8 = 7;
const PORT_COMPONENT: u8 = 2;

/// What a probe says about where it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The switch that sent it.
    pub dpid: DatapathId,
    /// The port it was sent out of.
    pub port: PortNo,
    /// When, in milliseconds on the sender's clock.
    pub sent_ms: u64,
    /// A number used once per probe.
    pub nonce: u64,
}

/// Why a frame is not an authentic probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// Not an LLDP frame at all.
    NotLldp,
    /// An LLDP frame whose TLVs do not parse; names what was wrong.
    Malformed(&'static str),
    /// A well-formed LLDP frame that is not baton's (another LLDP speaker).
    Foreign,
    /// baton's TLV with a wrong authenticator, or chassis and port TLVs that
    /// disagree with it: forged or tampered with.
    BadAuthenticator,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejected::NotLldp => f.write_str("not LLDP"),
            Rejected::Malformed(what) => write!(f, "malformed LLDP: {what}"),
            Rejected::Foreign => f.write_str("LLDP from another speaker"),
            Rejected::BadAuthenticator => f.write_str("LLDP with a wrong authenticator"),
        }
    }
}

/// The controller's probe key.
#[derive(Clone)]
pub struct ProbeKey([u8; 32]);

impl fmt::Debug for ProbeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProbeKey(..)")
    }
}

/// The operating system gave no randomness for the probe key: topology
/// refuses to start rather than run with a key an attacker could guess.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRandomness {
    /// What the randomness source said.
    pub reason: String,
}

impl fmt::Display for NoRandomness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "topology cannot start: the operating system gave no randomness for \
             its LLDP probe key ({}); a guessable key would let any host forge \
             probes and make up links, so topology does not fall back to one",
            self.reason
        )
    }
}

impl std::error::Error for NoRandomness {}

impl ProbeKey {
    /// A fresh random key from the operating system, or why there is none.
    pub fn random() -> Result<ProbeKey, NoRandomness> {
        ProbeKey::from_randomness(getrandom::fill)
    }

    /// A key filled by `fill`, a source of randomness (the operating
    /// system's in [`ProbeKey::random`]; another in tests). A source that
    /// fails gives no key: there is no fallback, since a key made of
    /// guessable things (the time, an address) defeats the authenticator.
    pub fn from_randomness<E: fmt::Display>(
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<ProbeKey, NoRandomness> {
        let mut k = [0u8; 32];
        fill(&mut k).map_err(|e| NoRandomness {
            reason: e.to_string(),
        })?;
        Ok(ProbeKey(k))
    }

    /// The key's bytes (to tell whether a key given again is new).
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A key from fixed bytes (tests, and a cluster's shared key).
    pub fn from_bytes(bytes: [u8; 32]) -> ProbeKey {
        ProbeKey(bytes)
    }

    fn tag(&self, body: &[u8]) -> [u8; TAG_LEN] {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(body);
        let full = mac.finalize().into_bytes();
        let mut t = [0u8; TAG_LEN];
        t.copy_from_slice(&full[..TAG_LEN]);
        t
    }

    /// The probe frame for `probe`, from Ethernet address `src_mac`.
    pub fn encode(&self, probe: &Probe, src_mac: MacAddr) -> Vec<u8> {
        let mut f = Vec::with_capacity(96);
        f.extend_from_slice(&LLDP_DST.0);
        f.extend_from_slice(&src_mac.0);
        f.extend_from_slice(&ETH_TYPE_LLDP.to_be_bytes());
        let chassis = format!("{:016x}", probe.dpid.0);
        tlv(&mut f, TLV_CHASSIS, &[&[CHASSIS_LOCAL], chassis.as_bytes()]);
        tlv(
            &mut f,
            TLV_PORT,
            &[&[PORT_COMPONENT], &probe.port.0.to_be_bytes()],
        );
        tlv(&mut f, TLV_TTL, &[&120u16.to_be_bytes()]);
        let mut body = [0u8; BATON_BODY - TAG_LEN];
        body[0..8].copy_from_slice(&probe.dpid.0.to_be_bytes());
        body[8..12].copy_from_slice(&probe.port.0.to_be_bytes());
        body[12..20].copy_from_slice(&probe.sent_ms.to_be_bytes());
        body[20..28].copy_from_slice(&probe.nonce.to_be_bytes());
        let tag = self.tag(&body);
        tlv(&mut f, TLV_ORG, &[&OUI, &[SUBTYPE], &body, &tag]);
        tlv(&mut f, TLV_END, &[]);
        f
    }

    /// Reads and checks a probe from a received frame.
    pub fn decode(&self, frame: &[u8]) -> Result<Probe, Rejected> {
        let Some(ethertype) = frame.get(12..14) else {
            return Err(Rejected::NotLldp);
        };
        if u16::from_be_bytes([ethertype[0], ethertype[1]]) != ETH_TYPE_LLDP {
            return Err(Rejected::NotLldp);
        }
        let mut rest = &frame[14..];
        let (mut chassis, mut port, mut ttl, mut ours) = (None, None, None, None);
        loop {
            let Some(h) = rest.get(..2) else {
                return Err(Rejected::Malformed("TLV header cut short"));
            };
            let kind = h[0] >> 1;
            let len = usize::from(u16::from_be_bytes([h[0], h[1]]) & 0x01ff);
            let Some(value) = rest.get(2..2 + len) else {
                return Err(Rejected::Malformed("TLV value cut short"));
            };
            rest = &rest[2 + len..];
            let slot = match kind {
                TLV_END if len == 0 => break,
                TLV_END => return Err(Rejected::Malformed("End TLV with a length")),
                TLV_CHASSIS => &mut chassis,
                TLV_PORT => &mut port,
                TLV_TTL => &mut ttl,
                TLV_ORG if value.starts_with(&OUI) && value.get(3) == Some(&SUBTYPE) => &mut ours,
                _ => continue,
            };
            if slot.replace(value).is_some() {
                return Err(Rejected::Malformed("a TLV appears twice"));
            }
        }
        let (Some(chassis), Some(port), Some(ttl)) = (chassis, port, ttl) else {
            return Err(Rejected::Malformed("a mandatory TLV is missing"));
        };
        if chassis.is_empty() || port.is_empty() || ttl.len() != 2 {
            return Err(Rejected::Malformed("a mandatory TLV has a bad length"));
        }
        let Some(ours) = ours else {
            return Err(Rejected::Foreign);
        };
        let Some(value) = ours.get(4..).filter(|v| v.len() == BATON_BODY) else {
            return Err(Rejected::Malformed("baton TLV of the wrong length"));
        };
        let (body, tag) = value.split_at(BATON_BODY - TAG_LEN);
        // A comparison that takes the same time however much matches.
        let want = self.tag(body);
        if want.iter().zip(tag).fold(0u8, |acc, (a, b)| acc | (a ^ b)) != 0 {
            return Err(Rejected::BadAuthenticator);
        }
        let be64 = |b: &[u8]| b.try_into().map_or(0, u64::from_be_bytes);
        let be32 = |b: &[u8]| b.try_into().map_or(0, u32::from_be_bytes);
        let probe = Probe {
            dpid: DatapathId(be64(&body[0..8])),
            port: PortNo(be32(&body[8..12])),
            sent_ms: be64(&body[12..20]),
            nonce: be64(&body[20..28]),
        };
        // The plain TLVs must say the same as the authenticated one.
        let chassis_ok = chassis[0] == CHASSIS_LOCAL
            && chassis[1..] == *format!("{:016x}", probe.dpid.0).as_bytes();
        let port_ok = port[0] == PORT_COMPONENT && port[1..] == probe.port.0.to_be_bytes();
        if !(chassis_ok && port_ok) {
            return Err(Rejected::BadAuthenticator);
        }
        Ok(probe)
    }
}

/// Appends a TLV whose value is the concatenation of `parts`.
fn tlv(out: &mut Vec<u8>, kind: u8, parts: &[&[u8]]) {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let h = (u16::from(kind) << 9) | (len as u16 & 0x01ff);
    out.extend_from_slice(&h.to_be_bytes());
    for p in parts {
        out.extend_from_slice(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> ProbeKey {
        ProbeKey::from_bytes([b; 32])
    }

    const PROBE: Probe = Probe {
        dpid: DatapathId(0x0a0b),
        port: PortNo(3),
        sent_ms: 12_345,
        nonce: 0xdead_beef,
    };

    fn frame() -> Vec<u8> {
        key(1).encode(&PROBE, MacAddr([2, 0, 0, 0, 0, 3]))
    }

    #[test]
    fn a_probe_round_trips() {
        let f = frame();
        assert_eq!(&f[0..6], &LLDP_DST.0);
        assert_eq!(key(1).decode(&f), Ok(PROBE));
    }

    #[test]
    fn etherparse_reads_it_as_lldp() {
        let f = frame();
        let eth = etherparse::Ethernet2HeaderSlice::from_slice(&f).unwrap();
        assert_eq!(eth.ether_type().0, ETH_TYPE_LLDP);
    }

    #[test]
    fn a_key_comes_from_the_randomness_source_or_not_at_all() {
        let k = ProbeKey::from_randomness(|b: &mut [u8]| {
            b.fill(1);
            Ok::<(), String>(())
        })
        .unwrap();
        assert_eq!(k.decode(&frame()), Ok(PROBE));
        let e = ProbeKey::from_randomness(|_: &mut [u8]| Err("no entropy source"))
            .expect_err("a failed source gives no key");
        assert_eq!(e.reason, "no entropy source");
        let msg = e.to_string();
        assert!(
            msg.contains("no randomness") && msg.contains("no entropy source"),
            "{msg}"
        );
        assert!(msg.contains("forge"), "the message says why: {msg}");
        // The operating system's source works here.
        assert!(ProbeKey::random().is_ok());
    }

    #[test]
    fn another_controller_s_key_is_refused() {
        assert_eq!(key(2).decode(&frame()), Err(Rejected::BadAuthenticator));
    }

    #[test]
    fn any_flipped_byte_or_cut_is_refused_without_panic() {
        let f = frame();
        for n in 0..f.len() {
            assert!(key(1).decode(&f[..n]).is_err(), "cut at {n}");
        }
        // Every byte after the Ethernet header, flipped, breaks the frame
        // or the authenticator, but for the TTL's value, which nothing
        // checks: Ethernet (14), chassis TLV (2 + 17), port TLV (2 + 5),
        // the TTL's header (2).
        let ttl = 14 + 19 + 7 + 2;
        for i in 14..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x5a;
            let got = key(1).decode(&g);
            if i == ttl || i == ttl + 1 {
                assert_eq!(got, Ok(PROBE), "byte {i}");
            } else {
                assert!(got.is_err(), "byte {i} changed nothing");
            }
        }
    }

    #[test]
    fn a_chassis_that_disagrees_with_the_signed_tlv_is_refused() {
        let mut f = frame();
        // The chassis TLV starts at 14: 2 header bytes, subtype, 16 hex.
        f[14 + 3 + 15] = b'f';
        assert_eq!(key(1).decode(&f), Err(Rejected::BadAuthenticator));
    }

    #[test]
    fn foreign_and_non_lldp_frames_are_told_apart() {
        // A minimal LLDP frame from another speaker: chassis, port, TTL, end.
        let mut f = Vec::new();
        f.extend_from_slice(&LLDP_DST.0);
        f.extend_from_slice(&[2, 0, 0, 0, 0, 9]);
        f.extend_from_slice(&ETH_TYPE_LLDP.to_be_bytes());
        tlv(&mut f, TLV_CHASSIS, &[&[4], &[2, 0, 0, 0, 0, 9]]);
        tlv(&mut f, TLV_PORT, &[&[5], b"eth0"]);
        tlv(&mut f, TLV_TTL, &[&[0, 120]]);
        tlv(&mut f, TLV_END, &[]);
        assert_eq!(key(1).decode(&f), Err(Rejected::Foreign));
        let mut ip = f.clone();
        ip[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        assert_eq!(key(1).decode(&ip), Err(Rejected::NotLldp));
        // A TLV twice.
        let mut twice = f[..f.len() - 2].to_vec();
        tlv(&mut twice, TLV_TTL, &[&[0, 120]]);
        tlv(&mut twice, TLV_END, &[]);
        assert!(matches!(key(1).decode(&twice), Err(Rejected::Malformed(_))));
    }
}
