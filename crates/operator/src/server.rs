//! [`ApiServer`]: the REST API served on its own thread, so that HTTP
//! never runs on the controller's workers.
//!
//! The thread runs a one-worker tokio runtime; handlers that wait for a
//! switch (flow tables read with statistics requests) run on its blocking
//! pool. The listener is bound before [`ApiServer::start`] returns, so a
//! taken port is an error at start, not a log line later.

use crate::api::{self, Shared};
use baton_runtime::control::Control;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::thread::JoinHandle;
use std::time::Instant;
use tokio::sync::{oneshot, watch};

/// Where and how the API is served.
#[derive(Debug, Clone)]
pub struct ApiOptions {
    /// The address to listen on (port 0: any free port).
    pub addr: SocketAddr,
}

impl Default for ApiOptions {
    fn default() -> ApiOptions {
        ApiOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
        }
    }
}

/// The running API server; dropping it stops it.
pub struct ApiServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ApiServer {
    /// Binds `opts.addr` and serves the API for `control` on a thread of
    /// its own.
    pub fn start(control: Control, opts: ApiOptions) -> io::Result<ApiServer> {
        let listener = TcpListener::bind(opts.addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(16)
            .thread_name("baton-api")
            .enable_all()
            .build()?;
        let (closing, closing_rx) = watch::channel(false);
        let shared = Shared {
            control,
            started: Instant::now(),
            closing: closing_rx,
        };
        let (shutdown, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("baton-api".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!(error = %e, "API listener unusable");
                            return;
                        }
                    };
                    let app = api::router(shared);
                    let served = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = stopped.await;
                            // Event streams never end by themselves.
                            let _ = closing.send(true);
                        })
                        .await;
                    if let Err(e) = served {
                        tracing::error!(error = %e, "API server failed");
                    }
                });
            })?;
        tracing::info!(%addr, "API listening");
        Ok(ApiServer {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and waits for the thread.
    pub fn stop(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.shut();
    }
}
