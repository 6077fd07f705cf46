//! The hub: every PACKET_IN is flooded out of every other port.

use baton_openflow::PortNo;
use baton_openflow::neutral::{ActionSpec, PacketOut};
use baton_runtime::{App, PacketInBatch, SwitchCtx};

/// Floods every packet; installs nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hub;

const FLOOD: [ActionSpec; 1] = [ActionSpec::Output {
    port: PortNo::FLOOD,
    max_len: 0,
}];

impl App for Hub {
    type Switch = ();

    fn name(&self) -> &str {
        "hub"
    }

    fn switch_up(&self, _sw: &mut SwitchCtx<'_>) {}

    fn packet_in(&self, batch: &mut PacketInBatch<'_, ()>) {
        batch.for_each(|sw, _, pi| {
            sw.packet_out(&PacketOut {
                payload: pi.payload(),
                in_port: pi.in_port(),
                actions: &FLOOD,
            });
        });
    }
}
