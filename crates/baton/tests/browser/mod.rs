//! A headless Chromium for tests, driven over the Chrome DevTools Protocol
//! (CDP) on a pipe: `chromium --remote-debugging-pipe` reads commands on
//! its file descriptor 3 and writes replies and events on 4, each a JSON
//! object ended by a NUL byte. No WebDriver, no Node, no WebSocket: only
//! `serde_json`.
//!
//! The browser runs inside a laboratory (`Lab::spawn`), where the
//! controller's API listens on the lab's own loopback; the two pipes are
//! FIFOs in the lab's directory, which the test process and the lab share.
//! Dropping the [`Browser`] kills Chromium's whole process tree, and the
//! lab's end removes its profile.
//!
//! Exceptions, console errors and log errors of the page (a failed
//! module import, a CSP violation) are collected in
//! [`Browser::problems`], so a test can assert there were none.

use baton_netlab::{Cmd, Lab, Proc};
use serde_json::{Value, json};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long one DevTools command may take (a navigation on a loaded
/// 2-core machine takes well under a second).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long Chromium may take to start and open its pipes.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The script that installs Chromium (run when it is missing).
const INSTALL_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scripts/install-ui-deps.sh"
);

/// A headless Chromium in a laboratory with one page open.
pub struct Browser {
    proc: Proc,
    to: File,
    from: Receiver<Value>,
    next_id: u64,
    session: Option<String>,
    /// What went wrong in the page: uncaught exceptions, console errors.
    pub problems: Vec<String>,
}

/// Installs Chromium with `scripts/install-ui-deps.sh` unless it is there.
pub fn ensure_installed() {
    let found = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/bin"])
        .any(|d| Path::new(d).join("chromium").is_file());
    if found {
        return;
    }
    let status = std::process::Command::new("bash")
        .arg(INSTALL_SCRIPT)
        .status()
        .expect("runs scripts/install-ui-deps.sh");
    assert!(status.success(), "scripts/install-ui-deps.sh failed");
}

impl Browser {
    /// Starts Chromium in `lab` with a `width` × `height` window.
    pub fn launch(lab: &Lab, width: u32, height: u32) -> Browser {
        ensure_installed();
        let dir = lab.dir().join("chromium");
        std::fs::create_dir_all(&dir).unwrap();
        let commands = dir.join("cdp-in");
        let replies = dir.join("cdp-out");
        for fifo in [&commands, &replies] {
            let ok = std::process::Command::new("mkfifo")
                .arg(fifo)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mkfifo {}", fifo.display());
        }
        let flags = [
            "--headless",
            // Root in a container: Chromium's sandbox needs user
            // namespaces it may not get; the page is our own.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--mute-audio",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
        ];
        let script = format!(
            "exec chromium {} --window-size={width},{height} --user-data-dir={} about:blank 3<{} 4>{}",
            flags.join(" "),
            dir.join("profile").display(),
            commands.display(),
            replies.display(),
        );
        let proc = lab
            .spawn(
                Cmd::new("sh")
                    .args(["-c", &script])
                    .env("HOME", dir.display().to_string())
                    .timeout(Duration::from_secs(300)),
            )
            .expect("chromium starts");
        // Open the FIFOs in the order the shell does (3 then 4), on a
        // thread: an open blocks until Chromium's side is open too.
        let (opened, pipes) = channel();
        std::thread::spawn(move || {
            let to = OpenOptions::new().write(true).open(&commands);
            let from = File::open(&replies);
            let _ = opened.send((to, from));
        });
        let (to, from) = match pipes.recv_timeout(START_TIMEOUT) {
            Ok((Ok(to), Ok(from))) => (to, from),
            Ok((to, from)) => panic!("the DevTools pipes: {to:?} {from:?}"),
            Err(_) => panic!(
                "chromium did not open its DevTools pipe within {START_TIMEOUT:?}:\n{}",
                proc.stderr()
            ),
        };
        let (sink, messages) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(from);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                let Ok(v) = serde_json::from_slice::<Value>(&buf) else {
                    continue;
                };
                if sink.send(v).is_err() {
                    return;
                }
            }
        });
        Browser {
            proc,
            to,
            from: messages,
            next_id: 0,
            session: None,
            problems: Vec::new(),
        }
    }

    /// Sends a DevTools command (to the page, once one is open, unless
    /// `Browser.`/`Target.`) and returns its result, or the error it got.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        let browser_wide = method.starts_with("Browser.") || method.starts_with("Target.");
        if let (Some(s), false) = (&self.session, browser_wide) {
            msg["sessionId"] = Value::String(s.clone());
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .map_err(|e| format!("{method}: chromium's pipe: {e}"))?;
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = match self.from.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{method}: no answer within {CALL_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "{method}: chromium has gone:\n{}",
                        tail(&self.proc.stderr())
                    ));
                }
            };
            if m["id"].as_u64() == Some(id) {
                return match m.get("error") {
                    Some(e) => Err(format!("{method}: {e}")),
                    None => Ok(m["result"].clone()),
                };
            }
            self.event(&m);
        }
    }

    /// Notes the page's exceptions and errors.
    fn event(&mut self, m: &Value) {
        let p = &m["params"];
        match m["method"].as_str() {
            Some("Runtime.exceptionThrown") => {
                let d = &p["exceptionDetails"];
                let what = d["exception"]["description"]
                    .as_str()
                    .or(d["text"].as_str())
                    .unwrap_or("?");
                self.problems.push(format!("exception: {what}"));
            }
            Some("Runtime.consoleAPICalled") if p["type"] == "error" => {
                let args: Vec<String> = p["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| {
                        a["value"]
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| a["description"].to_string())
                    })
                    .collect();
                self.problems
                    .push(format!("console.error: {}", args.join(" ")));
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => {
                let e = &p["entry"];
                self.problems.push(format!(
                    "log: {} {}",
                    e["text"].as_str().unwrap_or("?"),
                    e["url"].as_str().unwrap_or("")
                ));
            }
            _ => {}
        }
    }

    /// Opens a page at `url` (with a `width` × `height` viewport) and
    /// waits for it to load.
    pub fn open(&mut self, url: &str, width: u32, height: u32) -> Result<(), String> {
        let target = self.call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let id = target["targetId"].clone();
        let attached = self.call(
            "Target.attachToTarget",
            json!({ "targetId": id, "flatten": true }),
        )?;
        self.session = attached["sessionId"].as_str().map(str::to_string);
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            self.call(domain, json!({}))?;
        }
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        )?;
        let nav = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(e) = nav.get("errorText") {
            return Err(format!("navigating to {url}: {e}"));
        }
        let loaded = format!(
            "document.readyState === 'complete' && location.href === {}",
            serde_json::to_string(url).unwrap()
        );
        self.wait_until("the page loaded", &loaded, Duration::from_secs(10))?;
        Ok(())
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns
    /// its value as JSON.
    pub fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(d) = r.get("exceptionDetails") {
            let what = d["exception"]["description"]
                .as_str()
                .or(d["text"].as_str())
                .unwrap_or("?");
            return Err(format!("`{expression}` threw: {what}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Evaluates `expression` every 50 ms until its value is truthy (not
    /// `null`, `false`, `0` or `""`) and returns it, with how long that
    /// took; fails after `timeout` with the last value.
    pub fn wait_until(
        &mut self,
        what: &str,
        expression: &str,
        timeout: Duration,
    ) -> Result<(Value, Duration), String> {
        let start = Instant::now();
        loop {
            let v = self.eval(expression)?;
            let truthy = match &v {
                Value::Null | Value::Bool(false) => false,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return Ok((v, start.elapsed()));
            }
            if start.elapsed() > timeout {
                return Err(format!(
                    "{what}: not within {timeout:?} (`{expression}` is {v})"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the element `selector` finds as a person would: scrolled
    /// into view, a mouse press and release at its centre, with `between`
    /// run while the button is held down (a person's click takes a tenth
    /// of a second, and the page may change meanwhile).
    pub fn click(
        &mut self,
        selector: &str,
        between: impl FnOnce(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        let sel = serde_json::to_string(selector).unwrap();
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return {{x: r.x + r.width / 2, y: r.y + r.height / 2}}; }})()"
        ))?;
        if rect.is_null() {
            return Err(format!("nothing to click: no {selector}"));
        }
        let mouse = |b: &mut Self, kind: &str| {
            b.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1 }),
            )
            .map(drop)
        };
        mouse(self, "mouseMoved")?;
        mouse(self, "mousePressed")?;
        between(self)?;
        mouse(self, "mouseReleased")
    }

    /// A PNG of the whole page, written to `path`.
    pub fn screenshot(&mut self, path: &Path) -> Result<(), String> {
        let shot = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true }),
        )?;
        let png = base64_decode(shot["data"].as_str().unwrap_or(""))
            .ok_or("the screenshot is not base64")?;
        std::fs::write(path, png).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Closes Chromium and waits for it to exit.
    pub fn close(mut self) {
        let _ = self.call("Browser.close", json!({}));
        if self.proc.wait_until_exit(Duration::from_secs(5)).is_none() {
            self.proc.kill();
        }
    }
}

/// The end of a long text.
fn tail(s: &str) -> &str {
    let from = s.len().saturating_sub(3000);
    let from = (from..s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[from..]
}

/// Standard base64 (RFC 4648 §4) with padding, as DevTools sends images.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

#[test]
fn base64_decodes_what_devtools_sends() {
    assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
    assert_eq!(base64_decode("aGVsbG8h").unwrap(), b"hello!");
    assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
    assert_eq!(base64_decode("").unwrap(), b"");
    assert!(base64_decode("a").is_none());
    assert!(base64_decode("a*==").is_none());
}
