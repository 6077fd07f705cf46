//! Extending the switch without forking it (Mirage §III-B: "code hooks
//! for applications to control and modify default switching
//! functionality ... as OpenFlow vendor-specific messages").
//!
//! An embedding program registers [`Extension`]s with the switch. Each
//! claims one experimenter (1.0: vendor) id and may provide:
//! - a **packet hook**, [`Extension::on_packet`], called for every frame
//!   a port receives, before the flow tables; it may drop the frame;
//! - **experimenter messages**, [`Extension::message`]: OFPT_VENDOR /
//!   OFPT_EXPERIMENTER messages and vendor / experimenter statistics
//!   (multipart) requests with its id are handed to it, and its answer is
//!   sent back in the same form;
//! - **extra actions**, [`Extension::check_action`] and
//!   [`Extension::apply_action`]: OFPAT_VENDOR / OFPAT_EXPERIMENTER
//!   actions with its id are checked when a flow or packet-out names
//!   them, and run when a packet meets them.
//!
//! In 1.0 a vendor message has no `exp_type` field; following Nicira's
//! convention the first four bytes after the vendor id are taken as the
//! subtype and given as `exp_type`.

use crate::error::OfError;
use baton_openflow::Version;
use baton_openflow::packet::FlowKey;
use baton_openflow::types::PortNo;
use std::time::Instant;

/// What a hook or an extension action decides for a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go on processing.
    Continue,
    /// Drop the packet here.
    Drop,
}

/// What an extension sees of a packet.
#[derive(Debug, Clone, Copy)]
pub struct PacketContext<'a> {
    /// The port it arrived on.
    pub in_port: PortNo,
    /// Its parsed fields (as received, before any action).
    pub key: &'a FlowKey,
    /// The switch's clock.
    pub now: Instant,
}

/// An experimenter request for an extension.
#[derive(Debug, Clone, Copy)]
pub struct ExperimenterMsg<'a> {
    /// The connection's version.
    pub version: Version,
    /// `exp_type` (1.0: the first four bytes after the vendor id).
    pub exp_type: u32,
    /// The bytes after `exp_type`.
    pub data: &'a [u8],
}

/// An extension's answer to an experimenter request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimenterReply {
    /// `exp_type` of the reply.
    pub exp_type: u32,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// A switch extension. Every method but [`Extension::experimenter`] has a
/// default that declines.
pub trait Extension: Send {
    /// The experimenter (vendor) id this extension answers for.
    fn experimenter(&self) -> u32;

    /// Called for every received frame before the flow tables.
    fn on_packet(&mut self, _ctx: &PacketContext<'_>, _frame: &[u8]) -> Verdict {
        Verdict::Continue
    }

    /// Answers an experimenter message or statistics request; `Ok(None)`
    /// sends nothing back. The default refuses with
    /// `OFPBRC_BAD_EXP_TYPE` / `OFPBRC_BAD_SUBTYPE`.
    fn message(
        &mut self,
        _msg: &ExperimenterMsg<'_>,
    ) -> Result<Option<ExperimenterReply>, OfError> {
        Err(OfError::BadExpType)
    }

    /// Checks the body of one of its actions when a flow or packet-out
    /// names it. The default refuses with `OFPBAC_BAD_EXP_TYPE`.
    fn check_action(&self, _data: &[u8]) -> Result<(), OfError> {
        Err(OfError::BadActionExpType)
    }

    /// Runs one of its actions on `frame` (which it may rewrite).
    fn apply_action(
        &mut self,
        _ctx: &PacketContext<'_>,
        _data: &[u8],
        _frame: &mut Vec<u8>,
    ) -> Verdict {
        Verdict::Continue
    }
}

/// Two extensions claimed the same experimenter id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DuplicateExperimenter(pub u32);

impl std::fmt::Display for DuplicateExperimenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "experimenter id 0x{:08x} is already registered", self.0)
    }
}

impl std::error::Error for DuplicateExperimenter {}

/// The registered extensions.
#[derive(Default)]
pub struct Extensions {
    list: Vec<Box<dyn Extension>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|e| e.experimenter()))
            .finish()
    }
}

impl Extensions {
    /// Adds an extension.
    pub fn register(&mut self, ext: Box<dyn Extension>) -> Result<(), DuplicateExperimenter> {
        let id = ext.experimenter();
        if self.find(id).is_some() {
            return Err(DuplicateExperimenter(id));
        }
        self.list.push(ext);
        Ok(())
    }

    /// True when none is registered (the per-packet hook is then free).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The index of the extension for `experimenter`.
    pub fn find(&self, experimenter: u32) -> Option<usize> {
        self.list
            .iter()
            .position(|e| e.experimenter() == experimenter)
    }

    /// Checks an action body with extension `index`.
    pub fn check_action(&self, index: usize, data: &[u8]) -> Result<(), OfError> {
        self.list
            .get(index)
            .ok_or(OfError::BadActionExperimenter)?
            .check_action(data)
    }

    /// Runs every packet hook; the first `Drop` wins.
    pub fn on_packet(&mut self, ctx: &PacketContext<'_>, frame: &[u8]) -> Verdict {
        for e in &mut self.list {
            if e.on_packet(ctx, frame) == Verdict::Drop {
                return Verdict::Drop;
            }
        }
        Verdict::Continue
    }

    /// Hands an experimenter request to the extension for `experimenter`
    /// (`OFPBRC_BAD_EXPERIMENTER` when there is none).
    pub fn message(
        &mut self,
        experimenter: u32,
        msg: &ExperimenterMsg<'_>,
    ) -> Result<Option<ExperimenterReply>, OfError> {
        let i = self.find(experimenter).ok_or(OfError::BadExperimenter)?;
        self.list[i].message(msg)
    }

    /// Runs action `data` of extension `index`.
    pub fn apply_action(
        &mut self,
        index: usize,
        ctx: &PacketContext<'_>,
        data: &[u8],
        frame: &mut Vec<u8>,
    ) -> Verdict {
        match self.list.get_mut(index) {
            Some(e) => e.apply_action(ctx, data, frame),
            None => Verdict::Continue,
        }
    }
}
