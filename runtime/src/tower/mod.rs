//! A tower layer (feature `tower`): the load-control decision in front of any `http`
//! service, on any runtime (axum or hyper on tokio, hyper on smol or async-std).
//!
//! In tower's own shape, as `tower::limit::concurrency` is: [`LoadControlLayer`] wraps a
//! service in a [`LoadControlService`], whose [`ResponseFuture`] holds the admitted
//! request's permit until the inner service answers.
//!
//! ```
//! use bytes::Bytes;
//! use http::{Request, Response};
//! use http_body_util::Full;
//! use load_runtime::tower::LoadControlLayer;
//! use load_runtime::{ControlConfig, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
//! use tower::{Layer, Service, service_fn};
//!
//! // Any runtime: the adapters bring smol's, tokio's and async-std's; this one is a thread.
//! #[derive(Clone, Copy, Default)]
//! struct Threads;
//! impl Sleep for Threads {
//!     async fn sleep(&self, duration: std::time::Duration) {
//!         std::thread::sleep(duration);
//!     }
//! }
//! impl Runtime for Threads {
//!     fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
//!         std::thread::spawn(move || futures::executor::block_on(task));
//!     }
//! }
//!
//! static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(95)); // a stand-in
//! let mut config = ControlConfig::new();
//! config.web_threshold = 80.into();
//! let guard: LoadGuard<Threads, _> = LoadGuard::with_source(&config, &CLUSTER);
//! let search = service_fn(|_: Request<String>| async {
//!     Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from("results"))))
//! });
//! let mut service = LoadControlLayer::new(guard.clone()).layer(search);
//! # let _ = guard.control().update(load_runtime::Instant::ZERO, load_runtime::Outcome::Sample(CpuPercent::new(95)));
//! // The cluster at 95 %: a search is answered with Fess's busy page, the inner service
//! // not called; a page that is not controlled goes through.
//! let request = Request::get("/search?q=rust").body(String::new())?;
//! let answer = futures::executor::block_on(service.call(request))?;
//! assert_eq!(answer.status(), 429);
//! let request = Request::get("/admin/").body(String::new())?;
//! assert_eq!(futures::executor::block_on(service.call(request))?.status(), 200);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod decide;
mod future;
mod layer;
mod service;
mod unrecorded;

pub use decide::{Decide, GuardDecides, Settle};
pub use future::ResponseFuture;
pub use layer::LoadControlLayer;
pub use service::LoadControlService;
pub use unrecorded::Unrecorded;

#[cfg(test)]
mod tests;
