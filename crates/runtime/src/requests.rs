//! Requests to a switch that expect an answer (statistics, barriers,
//! roles): the message goes out with a fresh xid, and the reply with that
//! xid comes back to whoever asked instead of going to the applications.
//! A multipart reply is gathered until its last part; an OFPT_ERROR with
//! the xid answers the request with the error. One request's reply is a
//! [`Reply`]; the replies of many (one per switch, say) can come on one
//! channel instead, a `Replies`, and be waited for against one deadline.

use crate::switch::SwitchId;
use crate::sync::lock;
use baton_openflow::neutral::Message;
use baton_openflow::{Xid, v10, v13};
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

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

impl RequestError {
    /// A short name for logs, metric labels and JSON: `gone`,
    /// `wrong_version`, `timed_out` or `refused`.
    pub fn label(&self) -> &'static str {
        match self {
            RequestError::Gone => "gone",
            RequestError::WrongVersion => "wrong_version",
            RequestError::TimedOut => "timed_out",
            RequestError::Refused(_) => "refused",
        }
    }
}

impl std::error::Error for RequestError {}

type Outcome = Result<Vec<Message>, RequestError>;

/// A request's outcome with the switch and xid it was asked of.
type Answer = (SwitchId, Xid, Outcome);

/// The reply to one request, once it comes.
#[derive(Debug)]
pub struct Reply {
    rx: Receiver<Answer>,
}

impl Reply {
    /// Waits up to `timeout` for the whole reply (every part of a
    /// multipart one). Do not wait from a handler of the same switch: its
    /// reply cannot arrive while its worker waits.
    pub fn wait(self, timeout: Duration) -> Outcome {
        match self.rx.recv_timeout(timeout) {
            Ok((_, _, r)) => r,
            Err(RecvTimeoutError::Timeout) => Err(RequestError::TimedOut),
            Err(RecvTimeoutError::Disconnected) => Err(RequestError::Gone),
        }
    }

    /// The reply if it has come.
    pub fn try_take(&self) -> Option<Outcome> {
        self.rx.try_recv().ok().map(|(_, _, r)| r)
    }
}

/// The replies to many requests, on one channel: each request is
/// expected with a tag (which switch, which step), and
/// [`Replies::next_until`] hands back the tag and outcome of whichever
/// answers next, so one thread waits on all of them against one
/// deadline.
pub(crate) struct Replies<T> {
    tx: Sender<Answer>,
    rx: Receiver<Answer>,
    open: HashMap<(SwitchId, Xid), T>,
}

impl<T> Replies<T> {
    /// None expected yet.
    pub fn new() -> Replies<T> {
        let (tx, rx) = channel();
        Replies {
            tx,
            rx,
            open: HashMap::new(),
        }
    }

    /// Expects the reply to the request `xid` about to be sent to switch
    /// `id`, tagged `tag`.
    pub fn expect(&mut self, requests: &Requests, id: SwitchId, xid: Xid, tag: T) {
        requests.register_to(id, xid, self.tx.clone());
        self.open.insert((id, xid), tag);
    }

    /// The next request answered (or failed), with its tag; `None` once
    /// none is open or at `deadline`.
    pub fn next_until(&mut self, deadline: Instant) -> Option<(T, Outcome)> {
        while !self.open.is_empty() {
            let left = deadline.checked_duration_since(Instant::now())?;
            // `self.tx` lives as long as `rx`: a disconnect cannot happen.
            let (id, xid, outcome) = self.rx.recv_timeout(left).ok()?;
            // An answer to a request no longer open (abandoned) is dropped.
            if let Some(tag) = self.open.remove(&(id, xid)) {
                return Some((tag, outcome));
            }
        }
        None
    }

    /// Gives up on the requests still open, so that late replies go
    /// where unrequested messages go: their tags.
    pub fn abandon(&mut self, requests: &Requests) -> Vec<T> {
        self.open
            .drain()
            .map(|((id, xid), tag)| {
                requests.forget(id, xid);
                tag
            })
            .collect()
    }
}

struct Pending {
    parts: Vec<Message>,
    done: Sender<Answer>,
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
        self.register_to(id, xid, done);
        Reply { rx }
    }

    /// Sends the reply with `xid` from switch `id` to `done` when it
    /// comes.
    fn register_to(&self, id: SwitchId, xid: Xid, done: Sender<Answer>) {
        let pending = Pending {
            parts: Vec::new(),
            done,
        };
        if lock(&self.pending).insert((id, xid), pending).is_none() {
            self.waiting.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// A request could not be sent.
    pub fn fail(&self, id: SwitchId, xid: Xid, why: RequestError) {
        if let Some(p) = self.take(id, xid) {
            let _ = p.done.send((id, xid, Err(why)));
        }
    }

    /// No one waits for the reply with `xid` from switch `id` any more.
    pub fn forget(&self, id: SwitchId, xid: Xid) {
        self.take(id, xid);
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
                let _ = p
                    .done
                    .send((id, xid, Err(RequestError::Refused(Box::new(msg)))));
            }
            return None;
        }
        p.parts.push(msg);
        if !more {
            let p = pending.remove(&(id, xid));
            drop(pending);
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            if let Some(p) = p {
                let _ = p.done.send((id, xid, Ok(p.parts)));
            }
        }
        None
    }

    /// Switch `id` is gone: its requests fail.
    pub fn switch_gone(&self, id: SwitchId) {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return;
        }
        let gone: Vec<(Xid, Pending)> = {
            let mut p = lock(&self.pending);
            let keys: Vec<_> = p.keys().filter(|(s, _)| *s == id).copied().collect();
            keys.into_iter()
                .filter_map(|k| Some((k.1, p.remove(&k)?)))
                .collect()
        };
        self.waiting.fetch_sub(gone.len(), Ordering::AcqRel);
        for (xid, p) in gone {
            let _ = p.done.send((id, xid, Err(RequestError::Gone)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barrier_reply() -> Message {
        Message::V13(v13::Message::BarrierReply)
    }

    #[test]
    fn many_replies_come_on_one_channel_in_the_order_they_arrive() {
        let requests = Requests::default();
        let (a, b, c) = (
            SwitchId::new(1, 0),
            SwitchId::new(2, 0),
            SwitchId::new(3, 0),
        );
        let mut replies = Replies::new();
        replies.expect(&requests, a, Xid(10), 'a');
        replies.expect(&requests, b, Xid(11), 'b');
        replies.expect(&requests, c, Xid(12), 'c');
        // Another switch's message with the same xid is not a reply.
        let stray = barrier_reply();
        assert_eq!(requests.offer(c, Xid(10), stray.clone()), Some(stray));
        assert_eq!(requests.offer(b, Xid(11), barrier_reply()), None);
        requests.switch_gone(a);
        let deadline = Instant::now() + Duration::from_secs(10);
        assert_eq!(
            replies.next_until(deadline),
            Some(('b', Ok(vec![barrier_reply()])))
        );
        assert_eq!(
            replies.next_until(deadline),
            Some(('a', Err(RequestError::Gone)))
        );
        // `c` never answers: the deadline ends the wait.
        assert_eq!(replies.next_until(Instant::now()), None);
        assert_eq!(replies.abandon(&requests), vec!['c']);
        // Its late reply goes where unrequested messages go.
        assert_eq!(
            requests.offer(c, Xid(12), barrier_reply()),
            Some(barrier_reply())
        );
        assert_eq!(requests.waiting.load(Ordering::Acquire), 0);
    }
}
