//! In-process ports for a switch running on its own thread ([`Runner`]):
//! a test holds a [`PortsHandle`], injects frames on a port and waits for
//! what comes out of others, while real controllers or tools
//! (`ovs-ofctl`) talk to the switch over TCP.
//!
//! [`Runner`]: super::Runner

use super::Backend;
use crate::datapath::Transmit;
use crate::switch::Switch;
use baton_openflow::types::PortNo;
use mio::{Registry, Waker};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Shared {
    rx: Mutex<VecDeque<(PortNo, Vec<u8>)>>,
    tx: Mutex<BTreeMap<PortNo, VecDeque<Vec<u8>>>>,
    sent: Condvar,
    waker: OnceLock<Arc<Waker>>,
    links: Mutex<BTreeMap<PortNo, bool>>,
}

/// The backend half: give it to the [`super::Runner`].
pub struct SharedPorts {
    shared: Arc<Shared>,
    tx: Out,
}

/// The test's half.
#[derive(Clone)]
pub struct PortsHandle {
    shared: Arc<Shared>,
}

struct Out(Arc<Shared>);

impl Transmit for Out {
    fn transmit(&mut self, port: PortNo, frame: &[u8]) {
        if let Ok(mut tx) = self.0.tx.lock() {
            tx.entry(port).or_default().push_back(frame.to_vec());
        }
        self.0.sent.notify_all();
    }
}

/// A pair of in-process port halves.
pub fn shared_ports() -> (SharedPorts, PortsHandle) {
    let shared = Arc::new(Shared::default());
    (
        SharedPorts {
            shared: shared.clone(),
            tx: Out(shared.clone()),
        },
        PortsHandle { shared },
    )
}

impl PortsHandle {
    /// A frame arrives on `port`.
    pub fn inject(&self, port: PortNo, frame: &[u8]) {
        if let Ok(mut rx) = self.shared.rx.lock() {
            rx.push_back((port, frame.to_vec()));
        }
        if let Some(w) = self.shared.waker.get() {
            let _ = w.wake();
        }
    }

    /// Takes the frames that left through `port` so far.
    pub fn take_output(&self, port: PortNo) -> Vec<Vec<u8>> {
        self.shared
            .tx
            .lock()
            .map(|mut tx| {
                tx.get_mut(&port)
                    .map(|q| q.drain(..).collect())
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    /// Waits up to `timeout` for at least `n` frames out of `port`, then
    /// takes what is there.
    pub fn wait_output(&self, port: PortNo, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        let Ok(mut tx) = self.shared.tx.lock() else {
            return Vec::new();
        };
        loop {
            let have = tx.get(&port).map_or(0, VecDeque::len);
            let now = Instant::now();
            if have >= n || now >= deadline {
                return tx
                    .get_mut(&port)
                    .map(|q| q.drain(..).collect())
                    .unwrap_or_default();
            }
            tx = match self.shared.sent.wait_timeout(tx, deadline - now) {
                Ok((g, _)) => g,
                Err(_) => return Vec::new(),
            };
        }
    }

    /// Sets a port's link state, as the runner's next link poll will see
    /// it.
    pub fn set_link(&self, port: PortNo, up: bool) {
        if let Ok(mut l) = self.shared.links.lock() {
            l.insert(port, up);
        }
    }
}

impl Backend for SharedPorts {
    fn register(
        &mut self,
        _registry: &Registry,
        _first: usize,
        waker: &Arc<Waker>,
    ) -> io::Result<usize> {
        let _ = self.shared.waker.set(waker.clone());
        Ok(0)
    }

    fn on_readable(&mut self, _index: usize, _now: Instant, _sw: &mut Switch) {}

    fn on_wake(&mut self, now: Instant, sw: &mut Switch) {
        let frames: Vec<_> = match self.shared.rx.lock() {
            Ok(mut rx) => rx.drain(..).collect(),
            Err(_) => return,
        };
        for (port, frame) in frames {
            sw.receive(now, port, &frame, &mut self.tx);
        }
    }

    fn transmit(&mut self) -> &mut dyn Transmit {
        &mut self.tx
    }

    fn flush(&mut self) {}

    fn links(&mut self) -> Vec<(PortNo, bool)> {
        self.shared
            .links
            .lock()
            .map(|l| l.iter().map(|(p, u)| (*p, *u)).collect())
            .unwrap_or_default()
    }
}
