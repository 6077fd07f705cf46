//! Requests to a switch that expect an answer (statistics, barriers,
//! roles): the message goes out with a fresh xid, and the reply with that
//! xid comes back to whoever asked instead of going to the applications.
//! A multipart reply is gathered until its last part; an OFPT_ERROR with
//! the xid answers the request with the error.

use crate::switch::SwitchId;
use crate::sync::lock;
use baton_openflow::neutral::Message;
use baton_openflow::{Xid, v10, v13};
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// The switch is not connected, or disconnected before replying.
    Gone,
    /// The switch's version cannot carry this message.
    WrongVersion,
    /// No reply within the time allowed.
    TimedOut,
    /// The switch answered with an OFPT_ERROR.
    Refused(Box<Message>),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Gone => f.write_str("the switch is not connected"),
            RequestError::WrongVersion => f.write_str("not a message of the switch's version"),
            RequestError::TimedOut => f.write_str("the switch did not reply in time"),
            RequestError::Refused(e) => write!(f, "the switch refused the request: {e:?}"),
        }
    }
}

impl std::error::Error for RequestError {}

type Outcome = Result<Vec<Message>, RequestError>;

/// The reply to one request, once it comes.
#[derive(Debug)]
pub struct Reply {
    rx: Receiver<Outcome>,
}

impl Reply {
    /// Waits up to `timeout` for the whole reply (every part of a
    /// multipart one). Do not wait from a handler of the same switch: its
    /// reply cannot arrive while its worker waits.
    pub fn wait(self, timeout: Duration) -> Outcome {
        match self.rx.recv_timeout(timeout) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => Err(RequestError::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Err(RequestError::Gone),
        }
    }

    /// The reply if it has come.
    pub fn try_take(&self) -> Option<Outcome> {
        self.rx.try_recv().ok()
    }
}

struct Pending {
    parts: Vec<Message>,
    done: Sender<Outcome>,
}

/// The requests waiting for replies.
#[derive(Default)]
pub(crate) struct Requests {
    pending: Mutex<HashMap<(SwitchId, Xid), Pending>>,
    /// How many are waiting: lets the hot path skip the lock.
    waiting: AtomicUsize,
}

impl Requests {
    /// Waits for the reply with `xid` from switch `id`.
    pub fn register(&self, id: SwitchId, xid: Xid) -> Reply {
        let (done, rx) = channel();
        let mut p = lock(&self.pending);
        if p.insert(
            (id, xid),
            Pending {
                parts: Vec::new(),
                done,
            },
        )
        .is_none()
        {
            self.waiting.fetch_add(1, Ordering::AcqRel);
        }
        Reply { rx }
    }

    /// A request could not be sent.
    pub fn fail(&self, id: SwitchId, xid: Xid, why: RequestError) {
        if let Some(p) = self.take(id, xid) {
            let _ = p.done.send(Err(why));
        }
    }

    fn take(&self, id: SwitchId, xid: Xid) -> Option<Pending> {
        let p = lock(&self.pending).remove(&(id, xid))?;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        Some(p)
    }

    /// A message with `xid` from switch `id`: consumed if it answers a
    /// request (`None`), handed back otherwise.
    pub fn offer(&self, id: SwitchId, xid: Xid, msg: Message) -> Option<Message> {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return Some(msg);
        }
        let mut pending = lock(&self.pending);
        let Some(p) = pending.get_mut(&(id, xid)) else {
            return Some(msg);
        };
        let error = matches!(
            msg,
            Message::V10(v10::Message::Error(_)) | Message::V13(v13::Message::Error(_))
        );
        let more = match &msg {
            Message::V10(v10::Message::StatsReply(r)) => {
                r.flags & v10::stats::OFPSF_REPLY_MORE != 0
            }
            Message::V13(v13::Message::MultipartReply(r)) => r.more(),
            _ => false,
        };
        if error {
            let p = pending.remove(&(id, xid));
            drop(pending);
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            if let Some(p) = p {
                let _ = p.done.send(Err(RequestError::Refused(Box::new(msg))));
            }
            return None;
        }
        p.parts.push(msg);
        if !more {
            let p = pending.remove(&(id, xid));
            drop(pending);
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            if let Some(p) = p {
                let _ = p.done.send(Ok(p.parts));
            }
        }
        None
    }

    /// Switch `id` is gone: its requests fail.
    pub fn switch_gone(&self, id: SwitchId) {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return;
        }
        let gone: Vec<Pending> = {
            let mut p = lock(&self.pending);
            let keys: Vec<_> = p.keys().filter(|(s, _)| *s == id).copied().collect();
            keys.into_iter().filter_map(|k| p.remove(&k)).collect()
        };
        self.waiting.fetch_sub(gone.len(), Ordering::AcqRel);
        for p in gone {
            let _ = p.done.send(Err(RequestError::Gone));
        }
    }
}
