//! Why a switch was closed, as the operator sees it: [`Closed`] joins the
//! two kinds of reason, the session's or the controller's decision
//! ([`CloseReason`]: the switch hung up, spoke no OpenFlow, fell silent,
//! was replaced, the controller stops) and the transport's failure
//! ([`TransportError`], io's: a read or write error, a TLS failure, an
//! output backlog past the limit).
//!
//! They stay two types where they arise, so that the session knows
//! nothing of sockets and io nothing of OpenFlow; they meet only here,
//! where a switch is closed ([`crate::controller::Controller::close`]):
//! one [`Closed::label`] for `baton_connections_closed_total{reason}` and
//! the failure log, and `Display` for the log line.

use crate::io::TransportError;
use crate::session::CloseReason;
use std::fmt;

/// Why a switch is closed.
#[derive(Debug)]
pub(crate) enum Closed {
    /// The session or the controller decided it.
    Session(CloseReason),
    /// The socket failed, or TLS over it.
    Transport(TransportError),
}

impl Closed {
    /// The close for a session that gave up on its switch (`session`),
    /// where the transport may know the cause (`transport`): a switch is
    /// silent because its TLS handshake never finished, and that is what
    /// the operator should read, not the silence.
    pub fn join(session: CloseReason, transport: Option<TransportError>) -> Closed {
        match transport {
            Some(e) => Closed::Transport(e),
            None => Closed::Session(session),
        }
    }

    /// A short label for counting closes by reason (metrics, the failure
    /// log): `peer_closed`, `silent`, `tls`, ...
    pub fn label(&self) -> &'static str {
        match self {
            Closed::Session(r) => r.label(),
            Closed::Transport(e) => e.label(),
        }
    }
}

impl From<CloseReason> for Closed {
    fn from(r: CloseReason) -> Closed {
        Closed::Session(r)
    }
}

impl From<TransportError> for Closed {
    fn from(e: TransportError) -> Closed {
        Closed::Transport(e)
    }
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Closed::Session(r) => r.fmt(f),
            Closed::Transport(e) => e.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_handshake_the_transport_did_not_finish_explains_the_silence() {
        let silent = || CloseReason::Silent {
            for_: Duration::from_millis(300),
        };
        let unfinished = TransportError::TlsHandshakeUnfinished {
            after: Duration::from_millis(301),
        };
        let closed = Closed::join(silent(), Some(unfinished));
        assert_eq!(closed.label(), "tls");
        assert_eq!(closed.to_string(), "TLS: handshake unfinished after 301 ms");
        let closed = Closed::join(silent(), None);
        assert_eq!(closed.label(), "silent");
    }

    #[test]
    fn labels_are_the_metrics_labels_of_before_the_split() {
        let labels: Vec<_> = [
            Closed::from(CloseReason::PeerClosed),
            TransportError::Read(std::io::ErrorKind::ConnectionReset.into()).into(),
            TransportError::Write(std::io::ErrorKind::BrokenPipe).into(),
            TransportError::OutputOverflow.into(),
            TransportError::Tls(rustls::Error::DecryptError).into(),
            CloseReason::Replaced.into(),
            CloseReason::Stopping.into(),
        ]
        .iter()
        .map(Closed::label)
        .collect();
        assert_eq!(
            labels,
            [
                "peer_closed",
                "read_failed",
                "write_failed",
                "output_overflow",
                "tls",
                "replaced",
                "stopping"
            ]
        );
    }
}
