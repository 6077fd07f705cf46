//! A lab's life: it refuses to start without root, saying why, and
//! nothing of it outlives it: not when it is dropped, and not when the
//! process that made it is killed with SIGKILL. Checked from the machine's
//! own namespaces: no process in the lab's namespaces or naming its
//! directory (the OVS daemons do), no mount of its namespaces, and the
//! machine's own `ip link` and `ip netns` lists unchanged. Run as root.

use baton_netlab::{Cmd, Lab, LabInfo, SwitchOptions, Topology, leftovers, sweep_stale};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);

/// The machine's own interfaces (names), `ip netns list`, and whether
/// `/run/netns` exists, seen from the test's namespaces.
fn machine_state() -> (Vec<String>, String, bool) {
    let ip = |args: &[&str]| {
        let out = Command::new("ip")
            .args(args)
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .output()
            .expect("ip runs");
        assert!(out.status.success(), "ip {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let mut links: Vec<String> = ip(&["-o", "link", "show"])
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|name| name.split('@').next().unwrap().to_string())
        .collect();
    links.sort();
    (
        links,
        ip(&["netns", "list"]),
        std::path::Path::new("/run/netns").exists(),
    )
}

/// What a running lab must show, so that an empty [`leftovers`] later
/// means it is gone rather than that the check sees nothing.
fn assert_visible(left: &[String]) {
    for what in [
        "ovs-vswitchd",
        "ovsdb-server",
        "ovs-testcontroller",
        "directory",
    ] {
        assert!(
            left.iter().any(|l| l.contains(what)),
            "{what} not seen in {left:#?}"
        );
    }
}

#[test]
fn a_dropped_lab_leaves_nothing() {
    let machine = machine_state();
    let lab = Lab::new().unwrap();
    let opts = SwitchOptions::new().controller("tcp:127.0.0.1:6653");
    lab.build(&Topology::linear(2), &opts).unwrap();
    let _ctl = lab
        .spawn(Cmd::new("ovs-testcontroller").arg("ptcp:6653"))
        .unwrap();
    let _sniffer = lab
        .spawn(Cmd::new("tcpdump").args(["-ni", "h1-eth0"]).host("h1"))
        .unwrap();
    lab.wait_controller_connections(2, 10 * SECOND).unwrap();
    let info = lab.info();
    assert_eq!(info.host_net_ns.len(), 2);
    let alive = leftovers(&info);
    assert_visible(&alive);
    assert!(alive.iter().any(|l| l.contains("tcpdump")), "{alive:#?}");
    assert_eq!(
        machine_state(),
        machine,
        "the lab's interfaces are in its own namespaces"
    );

    drop(lab);
    assert_eq!(leftovers(&info), Vec::<String>::new());
    assert_eq!(machine_state(), machine);
}

/// Reads `netlab hold`'s description of its lab, up to `ready`.
fn read_hold_info(out: impl std::io::Read + Send + 'static) -> LabInfo {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut info = LabInfo {
        dir: PathBuf::new(),
        holder_pid: 0,
        net_ns: 0,
        pid_ns: 0,
        host_net_ns: Vec::new(),
    };
    let deadline = Instant::now() + 60 * SECOND;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("netlab hold prints `ready` within 60 s");
        let value = |key: &str| line.strip_prefix(key).map(str::to_string);
        if line == "ready" {
            return info;
        } else if let Some(d) = value("dir=") {
            info.dir = PathBuf::from(d);
        } else if let Some(p) = value("holder=") {
            info.holder_pid = p.parse().unwrap();
        } else if let Some(n) = value("netns=") {
            info.net_ns = n.parse().unwrap();
        } else if let Some(n) = value("pidns=") {
            info.pid_ns = n.parse().unwrap();
        } else if let Some(h) = value("host=") {
            let (name, ns) = h.split_once(" netns=").unwrap();
            info.host_net_ns
                .push((name.to_string(), ns.parse().unwrap()));
        }
    }
}

#[test]
fn a_lab_whose_process_is_killed_leaves_nothing() {
    let machine = machine_state();
    // Another process makes the lab (the `netlab` binary of this crate),
    // so that this test can kill it without a chance to clean up.
    let mut holder = Command::new(env!("CARGO_BIN_EXE_netlab"))
        .args(["hold", "linear:2", "--controller", "tcp:127.0.0.1:6653"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("netlab hold starts");
    let info = read_hold_info(holder.stdout.take().unwrap());
    // Something for the lab to run besides OVS: a controller.
    let ctl = Command::new("nsenter")
        .arg(format!("--target={}", info.holder_pid))
        .args([
            "--net",
            "--mount",
            "--pid",
            "--",
            "ovs-testcontroller",
            "ptcp:6653",
        ])
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        // Its control socket: /var/run is the lab's own empty tmpfs.
        .env("OVS_RUNDIR", info.dir.join("run"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nsenter starts");
    let deadline = Instant::now() + 10 * SECOND;
    while !leftovers(&info)
        .iter()
        .any(|l| l.contains("ovs-testcontroller"))
    {
        assert!(
            Instant::now() < deadline,
            "ovs-testcontroller never ran in the lab"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_visible(&leftovers(&info));

    // SIGKILL: `netlab` gets no chance to clean up.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let start = Instant::now();
    let only_dir = vec![format!("directory {}", info.dir.display())];
    let mut left = leftovers(&info);
    while left != only_dir && start.elapsed() < 20 * SECOND {
        std::thread::sleep(Duration::from_millis(10));
        left = leftovers(&info);
    }
    eprintln!(
        "the killed lab's processes were gone {:.3} s after SIGKILL",
        start.elapsed().as_secs_f64()
    );
    assert_eq!(left, only_dir, "all but the directory is gone");
    let mut ctl = ctl;
    assert!(ctl.wait().is_ok(), "the nsenter into the dead lab ended");

    // The next lab (or sweep_stale) removes the directory.
    sweep_stale();
    assert!(!info.dir.exists());
    assert_eq!(leftovers(&info), Vec::<String>::new());
    assert_eq!(machine_state(), machine);
}

#[test]
fn without_root_a_lab_refuses_to_start_and_says_why() {
    // A copy of `netlab` that user nobody may run, wherever the build is.
    let dir = std::env::temp_dir().join(format!("netlab-nobody-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("netlab");
    std::fs::copy(env!("CARGO_BIN_EXE_netlab"), &exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [&dir, &exe] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args(["hold", "single:1"])
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs");
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("must run as root"), "{stderr}");
}
