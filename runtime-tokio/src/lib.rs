//! Fess-style CPU load control on the `tokio` runtime, with a tower layer for axum, hyper
//! and tonic.
//!
//! What a server needs of [`load_core`] is re-exported (the rest is under [`load_core`]), so
//! this is the only crate it depends on. Features `opensearch` and `system` (both on by
//! default) bring the cluster source (surf, OpenSSL) and the local one (sysinfo): turn them
//! off to compile neither when you bring your own [`CpuSource`].
//! This crate adds the runtime: [`Tokio`] spawns the monitors on a tokio runtime (the
//! current one, or a [`tokio::runtime::Handle`] you give it) and sleeps on tokio's timer,
//! and two ready-made handles use it:
//!
//! - [`LoadGuard`]: decides each request; the first controlled request starts the cluster
//!   monitor on this runtime, exactly once.
//! - [`Adaptive`]: samples this machine's CPU in the background; background work
//!   awaits [`Adaptive::wait`] (or blocks in [`Adaptive::wait_blocking`] on a plain
//!   thread) before each unit of work.
//!
//! With the `tower` feature (on by default), [`LoadControlLayer`] puts the guard in front
//! of any tower service that takes `http::Request`s: a rejected request is answered with
//! the busy response (429, `Retry-After`, Fess's JSON or the busy page) and never reaches the
//! inner service; an admitted one passes untouched.
//!
//! ```no_run
//! use axum::{Router, ServiceExt, extract::Request, routing::get};
//! use load_tokio::{Adaptive, Config, LoadControlLayer, LoadGuard};
//! use tower_layer::Layer;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = Config::from_properties(
//!     "search_engine.http.url=http://localhost:9200\nweb.load.control=80\napi.load.control=90\n",
//! )?;
//! let guard = LoadGuard::from_config(&config)?;
//! let background = Adaptive::from_config(&config)?;
//!
//! let router = Router::new().route("/search", get(|| async { "results" }));
//! // Around the whole router, in front of routing:
//! let app = LoadControlLayer::new(guard.clone()).layer(router);
//!
//! // Before each unit of background work:
//! let _pass = background.wait().await; // Pass::Stopped after shutdown
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, ServiceExt::<Request>::into_make_service(app)).await?;
//! # Ok(()) }
//! ```
//!
//! # The OpenSearch source on tokio
//!
//! [`OpenSearchSource`] polls through surf, whose HTTP/1 client runs on async-std's I/O: its
//! sockets and its timeout are driven by the `async-io` reactor, one background thread that
//! the first poll starts, whatever executor polls the future. It works from tokio tasks on a
//! current-thread or a multi-thread runtime (both are tested); the cost is that thread and
//! its epoll instance, once per process, and a wake-up across threads per poll (one poll a
//! second by default). A source of your own on tokio's I/O plugs in through
//! [`load_core::CpuSource`] and [`load_core::rt::LoadGuard::with_source`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::time::Duration;

load_core::adapter_exports!();

#[cfg(feature = "tower")]
mod layer;
#[cfg(feature = "tower")]
pub use layer::{LoadControlLayer, LoadControlService};

/// The tokio runtime: spawns on it and sleeps on its timer.
///
/// `Tokio::default()` is [`Tokio::current`]: the runtime the handle is created in (or, if
/// none, the one current when a monitor is spawned). [`Tokio::with_handle`] names one.
#[derive(Clone, Debug)]
pub struct Tokio {
    handle: Option<tokio::runtime::Handle>,
}

impl Tokio {
    /// The runtime this is called in, if any; otherwise the one current at each spawn.
    #[must_use]
    pub fn current() -> Tokio {
        Tokio {
            handle: tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// Spawns on the runtime behind `handle`.
    #[must_use]
    pub fn with_handle(handle: tokio::runtime::Handle) -> Tokio {
        Tokio {
            handle: Some(handle),
        }
    }
}

impl Default for Tokio {
    fn default() -> Self {
        Tokio::current()
    }
}

impl Sleep for Tokio {
    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

impl Runtime for Tokio {
    /// # Panics
    ///
    /// When this `Tokio` has no handle and is used outside any tokio runtime: create the
    /// guard inside the runtime, or give it one with [`Tokio::with_handle`].
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let handle = match &self.handle {
            Some(handle) => handle.clone(),
            None => tokio::runtime::Handle::try_current().unwrap_or_else(|_| {
                panic!(
                    "load-tokio: no tokio runtime to start a monitor on; create the guard inside \
                     one, or give it a handle with Tokio::with_handle"
                )
            }),
        };
        drop(handle.spawn(task));
    }
}

/// HTTP request load control on tokio (see [`load_core::rt::LoadGuard`]); polls an
/// OpenSearch cluster unless built with another source.
#[cfg(feature = "opensearch")]
pub type LoadGuard<S = OpenSearchSource> = load_core::rt::LoadGuard<Tokio, S>;

/// HTTP request load control on tokio (see [`load_core::rt::LoadGuard`]), with a
/// source of your own.
#[cfg(not(feature = "opensearch"))]
pub type LoadGuard<S> = load_core::rt::LoadGuard<Tokio, S>;

/// Adaptive load control of background work on tokio (see [`load_core::rt::Adaptive`]):
/// samples this machine's CPU and lets work wait while it is high.
pub type Adaptive = load_core::rt::Adaptive<Tokio>;
