//! What identifies a laboratory from outside ([`LabInfo`]), what of it
//! remains after it ended ([`leftovers`]), and its directory on the
//! machine: made under `$TMPDIR/baton-netlab/<test pid>-<n>`, removed when
//! the lab is closed, and swept by the next lab when the test process that
//! made it was killed ([`sweep_stale`]).

use crate::error::{Context, Result};
use crate::procfs;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// How a laboratory can be recognised from the machine's own namespaces,
/// to check that nothing of it is left ([`leftovers`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabInfo {
    /// Its directory (OVS database, sockets, logs).
    pub dir: PathBuf,
    /// PID 1 of its PID namespace, as the machine sees it.
    pub holder_pid: u32,
    /// The inode of its network namespace (`/proc/PID/ns/net`).
    pub net_ns: u64,
    /// The inode of its PID namespace.
    pub pid_ns: u64,
    /// Each host's name and the inode of its network namespace.
    pub host_net_ns: Vec<(String, u64)>,
}

/// The directory all laboratories' directories are made in.
pub fn labs_root() -> PathBuf {
    std::env::temp_dir().join("baton-netlab")
}

/// Makes a new laboratory's directory, `<root>/<pid>-<n>`, with `run`,
/// `log` and `db` in it.
pub(crate) fn new_lab_dir() -> Result<PathBuf> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = labs_root().join(format!("{}-{n}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir).context(|| format!("removing the stale {}", dir.display()))?;
    }
    for sub in ["run", "log", "db"] {
        fs::create_dir_all(dir.join(sub)).context(|| format!("making {}", dir.display()))?;
    }
    Ok(dir)
}

/// Removes the directories of laboratories whose test process is gone
/// (killed before it could clean up); returns them. The processes,
/// namespaces and interfaces of such a lab went with its test process.
pub fn sweep_stale() -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(labs_root()) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let owner = name
            .to_str()
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        let stale = owner.is_some_and(|pid| !procfs::alive(pid));
        if stale && fs::remove_dir_all(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// What remains of a laboratory, one line each: processes in its
/// namespaces or naming its directory (the OVS daemons do), mounts of its
/// namespaces, its directory. Empty when it is entirely gone.
pub fn leftovers(info: &LabInfo) -> Vec<String> {
    let dir = info.dir.to_string_lossy().into_owned();
    let nets: Vec<u64> = std::iter::once(info.net_ns)
        .chain(info.host_net_ns.iter().map(|h| h.1))
        .collect();
    let mut out = Vec::new();
    for pid in procfs::all_pids() {
        if pid == std::process::id() || !procfs::alive(pid) {
            continue;
        }
        let cmd = procfs::cmdline(pid).unwrap_or_default();
        let why = if procfs::ns_inode(pid, "pid") == Some(info.pid_ns) {
            "in the lab's PID namespace"
        } else if procfs::ns_inode(pid, "net").is_some_and(|n| nets.contains(&n)) {
            "in a network namespace of the lab"
        } else if cmd.contains(&dir) {
            "naming the lab's directory"
        } else {
            continue;
        };
        out.push(format!("process {pid} ({cmd}) {why}"));
    }
    for pid in [std::process::id(), 1] {
        let mounts = fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap_or_default();
        for line in mounts.lines() {
            if nets.iter().any(|n| line.contains(&format!("net:[{n}]"))) {
                out.push(format!("mount of a lab namespace: {line}"));
            }
        }
    }
    if Path::new(&dir).exists() {
        out.push(format!("directory {dir}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_owners_directory_is_swept_and_a_live_ones_kept() {
        // A pid that no process has: beyond the kernel's maximum.
        let dead = labs_root().join("4194305-0");
        let live = labs_root().join(format!("{}-4242", std::process::id()));
        for d in [&dead, &live] {
            fs::create_dir_all(d.join("run")).unwrap();
        }
        let removed = sweep_stale();
        assert!(removed.contains(&dead), "{removed:?}");
        assert!(!dead.exists());
        assert!(live.exists());
        fs::remove_dir_all(&live).unwrap();
    }

    #[test]
    fn a_lab_that_never_was_leaves_only_what_exists() {
        let info = LabInfo {
            dir: PathBuf::from("/nonexistent/baton-netlab-test"),
            holder_pid: 4194305,
            net_ns: 1,
            pid_ns: 1,
            host_net_ns: vec![("h1".into(), 2)],
        };
        assert_eq!(leftovers(&info), Vec::<String>::new());
        let here = LabInfo {
            net_ns: procfs::ns_inode(std::process::id(), "net").unwrap(),
            ..info
        };
        assert!(
            !leftovers(&here).is_empty(),
            "the test's own namespace has other processes"
        );
    }
}
