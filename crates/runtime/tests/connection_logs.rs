//! What the log says about connections (issue 22 §4): a datapath id taken
//! over by a new connection is a warning naming both peers; a flood of
//! connections that fail before their handshake makes a few lines, not
//! one each, while the counters count every one.

mod support;

use baton_openflow::Version;
use baton_runtime::Runtime;
use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex, OnceLock};
use support::{TestSwitch, wait_for};

/// Everything logged by this test binary, in text.
fn logs() -> String {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    let buf = LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let to = buf.clone();
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || Sink(to.clone()))
            .init();
        buf
    });
    String::from_utf8_lossy(&buf.lock().unwrap()).into_owned()
}

/// Appends to the shared log.
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn start() -> Runtime {
    logs();
    support::start_quiet(1, Vec::new())
}

#[test]
fn a_datapath_id_taken_over_is_a_warning_naming_both_peers() {
    let rt = start();
    let addr = rt.local_addrs()[0];
    let mut old = TestSwitch::connect(addr, Version::V10, 0x7a4e);
    let new = TestSwitch::connect(addr, Version::V13, 0x7a4e);
    assert!(old.closed_by_controller());
    let (old_peer, new_peer) = (
        old.stream.local_addr().unwrap(),
        new.stream.local_addr().unwrap(),
    );
    let logs = logs();
    let line = logs
        .lines()
        .find(|l| l.contains("datapath id claimed by a new connection"))
        .unwrap_or_else(|| panic!("no takeover line in:\n{logs}"));
    assert!(line.contains(" WARN "), "{line}");
    assert!(line.contains(&format!("old_peer={old_peer}")), "{line}");
    assert!(line.contains(&format!("new_peer={new_peer}")), "{line}");
    rt.stop();
}

#[test]
fn a_flood_of_failed_connections_is_not_logged_one_by_one_but_counted() {
    const N: u64 = 40;
    let rt = start();
    let addr = rt.local_addrs()[0];
    let control = rt.control();
    for i in 0..N {
        let mut s = TcpStream::connect(addr).expect("connect");
        // Half begin with something other than a HELLO, half say nothing.
        if i % 2 == 0 {
            // A whole message, so that it is refused as soon as read.
            let features_request = [1, 5, 0, 8, 0, 0, 0, 1];
            s.write_all(&features_request).unwrap();
        }
        drop(s);
    }
    let closed = || -> u64 { control.stats().closed.iter().map(|(_, n)| n).sum() };
    wait_for("every connection closed and counted", || closed() == N);
    let lines = logs()
        .lines()
        .filter(|l| l.contains("connection closed before the handshake finished"))
        .count() as u64;
    // The first few are logged, then the limit holds (exactly five per
    // 10 s window: see the unit tests on synthetic time).
    assert!((1..N).contains(&lines), "{lines} lines for {N} connections");
    rt.stop();
}
