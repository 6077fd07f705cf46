//! The `baton` binary's operator commands: `config check` on the example
//! and on a broken file, and `run` with `show` and `app` talking to it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn baton() -> Command {
    Command::new(env!("CARGO_BIN_EXE_baton"))
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
    let child = baton()
        .args([
            "run",
            "--listen",
            "127.0.0.1:0",
            "--api",
            "127.0.0.1:0",
            "--workers",
            "1",
        ])
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
}
