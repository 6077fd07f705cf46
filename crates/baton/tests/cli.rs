//! The `baton` binary's operator commands: `config check` on the example,
//! on a broken file and on TLS files good and bad, `run` with `show`
//! and `app` talking to it, and `bench --topology` checked against what
//! the API shows.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn baton() -> Command {
    Command::new(env!("CARGO_BIN_EXE_baton"))
}

/// `baton run` with one worker, its switch port and API on loopback
/// ports of the kernel's choosing.
fn run_on_loopback() -> Command {
    let mut cmd = baton();
    cmd.args([
        "run",
        "--listen",
        "127.0.0.1:0",
        "--api",
        "127.0.0.1:0",
        "--workers",
        "1",
    ]);
    cmd
}

#[test]
fn config_check_accepts_the_example_and_names_the_key_it_refuses() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/baton.toml");
    let out = baton().args(["config", "check", example]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(": ok: ") && said.contains("apps topology,devices,routing"),
        "{said}"
    );

    let bad = std::env::temp_dir().join(format!("baton-cli-{}.toml", std::process::id()));
    std::fs::write(&bad, "workers = 2\nscheduler = \"fifo\"\n").unwrap();
    let out = baton()
        .args(["config", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&bad);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(":2:13: key `scheduler`: unknown scheduler \"fifo\""),
        "{said}"
    );
}

#[test]
fn config_check_reads_the_tls_files_and_names_the_one_at_fault() {
    let dir = std::env::temp_dir().join(format!("baton-cli-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["baton".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cert = write("cert.pem", &cert.pem());
    let key = write("key.pem", &key.serialize_pem());
    let junk = write("junk.pem", "not PEM\n");
    let check = |key: &std::path::Path| {
        let file = write(
            "baton.toml",
            &format!(
                "listen_tls = [\"127.0.0.1:6654\"]\n[tls]\ncert = {cert:?}\nkey = {key:?}\nclient_ca = {cert:?}\n"
            ),
        );
        baton()
            .args(["config", "check"])
            .arg(&file)
            .output()
            .unwrap()
    };
    let good = check(&key);
    let bad = check(&junk);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(good.status.success(), "{good:?}");
    let said = String::from_utf8_lossy(&good.stdout);
    // TLS alone: no plain TCP on the default address.
    assert!(
        said.contains("switches on 127.0.0.1:6654 (TLS), "),
        "{said}"
    );
    assert_eq!(bad.status.code(), Some(1));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        said.contains(&format!("TLS: {}: no private key in it", junk.display())),
        "{said}"
    );
}

/// Kills the controller when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn show_and_app_talk_to_a_running_controller() {
    let child = run_on_loopback()
        .args(["--apps", "learning-switch", "--api-token", "t0k"])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    // The log names the API's address; the rest of it is drained, so the
    // controller never writes into a closed pipe.
    let mut log = BufReader::new(running.0.stderr.take().unwrap()).lines();
    let api = log
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            let at = l.find("API listening addr=")?;
            Some(l[at + "API listening addr=".len()..].trim().to_string())
        })
        .expect("the API's address in the log");
    std::thread::spawn(move || log.for_each(drop));
    let run = |args: &[&str]| {
        let out = baton().args(args).args(["--api", &api]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["show", "apps"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("learning-switch") && l.contains("running")),
        "{out}"
    );
    let (code, out, _) = run(&["show", "switches", "--json"]);
    assert_eq!((code, out.trim()), (Some(0), "[]"));
    let (code, _, err) = run(&["app", "stop", "learning-switch"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("needs its token") && err.contains("--token"),
        "{err}"
    );
    let (code, out, _) = run(&["app", "stop", "learning-switch", "--token", "t0k"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("stopped"), "{out}");
    let (code, out, _) = run(&[
        "app",
        "set",
        "learning-switch",
        "max_hosts=7",
        "--token",
        "t0k",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    assert!(out.contains("\"max_hosts\": 7"), "{out}");
    let (code, out, _) = run(&["show", "scheduler"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("scheduler fair"), "{out}");
    // A standalone instance: the API's 404 says so, and the client fails.
    let (code, out, err) = run(&["show", "cluster"]);
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(
        err.contains("not in a cluster (start it with --cluster) (HTTP 404)"),
        "{err}"
    );
}

/// Spawns `cmd` (a `baton run`) with its log piped: the controller, killed
/// when the test ends, and the log's lines.
fn spawn_logging(cmd: &mut Command) -> (Running, impl Iterator<Item = String> + Send + 'static) {
    let mut running = Running(cmd.stderr(Stdio::piped()).spawn().unwrap());
    let log = BufReader::new(running.0.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok);
    (running, log)
}

/// The controller's address for switches and its API's, read from its log.
fn addresses(log: &mut impl Iterator<Item = String>) -> (String, String) {
    let (mut openflow, mut api) = (None, None);
    for l in log {
        let after = |key: &str| {
            let rest = &l[l.find(key)? + key.len()..];
            Some(rest.split_whitespace().next()?.to_string())
        };
        openflow = openflow.or_else(|| after("baton running listen="));
        api = api.or_else(|| after("API listening addr="));
        if let (Some(o), Some(a)) = (&openflow, &api) {
            return (o.clone(), a.clone());
        }
    }
    panic!("the log ended before naming both addresses");
}

#[test]
fn a_closed_log_pipe_loses_the_lines_and_nothing_else() {
    let (mut running, mut log) = spawn_logging(
        baton()
            .args(["run", "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0"])
            .args(["--workers", "1", "--log", "debug"])
            .env_remove("RUST_LOG"),
    );
    let (openflow, api) = addresses(&mut log);
    // Whoever read the log has gone: every line from now on fails to be
    // written (EPIPE).
    drop(log);
    // Things worth a log line: a connection that sends garbage, and API
    // calls.
    for _ in 0..3 {
        use std::io::Write;
        let mut s = std::net::TcpStream::connect(&openflow).unwrap();
        let _ = s.write_all(&[0xff; 64]);
        let _ = std::io::Read::read(&mut s, &mut [0; 64]);
    }
    let out = baton()
        .args(["show", "apps", "--api", &api])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        // The default applications: the network services.
        String::from_utf8_lossy(&out.stdout).contains("routing"),
        "{out:?}"
    );
    assert!(
        running.0.try_wait().unwrap().is_none(),
        "the controller exited"
    );
}

#[test]
fn a_controller_whose_worker_is_busy_still_exits_after_the_grace() {
    // Each PACKET_IN burns a minute of the only worker.
    let (mut running, mut log) = spawn_logging(
        baton()
            .args(["run", "--listen", "127.0.0.1:0", "--api", "off"])
            .args(["--workers", "1"])
            .args(["--apps", "burn:60000000000,learning-switch"])
            .env("RUST_LOG", "info"),
    );
    let openflow = log
        .by_ref()
        .find_map(|l| {
            let rest = &l[l.find("baton running listen=")? + "baton running listen=".len()..];
            Some(rest.split_whitespace().next()?.to_string())
        })
        .expect("the switches' address in the log");
    let lines = std::thread::spawn(move || log.collect::<Vec<_>>());
    // One emulated switch; its first PACKET_IN keeps the worker busy.
    let bench = baton()
        .args(["bench", "--controller", &openflow, "--mode", "latency"])
        .args(["--switches", "1", "--duration", "1", "--warmup", "0"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&bench.stdout).contains("latency mode"),
        "{bench:?}"
    );
    let pid = running.0.id().to_string();
    let term = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(term.success());
    let status = running.0.wait().unwrap();
    let lines = lines.join().unwrap();
    assert_eq!(status.code(), Some(1), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("not stopped within the grace (a worker is still busy)")),
        "{lines:#?}"
    );
}

/// `baton bench --topology` against the default `baton run`: the links
/// and hosts the controller's API lists (what `baton show topology` and
/// `baton show hosts` print) are the emulated network's, every pair's
/// packets arrive, and a cut link is routed around.
#[test]
fn bench_topology_matches_what_the_api_shows() {
    let (_running, mut log) = spawn_logging(&mut run_on_loopback());
    let (openflow, api) = addresses(&mut log);
    std::thread::spawn(move || log.for_each(drop));
    let json = std::env::temp_dir().join(format!("bench-topology-{}.json", std::process::id()));
    let out = baton()
        .args(["bench", "--controller", &openflow, "--api", &api])
        .args([
            "--topology",
            "fat-tree:4",
            "--pairs",
            "half-way",
            "--of",
            "13",
        ])
        .args(["--duration", "3", "--warmup", "1"])
        .args(["--events", "at 1s cut a1-c1"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let (report, seen) = (&written["report"], &written["api"]);
    // 32 links both ways; the 16 hosts, each where the emulator put it.
    assert_eq!(seen["links_expected"], 64, "{stdout}");
    assert!(seen["links_known"].is_object(), "never all links: {stdout}");
    assert_eq!(seen["links_extra"], 0, "{stdout}");
    assert_eq!(seen["hosts_expected"], 16, "{stdout}");
    assert!(seen["hosts_known"].is_object(), "never all hosts: {stdout}");
    assert_eq!(seen["hosts_missing"], 0, "{stdout}");
    assert_eq!(report["pairs_set_up"], 16, "{stdout}");
    let event = &report["events"][0];
    assert_eq!(event["unrecovered"], 0, "{stdout}");
    assert_eq!(event["unreachable"], 0, "{stdout}");
}
