//! The hub: every PACKET_IN is flooded out of every other port.

use baton_openflow::PortNo;
use baton_openflow::neutral::{ActionSpec, PacketOut, encode_packet_out};
use baton_runtime::{App, Flow, PacketInBatch};

/// Floods every packet; installs nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hub;

impl App for Hub {
    fn name(&self) -> &str {
        "hub"
    }

    fn packet_in(&self, batch: &mut PacketInBatch<'_>) {
        batch.for_each(|ev| {
            let pi = &ev.packet_in;
            let version = ev.switch.version();
            let xid = ev.switch.xid();
            let flood = [ActionSpec::Output {
                port: PortNo::FLOOD,
                max_len: 0,
            }];
            let po = PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &flood,
            };
            encode_packet_out(ev.switch.out(), version, xid, &po);
            Flow::Continue
        });
    }
}
