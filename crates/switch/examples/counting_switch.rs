//! A network function made of a switch and a few lines of its own logic
//! (Mirage §III-B): an OpenFlow 1.3 switch that counts packets per source
//! MAC address, answers an experimenter request with the counts, and
//! offers an extra action that drops a source's packets past a limit.
//!
//! Nothing here forks the switch: the logic is an [`Extension`]
//! registered with it.
//!
//! ```sh
//! cargo run -p baton-switch --example counting_switch
//! ```

use baton_openflow::Version;
use baton_openflow::types::{MacAddr, PortNo, Xid};
use baton_openflow::v13::{self, Action, Instruction, Message};
use baton_switch::ext::{ExperimenterMsg, ExperimenterReply, PacketContext};
use baton_switch::inproc::Network;
use baton_switch::testutil::udp_frame;
use baton_switch::{Config, Extension, OfError, PortSpec, Switch, Verdict};
use std::collections::BTreeMap;
use std::time::Instant;

/// The experimenter id the extension answers for.
pub const EXPERIMENTER: u32 = 0x00ba_7011;
/// Experimenter message type: "send me the counts".
pub const GET_COUNTS: u32 = 1;

/// Counts packets per source address.
#[derive(Debug, Default)]
pub struct SourceCounter {
    counts: BTreeMap<MacAddr, u64>,
}

impl Extension for SourceCounter {
    fn experimenter(&self) -> u32 {
        EXPERIMENTER
    }

    /// The packet hook: count every frame by its source.
    fn on_packet(&mut self, ctx: &PacketContext<'_>, _frame: &[u8]) -> Verdict {
        *self.counts.entry(ctx.key.eth_src).or_default() += 1;
        Verdict::Continue
    }

    /// GET_COUNTS: 16 bytes per source (address, 2 pad bytes, count).
    fn message(&mut self, msg: &ExperimenterMsg<'_>) -> Result<Option<ExperimenterReply>, OfError> {
        if msg.exp_type != GET_COUNTS {
            return Err(OfError::BadExpType);
        }
        let mut data = Vec::with_capacity(16 * self.counts.len());
        for (mac, n) in &self.counts {
            data.extend_from_slice(&mac.0);
            data.extend_from_slice(&[0, 0]);
            data.extend_from_slice(&n.to_be_bytes());
        }
        Ok(Some(ExperimenterReply {
            exp_type: GET_COUNTS,
            data,
        }))
    }

    /// The "limit" action: 4 bytes, the most packets a source may send,
    /// then the zero padding that makes the action a multiple of 8 bytes.
    fn check_action(&self, data: &[u8]) -> Result<(), OfError> {
        if data.len() >= 4 && data[4..].iter().all(|&b| b == 0) {
            Ok(())
        } else {
            Err(OfError::BadActionLen)
        }
    }

    fn apply_action(
        &mut self,
        ctx: &PacketContext<'_>,
        data: &[u8],
        _frame: &mut Vec<u8>,
    ) -> Verdict {
        let limit = u64::from(u32::from_be_bytes([data[0], data[1], data[2], data[3]]));
        if self.counts.get(&ctx.key.eth_src).copied().unwrap_or(0) > limit {
            Verdict::Drop
        } else {
            Verdict::Continue
        }
    }
}

/// Reads a GET_COUNTS reply.
pub fn decode_counts(data: &[u8]) -> Vec<(MacAddr, u64)> {
    data.chunks_exact(16)
        .map(|c| {
            let mac = MacAddr([c[0], c[1], c[2], c[3], c[4], c[5]]);
            let mut n = [0u8; 8];
            n.copy_from_slice(&c[8..16]);
            (mac, u64::from_be_bytes(n))
        })
        .collect()
}

/// The extra action, as a controller writes it: output after at most
/// `limit` packets per source.
pub fn limit_action(limit: u32) -> Action {
    // The codec pads the body to 8 bytes; the switch hands the padded body
    // to the extension.
    Action::Experimenter {
        experimenter: EXPERIMENTER,
        data: limit.to_be_bytes().to_vec(),
    }
}

fn encode(m: &Message) -> Vec<u8> {
    let mut b = Vec::new();
    m.encode(Xid(7), &mut b);
    b
}

/// Builds the switch, installs a flow using the extra action, sends
/// traffic from two hosts and asks for the counts. Returns the counts and
/// the frames that got through.
pub fn demo() -> (Vec<(MacAddr, u64)>, usize) {
    let now = Instant::now();
    let mut sw = Switch::new(Config::new(0x42, Version::V13), now);
    sw.add_port(PortSpec::named("in", 1), now);
    sw.add_port(PortSpec::named("out", 2), now);
    sw.register(Box::new(SourceCounter::default()))
        .expect("one extension per id");
    let mut net = Network::new(now);
    let s = net.add_switch(sw);
    let ctl = net.connect(s);
    net.send(
        ctl,
        &encode(&Message::Hello(baton_openflow::hello::Hello::baton())),
    );
    let flow = v13::FlowMod::from_parts(
        v13::FlowModHead::default(),
        v13::Match13::all(),
        vec![Instruction::ApplyActions(vec![
            limit_action(3),
            Action::Output {
                port: PortNo(2),
                max_len: 0,
            },
        ])],
    );
    net.send(ctl, &encode(&Message::FlowMod(flow)));
    let (a, b) = ([2, 0, 0, 0, 0, 0xa], [2, 0, 0, 0, 0, 0xb]);
    for _ in 0..5 {
        net.inject(s, PortNo(1), &udp_frame(a, b, 9));
    }
    net.inject(s, PortNo(1), &udp_frame(b, a, 9));
    let delivered = net.take_output(s, PortNo(2)).len();
    net.recv(ctl);
    let ask = Message::Experimenter {
        experimenter: EXPERIMENTER,
        exp_type: GET_COUNTS,
        data: Vec::new(),
    };
    net.send(ctl, &encode(&ask));
    let reply = net.recv(ctl);
    let counts = match v13::decode(&reply) {
        Ok((_, Message::Experimenter { data, .. })) => decode_counts(&data),
        other => panic!("unexpected reply {other:?}"),
    };
    (counts, delivered)
}

#[allow(dead_code)]
fn main() {
    let (counts, delivered) = demo();
    for (mac, n) in &counts {
        println!("{mac}: {n} packets");
    }
    println!("{delivered} of 6 frames forwarded (limit 3 per source)");
}
