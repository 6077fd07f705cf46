//! What a laboratory needs from the machine: root, and the tools of
//! `scripts/install-e2e-deps.sh`, which is run (once per process) when one
//! of them is missing.

use crate::error::{Error, Result};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The programs a laboratory runs, each with the Debian package that has
/// it (the script installs the same list).
pub const TOOLS: &[(&str, &str)] = &[
    ("ovs-vsctl", "openvswitch-switch"),
    ("ovs-vswitchd", "openvswitch-switch"),
    ("ovsdb-server", "openvswitch-switch"),
    ("ovsdb-tool", "openvswitch-switch"),
    ("ovs-ofctl", "openvswitch-switch"),
    ("ovs-testcontroller", "openvswitch-testcontroller"),
    ("ping", "iputils-ping"),
    ("ethtool", "ethtool"),
    ("ip", "iproute2"),
    ("ss", "iproute2"),
    ("tcpdump", "tcpdump"),
    ("unshare", "util-linux"),
    ("nsenter", "util-linux"),
    ("taskset", "util-linux"),
    ("openssl", "openssl"),
    ("python3", "python3"),
    ("etcd", "etcd-server"),
    ("etcdctl", "etcd-client"),
];

/// The script that installs [`TOOLS`].
const INSTALL_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scripts/install-e2e-deps.sh"
);

/// Directories searched before the caller's `PATH`: Open vSwitch's
/// daemons and `ip` live in `sbin`, which a non-login `PATH` may lack.
const SBIN_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The `PATH` every command of a laboratory runs with.
pub(crate) fn path() -> String {
    match std::env::var("PATH") {
        Ok(p) if !p.is_empty() => format!("{SBIN_PATH}:{p}"),
        _ => SBIN_PATH.to_string(),
    }
}

/// Whether `tool` is an executable file in one of [`path`]'s directories.
fn found(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path().split(':').any(|dir| {
        Path::new(dir)
            .join(tool)
            .metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// The tools of [`TOOLS`] that are missing.
pub fn missing_tools() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.0).filter(|t| !found(t)).collect()
}

/// Fails unless the process runs as root, saying why a lab needs it.
pub fn require_root() -> Result<()> {
    // SAFETY: geteuid(2) takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return Ok(());
    }
    Err(Error::new(
        "the end-to-end laboratory must run as root: it makes network namespaces, veth pairs \
         and Open vSwitch bridges (run the tests as root, e.g. in the project's CI container, \
         or `sudo -E env PATH=$PATH cargo test -p baton-netlab`)",
    ))
}

/// Makes sure every tool of [`TOOLS`] is there, running
/// `scripts/install-e2e-deps.sh` if one is missing; once per process (a
/// failure is remembered and returned again).
pub fn ensure_installed() -> Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        if missing_tools().is_empty() {
            return Ok(());
        }
        let out = Command::new("bash")
            .arg(INSTALL_SCRIPT)
            .env("PATH", path())
            .output()
            .map_err(|e| format!("could not run {INSTALL_SCRIPT}: {e}"))?;
        let still = missing_tools();
        if still.is_empty() {
            return Ok(());
        }
        Err(format!(
            "the laboratory needs {} and installing them failed: run {INSTALL_SCRIPT} as root \
             (exit status {:?})\nstdout:\n{}\nstderr:\n{}",
            still.join(", "),
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        ))
    })
    .clone()
    .map_err(Error::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbin_comes_first_and_the_callers_path_is_kept() {
        let p = path();
        assert!(p.starts_with("/usr/local/sbin:"));
        assert!(p.split(':').any(|d| d == "/usr/sbin"));
        assert!(found("sh"), "sh is on every PATH");
        assert!(!found("no-such-tool-netlab"));
    }

    #[test]
    fn the_install_script_lists_every_package() {
        let script =
            std::fs::read_to_string(INSTALL_SCRIPT).expect("the script is in the repository");
        for (tool, package) in TOOLS {
            assert!(
                script.contains(&format!("\"{tool}:{package}\"")),
                "{INSTALL_SCRIPT} should install {package} for {tool}"
            );
        }
    }
}
