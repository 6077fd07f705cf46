//! Installing a path's flows: what `routing` and `bandwidth` both do once
//! they know the ports a host pair's packets leave each switch by.
//!
//! The flows go in last hop first, so a packet never outruns them; the
//! first hop's flow carries the packet-in's buffer (or the packet follows
//! in a PACKET_OUT), so the packet that asked for the path takes it.

use crate::views::{PortRef, Topology};
use baton_openflow::neutral::{
    self, ActionSpec, FlowSpec, MatchFields, MatchSpec, PacketOut, Payload,
};
use baton_openflow::{DatapathId, MacAddr, PortNo, Version, Xid};
use baton_runtime::{Network, PacketIn, SwitchCtx};

/// Where an application's messages to the switches of a path go: to the
/// switch whose packet-in it is handling through that switch's batch
/// (written with the rest of it), to the others through the network. All
/// the messages for one switch take the same way, so they arrive in the
/// order they were written.
pub(crate) struct Switches<'a, 'b, 'c> {
    net: &'a Network,
    topo: &'a Topology,
    here: Option<&'b mut SwitchCtx<'c>>,
}

impl<'a, 'b, 'c> Switches<'a, 'b, 'c> {
    /// The switches of `topo`, `here` the one whose packet-in is handled.
    pub fn new(
        net: &'a Network,
        topo: &'a Topology,
        here: Option<&'b mut SwitchCtx<'c>>,
    ) -> Switches<'a, 'b, 'c> {
        Switches { net, topo, here }
    }

    /// The switch whose packet-in is handled, if `dpid` is it.
    fn here(&mut self, dpid: DatapathId) -> Option<&mut SwitchCtx<'c>> {
        self.here.as_deref_mut().filter(|sw| sw.dpid() == dpid)
    }

    /// Adds a flow on switch `dpid` (tagged with the application's
    /// cookie); nothing if the switch is away or another member of the
    /// cluster masters it.
    pub fn add_flow(&mut self, dpid: DatapathId, flow: &FlowSpec<'_>) {
        match self.here(dpid) {
            Some(sw) => sw.add_flow(flow),
            None => {
                if let Some(id) = self.topo.switches.get(&dpid).and_then(|s| s.here()) {
                    let _ = self.net.add_flow(id, flow);
                }
            }
        }
    }

    /// Writes a message of the switch's version with a fresh xid to
    /// switch `dpid`; nothing if it is away.
    pub fn write(&mut self, dpid: DatapathId, write: impl FnOnce(&mut Vec<u8>, Version, Xid)) {
        match self.here(dpid) {
            Some(sw) => {
                let (version, xid) = (sw.version(), sw.xid());
                write(sw.out(), version, xid);
            }
            None => {
                if let Some(id) = self.topo.switches.get(&dpid).and_then(|s| s.here()) {
                    let _ = self.net.send_with(id, write);
                }
            }
        }
    }

    /// Deletes the flows of switch `dpid` that `match_` covers.
    pub fn delete_flows(&mut self, dpid: DatapathId, match_: &MatchSpec<'_>) {
        self.write(dpid, |out, version, xid| {
            neutral::encode_flow_delete(out, version, xid, match_, PortNo::ANY)
        });
    }

    /// Installs one flow per hop of `hops` (a switch and the port the path
    /// leaves it by, the last one the destination host's port), built by
    /// `flow` with the hop's output. When the first hop is the switch of
    /// `asked` (the packet-in that asked for the path), its flow carries
    /// the packet. A switch that is away is skipped: the packets it would
    /// have forwarded come back to the controller.
    pub fn install(
        &mut self,
        hops: &[PortRef],
        asked: Option<&PacketIn<'_>>,
        flow: impl Fn(usize) -> FlowSpec<'static>,
    ) {
        for (i, hop) in hops.iter().enumerate().rev() {
            let output = [ActionSpec::output(hop.port)];
            let spec = FlowSpec {
                actions: &output,
                ..flow(i)
            };
            match (asked, self.here(hop.dpid)) {
                (Some(pi), Some(sw)) if i == 0 => {
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
                _ => self.add_flow(hop.dpid, &spec),
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
