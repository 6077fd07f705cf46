//! `ofp_switch_config`, laid out the same in OpenFlow 1.0 and 1.3 and
//! re-exported by both version modules.

use crate::error::DecodeError;
use crate::wire::{Put, Reader};

/// `ofp_switch_config` (1.0.0 §5.3.2, 1.3.5 §7.3.2): the body of
/// GET_CONFIG_REPLY and SET_CONFIG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SwitchConfig {
    /// `flags`: the version's `config_flags` values.
    pub flags: u16,
    /// `miss_send_len`: bytes of a table-miss packet to send to the
    /// controller (1.3 `OFPCML_NO_BUFFER` for all).
    pub miss_send_len: u16,
}

impl SwitchConfig {
    /// Decodes the body.
    pub fn decode_body(r: &mut Reader<'_>) -> Result<SwitchConfig, DecodeError> {
        Ok(SwitchConfig {
            flags: r.u16("ofp_switch_config.flags")?,
            miss_send_len: r.u16("ofp_switch_config.miss_send_len")?,
        })
    }

    /// Appends the body.
    pub fn encode_body(&self, out: &mut Vec<u8>) {
        out.put_u16(self.flags);
        out.put_u16(self.miss_send_len);
    }
}
