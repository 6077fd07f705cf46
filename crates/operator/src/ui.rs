//! The web UI, served at `/` by the API server: what Beacon's users found
//! most useful beside its REST interface was a web page to watch the
//! network and steer applications (Beacon §3.3 "Web", §7); baton's shows
//! what no other controller can, its scheduler at work.
//!
//! Open `http://127.0.0.1:8080/` (the `--api` address) in a browser:
//! - a **topology graph** (cytoscape.js) of the switches, the links
//!   discovery found (dashed while seen in one direction only) and the
//!   hosts, redrawn when a link or a host comes or goes; on a clustered
//!   instance each switch is filled with the colour of the member that
//!   masters it (grey: none), with a legend naming the members;
//! - **charts** (uPlot) over the last five minutes of throughput in and
//!   out, Jain's fairness across switches (each switch's rate divided by
//!   its weight), and each worker's IBT and mean batch (Maestro §3.3);
//! - tables of the **switches** with their message rates and load, the
//!   **hosts**, and the **applications** with their state, counters, the
//!   panic that stopped one, and Stop/Start buttons (which call
//!   `POST /api/v1/apps/{name}/stop|start`, with the token typed in the
//!   header as a Bearer token when the API asks for one), of the
//!   **DAGs**, when there are any, with their runs, and of the links'
//!   **reservations** (each link's reserved share of its capacity), when
//!   the `bandwidth` application is in the pipeline.
//!
//! The page is plain HTML, CSS and JavaScript modules (`crates/operator/ui/`),
//! no build step; it draws everything from the live feed
//! `GET /api/v1/events` (server-sent events, see `api/events.rs`). The
//! two libraries are vendored in `ui/vendor/` by `scripts/vendor-ui.sh`,
//! which records their versions, licences and npm integrity hashes in
//! `ui/vendor/VERSIONS`. Every file is compiled into the binary with
//! `include_bytes!`: the controller needs no files at run time and the
//! page fetches nothing from anywhere else, which its
//! Content-Security-Policy (`default-src 'self'`) enforces.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One file of the UI.
struct Asset {
    /// Its path under `ui/` (and under `/ui/` in URLs).
    path: &'static str,
    /// Its media type.
    mime: &'static str,
    /// Its bytes.
    body: &'static [u8],
}

/// The UI's files, read at compile time.
macro_rules! assets {
    ($($path:literal => $mime:expr,)*) => {
        &[$(Asset {
            path: $path,
            mime: $mime,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/ui/", $path)),
        },)*]
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const TEXT: &str = "text/plain; charset=utf-8";

static ASSETS: &[Asset] = assets! {
    "index.html" => HTML,
    "app.js" => JS,
    "graph.js" => JS,
    "charts.js" => JS,
    "style.css" => CSS,
    "vendor/cytoscape.esm.min.mjs" => JS,
    "vendor/uPlot.esm.js" => JS,
    "vendor/uPlot.min.css" => CSS,
    "vendor/VERSIONS" => TEXT,
    "vendor/LICENSE-cytoscape" => TEXT,
    "vendor/LICENSE-uplot" => TEXT,
};

/// Where the page may load from: only the controller itself. Styles may
/// be inline because both libraries set element styles.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The UI's routes: `/` (the page) and `/ui/{path}` (its files), for any
/// router state.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { serve("index.html") }))
        .route("/index.html", get(|| async { serve("index.html") }))
        .route(
            "/ui/{*path}",
            get(|Path(path): Path<String>| async move { serve(&path) }),
        )
}

/// The file at `path`, or a 404 that says where the UI is.
fn serve(path: &str) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return crate::ApiError::not_found(format!("no UI file {path:?}; the UI is at /"))
            .into_response();
    };
    let mut resp = asset.body.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.mime));
    // The files change only with the binary; revalidating costs little on
    // the operator's network and never shows a stale UI after an upgrade.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if asset.mime == HTML {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    resp
}

/// Every file's path and size (for tests).
#[cfg(test)]
fn listing() -> Vec<(&'static str, usize)> {
    ASSETS.iter().map(|a| (a.path, a.body.len())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_the_page_loads_is_embedded() {
        let files: Vec<&str> = listing().iter().map(|f| f.0).collect();
        // What index.html and the modules import.
        let page = std::str::from_utf8(ASSETS[0].body).unwrap();
        let mut wanted: Vec<String> = page
            .split('"')
            .filter_map(|s| s.strip_prefix("/ui/"))
            .map(str::to_string)
            .collect();
        for a in ASSETS
            .iter()
            .filter(|a| a.mime == JS && !a.path.starts_with("vendor/"))
        {
            let text = std::str::from_utf8(a.body).unwrap();
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let target = line.split('"').nth(1).unwrap();
                let target = target.strip_prefix("./").unwrap();
                wanted.push(target.to_string());
            }
        }
        assert!(wanted.len() >= 6, "{wanted:?}");
        for w in wanted {
            assert!(
                files.contains(&w.as_str()),
                "{w} is not embedded: {files:?}"
            );
        }
        assert!(listing().iter().all(|f| f.1 > 0));
    }

    #[test]
    fn the_vendored_libraries_are_recorded_with_their_licences() {
        let versions = serve_text("vendor/VERSIONS");
        for lib in ["cytoscape", "uplot"] {
            let line = versions
                .lines()
                .find(|l| l.starts_with(lib))
                .unwrap_or_else(|| panic!("{lib} not in VERSIONS:\n{versions}"));
            assert!(line.contains("MIT") && line.contains("sha512-"), "{line}");
            assert!(
                serve_text(&format!("vendor/LICENSE-{lib}"))
                    .contains("Permission is hereby granted")
            );
        }
    }

    fn serve_text(path: &str) -> String {
        let a = ASSETS.iter().find(|a| a.path == path).unwrap();
        String::from_utf8(a.body.to_vec()).unwrap()
    }
}
