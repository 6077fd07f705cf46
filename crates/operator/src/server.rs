//! [`ApiServer`]: the REST API, `/metrics` and the sampler served on a
//! thread of their own, so that HTTP never runs on the controller's
//! workers.
//!
//! The thread runs a one-worker tokio runtime; handlers that wait for a
//! switch (flow tables read with statistics requests, flows confirmed
//! with barriers, an application's flows deleted) run on its blocking
//! pool. A task on the same runtime feeds the [`Sampler`] every
//! [`sampler::PERIOD`]. The listener is bound before
//! [`ApiServer::start`] returns, so a taken port, or a non-loopback
//! address without a token, is an error at start, not a log line later.
//!
//! A clustered instance passes its cluster member as
//! [`ApiOptions::cluster`]; the API then serves `GET /api/v1/cluster`
//! and the cluster's metrics from it.

use crate::api::{self, Shared};
use crate::auth::{self, Token};
use crate::sampler::{self, Sampler};
use baton_cluster::status::ClusterSource;
use baton_runtime::control::Control;
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;
use tokio::sync::{oneshot, watch};

/// Where and how the API is served.
#[derive(Clone)]
pub struct ApiOptions {
    /// The address to listen on (port 0: any free port).
    pub addr: SocketAddr,
    /// The token mutating calls must present; required off loopback.
    pub token: Option<Token>,
    /// The cluster this instance is a member of, or `None` for a
    /// standalone instance (`GET /api/v1/cluster` answers 404).
    pub cluster: Option<Arc<dyn ClusterSource>>,
}

impl Default for ApiOptions {
    fn default() -> ApiOptions {
        ApiOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            token: None,
            cluster: None,
        }
    }
}

impl fmt::Debug for ApiOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiOptions")
            .field("addr", &self.addr)
            .field("token", &self.token)
            .field("clustered", &self.cluster.is_some())
            .finish()
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
    /// its own. Refuses ([`io::ErrorKind::InvalidInput`]) a non-loopback
    /// address without a token.
    pub fn start(control: Control, opts: ApiOptions) -> io::Result<ApiServer> {
        auth::check_bind(opts.addr, opts.token.as_ref())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
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
            sampler: Arc::new(Mutex::new(Sampler::default())),
            closing: closing_rx,
            cluster: opts.cluster,
        };
        let token = opts.token.map(Arc::new);
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
                    tokio::spawn(sample(shared.clone()));
                    let app = api::router(shared, token);
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

/// Reads every switch's counters each period, until the runtime ends.
async fn sample(shared: Shared) {
    let mut tick = tokio::time::interval(sampler::PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let switches = shared.control.switches();
        shared.sampler().observe(Instant::now(), &switches);
    }
}
