//! Values shared by both versions: newtypes for values with distinct
//! meanings, [`PortReason`], and the [`wire_enum!`](crate::wire_enum) macro
//! for wire enumerations.

use std::fmt;

/// Declares a wire enumeration with an `Unknown(raw)` variant and lossless
/// conversions both ways, so unknown codes survive a round trip (the
/// pattern of smoltcp's `enum_with_unknown!`).
///
/// ```
/// baton_openflow::wire_enum! {
///     /// Colours.
///     pub enum Colour: u8 {
///         /// Red.
///         Red = 1,
///         /// Blue.
///         Blue = 2,
///     }
/// }
/// assert_eq!(Colour::from(2u8), Colour::Blue);
/// assert_eq!(u8::from(Colour::Unknown(9)), 9);
/// ```
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $ty:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this codec does not name; kept so it round-trips.
            Unknown($ty),
        }

        impl ::core::convert::From<$ty> for $name {
            #[inline]
            fn from(value: $ty) -> Self {
                match value {
                    $( v if v == $value => $name::$variant, )+
                    other => $name::Unknown(other),
                }
            }
        }

        impl ::core::convert::From<$name> for $ty {
            #[inline]
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => $value, )+
                    $name::Unknown(other) => other,
                }
            }
        }
    };
}

macro_rules! newtype {
    ($(#[$meta:meta])* $name:ident($ty:ty), $fmt:literal) => {
        newtype!($(#[$meta])* $name($ty));

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, $fmt, self.0)
            }
        }
    };
    ($(#[$meta:meta])* $name:ident($ty:ty)) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub $ty);

        impl From<$ty> for $name {
            fn from(v: $ty) -> Self {
                $name(v)
            }
        }

        impl From<$name> for $ty {
            fn from(v: $name) -> Self {
                v.0
            }
        }
    };
}

newtype!(
    /// Transaction id (`ofp_header.xid`).
    Xid(u32),
    "0x{:x}"
);
newtype!(
    /// A switch's datapath id (`ofp_switch_features.datapath_id`), written
    /// `00:00:00:00:00:00:00:01` as `ovs-ofctl` and ONOS write it, and read
    /// in that form or as a decimal or `0x` number (its `FromStr`).
    DatapathId(u64)
);

impl fmt::Display for DatapathId {
    /// Its eight bytes, colon-separated: `00:00:00:00:00:00:00:01`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0.to_be_bytes();
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
        )
    }
}

impl std::str::FromStr for DatapathId {
    type Err = String;

    /// Reads `00:00:00:00:00:00:00:01` (eight colon-separated hex bytes),
    /// `0x1` (hex) or `1` (decimal).
    fn from_str(s: &str) -> Result<DatapathId, String> {
        let bad = || {
            format!(
                "bad datapath id {s:?}: expected 00:00:00:00:00:00:00:01, a decimal number or a 0x hex number"
            )
        };
        if s.contains(':') {
            let bytes: Vec<&str> = s.split(':').collect();
            if bytes.len() != 8 || bytes.iter().any(|b| b.len() != 2) {
                return Err(bad());
            }
            return u64::from_str_radix(&bytes.concat(), 16)
                .map(DatapathId)
                .map_err(|_| bad());
        }
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) if !hex.is_empty() && hex.len() <= 16 => u64::from_str_radix(hex, 16),
            Some(_) => return Err(bad()),
            None => s.parse(),
        }
        .map(DatapathId)
        .map_err(|_| bad())
    }
}
newtype!(
    /// A flow cookie, opaque to the switch.
    Cookie(u64),
    "0x{:x}"
);
newtype!(
    /// A switch's id for a packet it buffered; see [`BufferId::NONE`].
    BufferId(u32),
    "0x{:x}"
);
newtype!(
    /// A port number, in OpenFlow 1.3's 32-bit numbering. OpenFlow 1.0's
    /// 16-bit numbers convert losslessly with [`PortNo::from_of10`] and
    /// [`PortNo::to_of10`]: its reserved ports `0xff00..=0xffff` map to
    /// `0xffffff00..=0xffffffff`, which is where 1.3 put the same ports.
    PortNo(u32),
    "{}"
);

impl BufferId {
    /// `OFP_NO_BUFFER` (0xffffffff): the packet is not buffered; its whole
    /// frame is in the message.
    pub const NONE: BufferId = BufferId(0xffff_ffff);

    /// `Some(self)` unless this is [`BufferId::NONE`].
    pub fn get(self) -> Option<BufferId> {
        (self != BufferId::NONE).then_some(self)
    }
}

impl PortNo {
    /// Highest number of a physical port (1.3 `OFPP_MAX`).
    pub const MAX: PortNo = PortNo(0xffff_ff00);
    /// Send the packet back out of its input port.
    pub const IN_PORT: PortNo = PortNo(0xffff_fff8);
    /// Submit the packet to the first flow table (packet-out only).
    pub const TABLE: PortNo = PortNo(0xffff_fff9);
    /// The switch's non-OpenFlow pipeline.
    pub const NORMAL: PortNo = PortNo(0xffff_fffa);
    /// All ports except the input port and those with flooding disabled.
    pub const FLOOD: PortNo = PortNo(0xffff_fffb);
    /// All ports except the input port.
    pub const ALL: PortNo = PortNo(0xffff_fffc);
    /// The controller.
    pub const CONTROLLER: PortNo = PortNo(0xffff_fffd);
    /// The switch's local port.
    pub const LOCAL: PortNo = PortNo(0xffff_fffe);
    /// No port / any port (1.0 `OFPP_NONE`, 1.3 `OFPP_ANY`).
    pub const ANY: PortNo = PortNo(0xffff_ffff);

    /// Converts an OpenFlow 1.0 port number.
    pub const fn from_of10(p: u16) -> PortNo {
        if p >= 0xff00 {
            PortNo(0xffff_0000 | p as u32)
        } else {
            PortNo(p as u32)
        }
    }

    /// The OpenFlow 1.0 number, if this port has one.
    pub const fn to_of10(self) -> Option<u16> {
        if self.0 < 0xff00 {
            Some(self.0 as u16)
        } else if self.0 >= 0xffff_ff00 {
            Some((self.0 & 0xffff) as u16)
        } else {
            None
        }
    }
}

/// An Ethernet address. Ordered octet by octet, as the derived order of
/// its bytes would be, but compared as one number ([`Ord`] below).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// True for group (multicast and broadcast) addresses.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }

    /// The address as a 48-bit number, its first octet the most
    /// significant: numbers order as the octets do.
    #[inline]
    pub const fn to_u64(self) -> u64 {
        let [a, b, c, d, e, f] = self.0;
        u64::from_be_bytes([0, 0, a, b, c, d, e, f])
    }

    /// The address whose [`MacAddr::to_u64`] is the low 48 bits of `n`.
    #[inline]
    pub const fn from_u64(n: u64) -> MacAddr {
        let [_, _, a, b, c, d, e, f] = n.to_be_bytes();
        MacAddr([a, b, c, d, e, f])
    }
}

/// One integer comparison instead of the derived byte-slice comparison
/// (ordered maps keyed by address compare keys at every level).
impl Ord for MacAddr {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_u64().cmp(&other.to_u64())
    }
}

impl PartialOrd for MacAddr {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<[u8; 6]> for MacAddr {
    fn from(v: [u8; 6]) -> Self {
        MacAddr(v)
    }
}

crate::wire_enum! {
    /// `ofp_port_reason` (1.0.0 §5.4.3, 1.3.5 §7.4.3): why a PORT_STATUS
    /// was sent.
    pub enum PortReason: u8 {
        /// `OFPPR_ADD`: the port was added.
        Add = 0,
        /// `OFPPR_DELETE`: the port was removed.
        Delete = 1,
        /// `OFPPR_MODIFY`: some attribute of the port changed.
        Modify = 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of10_ports_round_trip() {
        for p in [0u16, 1, 0xfeff, 0xff00, 0xfff8, 0xfffd, 0xffff] {
            assert_eq!(PortNo::from_of10(p).to_of10(), Some(p));
        }
        assert_eq!(PortNo::from_of10(0xfffd), PortNo::CONTROLLER);
        assert_eq!(PortNo::from_of10(0xffff), PortNo::ANY);
        assert_eq!(PortNo(0x1_0000).to_of10(), None);
    }

    #[test]
    fn datapath_ids_are_written_with_colons_and_read_three_ways() {
        let d = DatapathId(0x0000_0000_0000_0a01);
        assert_eq!(d.to_string(), "00:00:00:00:00:00:0a:01");
        for s in ["00:00:00:00:00:00:0a:01", "0xa01", "0XA01", "2561"] {
            assert_eq!(s.parse::<DatapathId>(), Ok(d), "{s}");
        }
        assert_eq!(
            "ff:ff:ff:ff:ff:ff:ff:ff".parse::<DatapathId>(),
            Ok(DatapathId(u64::MAX))
        );
        for bad in [
            "",
            "0x",
            "00:01",
            "0:0:0:0:0:0:0:1",
            "00:00:00:00:00:00:00:0g",
            "-1",
            "18446744073709551616",
            "0x10000000000000000",
            "s1",
        ] {
            let e = bad.parse::<DatapathId>().unwrap_err();
            assert!(e.contains("bad datapath id"), "{bad}: {e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn addresses_order_as_their_octets(a: [u8; 6], b: [u8; 6]) {
            proptest::prop_assert_eq!(MacAddr(a).cmp(&MacAddr(b)), a.cmp(&b));
        }

        #[test]
        fn an_address_comes_back_from_its_number(a: [u8; 6]) {
            proptest::prop_assert_eq!(MacAddr::from_u64(MacAddr(a).to_u64()), MacAddr(a));
        }
    }

    #[test]
    fn an_address_as_a_number() {
        assert_eq!(MacAddr([0, 0, 0, 0, 0, 1]).to_u64(), 1);
        assert_eq!(MacAddr([1, 2, 3, 4, 5, 6]).to_u64(), 0x0102_0304_0506);
        assert_eq!(MacAddr::BROADCAST.to_u64(), (1 << 48) - 1);
    }

    #[test]
    fn buffer_id_none() {
        assert_eq!(BufferId::NONE.get(), None);
        assert_eq!(BufferId(7).get(), Some(BufferId(7)));
    }
}
