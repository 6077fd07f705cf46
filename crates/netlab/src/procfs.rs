//! What the laboratory reads from `/proc` of the machine: process trees
//! (to kill everything a command started), namespace identities (to check
//! that nothing of a lab outlives it) and TCP connection states (to count
//! switches connected to a controller without starting a process per poll).

use std::collections::HashMap;
use std::fs;

/// Every process id in `/proc` (the caller's PID namespace).
pub(crate) fn all_pids() -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The parent of `pid`, from `/proc/PID/stat` (whose second field, the
/// command name, may itself hold spaces and parentheses: the fields after
/// it are counted from the last `)`).
pub(crate) fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Every descendant of `pid` (children, their children, ...), parents
/// before their children.
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in all_pids() {
        if let Some(parent) = parent_of(p) {
            children.entry(parent).or_default().push(p);
        }
    }
    let mut out = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            out.push(c);
            next.push(c);
        }
    }
    out
}

/// The direct children of `pid`, from `/proc/PID/task/PID/children`.
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The inode that identifies the namespace of kind `kind` (`net`, `pid`,
/// `mnt`) of `pid`: two processes share the namespace when it is equal.
pub(crate) fn ns_inode(pid: u32, kind: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(format!("/proc/{pid}/ns/{kind}"))
        .ok()
        .map(|m| m.ino())
}

/// The command line of `pid`, its arguments joined by spaces.
pub(crate) fn cmdline(pid: u32) -> Option<String> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Some(args.join(" "))
}

/// Whether a process `pid` exists and is not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

/// TCP state ESTABLISHED in `/proc/net/tcp`'s `st` column.
const TCP_ESTABLISHED: &str = "01";

/// How many established TCP connections whose remote port is `port` the
/// network namespace of `pid` holds (IPv4 and IPv6): from the client's
/// side, one per switch connected to a controller listening on `port`.
/// This is what `ss -Htn state established '( dport = :PORT )'` counts,
/// read from `/proc/PID/net/tcp{,6}` so that a poll costs no process.
pub(crate) fn established_to_port(pid: u32, port: u16) -> usize {
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|f| fs::read_to_string(format!("/proc/{pid}/net/{f}")).ok())
        .map(|table| count_established(&table, port))
        .sum()
}

/// TCP state LISTEN in `/proc/net/tcp`'s `st` column.
const TCP_LISTEN: &str = "0A";

/// Whether something in the network namespace of `pid` listens on TCP
/// port `port` (IPv4 or IPv6).
pub(crate) fn listening_on(pid: u32, port: u16) -> bool {
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|f| fs::read_to_string(format!("/proc/{pid}/net/{f}")).ok())
        .any(|table| count_rows(&table, TCP_LISTEN, 1, port) > 0)
}

/// Counts the rows of a `/proc/net/tcp` table in state ESTABLISHED whose
/// remote address (`rem_address`, `HEXADDR:HEXPORT`) has port `port`.
fn count_established(table: &str, port: u16) -> usize {
    count_rows(table, TCP_ESTABLISHED, 2, port)
}

/// Counts the rows of a `/proc/net/tcp` table in state `state` whose
/// address in column `col` (1: local, 2: remote) has port `port`.
fn count_rows(table: &str, state: &str, col: usize, port: u16) -> usize {
    table
        .lines()
        .skip(1)
        .filter(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            cols.len() > 3
                && cols[3] == state
                && cols[col]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    == Some(port)
        })
        .count()
}

/// Sends `signal` to `pid`; a process already gone is not an error.
pub(crate) fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_established_rows_to_the_port() {
        // Two switches connected to 127.0.0.1:6653 (0x19FD), the
        // controller's two accepted sockets (local port 6653), one
        // connection in SYN_SENT and one to another port.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:19FD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 0100007F:A1B2 0100007F:19FD 01 00000000:00000000 00:00000000 00000000     0        0 2 1
   2: 0100007F:A1B3 0100007F:19FD 01 00000000:00000000 00:00000000 00000000     0        0 3 1
   3: 0100007F:19FD 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 4 1
   4: 0100007F:19FD 0100007F:A1B3 01 00000000:00000000 00:00000000 00000000     0        0 5 1
   5: 0100007F:A1B4 0100007F:19FD 02 00000000:00000000 00:00000000 00000000     0        0 6 1
   6: 0100007F:A1B5 0100007F:19FE 01 00000000:00000000 00:00000000 00000000     0        0 7 1
";
        assert_eq!(count_established(table, 6653), 2);
        assert_eq!(count_established(table, 6654), 1);
        assert_eq!(count_established(table, 80), 0);
        assert_eq!(count_rows(table, TCP_LISTEN, 1, 6653), 1);
        assert_eq!(count_rows(table, TCP_LISTEN, 1, 6654), 0);
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(alive(me));
        assert!(ns_inode(me, "net").is_some());
        assert!(cmdline(me).is_some_and(|c| !c.is_empty()));
        // `children` lists a thread's children: the shell's only thread.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .expect("sh runs");
        let sh = child.id();
        assert_eq!(parent_of(sh), Some(me));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let sleep = loop {
            if let Some(&p) = children_of(sh).first() {
                break p;
            }
            assert!(std::time::Instant::now() < deadline, "sh started no sleep");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(parent_of(sleep), Some(sh));
        let below = descendants(me);
        assert!(below.contains(&sh) && below.contains(&sleep), "{below:?}");
        assert!(!below.contains(&me));
        assert_eq!(ns_inode(sleep, "net"), ns_inode(me, "net"));
        signal(sleep, libc::SIGKILL);
        signal(sh, libc::SIGKILL);
        child.wait().expect("sh is reaped");
        assert!(!alive(sh));
    }
}
