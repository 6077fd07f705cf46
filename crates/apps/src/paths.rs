//! Installing a path's flows: what `routing` and `bandwidth` both do once
//! they know the ports a host pair's packets leave each switch by.
//!
//! The flows go in last hop first, so a packet never outruns them; the
//! first hop's flow carries the packet-in's buffer (or the packet follows
//! in a PACKET_OUT), so the packet that asked for the path takes it.

use crate::views::{PortRef, Topology};
use baton_openflow::MacAddr;
use baton_openflow::neutral::{ActionSpec, FlowSpec, MatchFields, MatchSpec, PacketOut, Payload};
use baton_runtime::{Network, PacketIn, SwitchCtx};

/// Installs one flow per hop of `hops` (a switch and the port the path
/// leaves it by, the last one the destination host's port), built by
/// `flow` with the hop's output. When the first hop is the switch of
/// `asked` (the packet-in that asked for the path), its flow goes with
/// the switch's batch and carries the packet; the other switches, found
/// in `topo`, get theirs through `net`. A switch that is away is skipped:
/// the packets it would have forwarded come back to the controller.
pub(crate) fn install(
    net: &Network,
    topo: &Topology,
    hops: &[PortRef],
    mut asked: Option<(&mut SwitchCtx<'_>, &PacketIn<'_>)>,
    flow: impl Fn(usize) -> FlowSpec<'static>,
) {
    for (i, hop) in hops.iter().enumerate().rev() {
        let output = [ActionSpec::output(hop.port)];
        let spec = FlowSpec {
            actions: &output,
            ..flow(i)
        };
        match asked.as_mut() {
            Some((sw, pi)) if i == 0 && sw.dpid() == hop.dpid => {
                sw.add_flow(&FlowSpec {
                    buffer_id: pi.buffer_id(),
                    ..spec
                });
                if pi.buffer_id().is_none() {
                    sw.packet_out(&PacketOut {
                        payload: Payload::Frame(pi.data()),
                        in_port: pi.in_port(),
                        actions: &output,
                    });
                }
            }
            _ => {
                if let Some(s) = topo.switches.get(&hop.dpid) {
                    let _ = net.add_flow(s.id, &spec);
                }
            }
        }
    }
}

/// The match of a path's flow from host `src` to host `dst`. Flows are
/// per pair, as Floodlight's Forwarding installs them, so that every host
/// that sends is seen once by the controller (and `devices` learns it):
/// with flows per destination only, a host that only answers hosts that
/// already have flows towards them would never be learnt.
pub(crate) fn between(src: MacAddr, dst: MacAddr) -> MatchSpec<'static> {
    MatchSpec::Fields(MatchFields {
        eth_src: Some(src),
        eth_dst: Some(dst),
        ..MatchFields::ANY
    })
}
