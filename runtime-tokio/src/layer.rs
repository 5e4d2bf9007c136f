//! A tower layer: the load-control check in front of any `http` service.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::{Either, Ready, ready};
use http::{Request, Response};
use load_runtime::{Admission, CpuSource, PendingPermit};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::LoadGuard;

/// Puts a [`LoadGuard`] in front of a service: see [`LoadControlService`].
///
/// Put it around the whole router, in front of routing, as below: it then sees every
/// request-target as the client sent it, and costs one wrapper per request. axum's
/// `Router::layer` works too, but wraps every route separately (a boxed service each; about
/// 1.4x the cost of the outer placement in `bench/benches/tower.rs`), and a router nested
/// with `Router::nest` strips its prefix before its own layers run, so a layer inside it
/// would classify `/v1/documents` instead of `/api/v1/documents`.
///
/// ```
/// use axum::{Router, ServiceExt, extract::Request, routing::get};
/// use load_tokio::{ControlConfig, CpuPercent, FixedSource, LoadControlLayer, LoadGuard};
/// use tower_layer::Layer;
///
/// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(10)); // a stand-in
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
/// let mut config = ControlConfig::new();
/// config.web_threshold = 80.into();
/// let guard = LoadGuard::with_source(&config, &CLUSTER);
/// let router = Router::new().route("/search", get(|| async { "results" }));
/// let app = LoadControlLayer::new(guard).layer(router);
///
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # if false {
/// axum::serve(listener, ServiceExt::<Request>::into_make_service(app)).await?;
/// # }
/// # Ok(()) }
/// ```
pub struct LoadControlLayer<S> {
    guard: LoadGuard<S>,
}

impl<S> LoadControlLayer<S> {
    /// A layer deciding with `guard` (clones share it: one monitor, one set of counters).
    #[must_use]
    pub fn new(guard: LoadGuard<S>) -> Self {
        LoadControlLayer { guard }
    }
}

impl<S> Clone for LoadControlLayer<S> {
    fn clone(&self) -> Self {
        LoadControlLayer {
            guard: self.guard.clone(),
        }
    }
}

impl<S> fmt::Debug for LoadControlLayer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControlLayer")
            .field("guard", &self.guard)
            .finish()
    }
}

impl<Svc, S> Layer<Svc> for LoadControlLayer<S> {
    type Service = LoadControlService<Svc, S>;

    fn layer(&self, inner: Svc) -> Self::Service {
        LoadControlService {
            inner,
            guard: self.guard.clone(),
        }
    }
}

/// Decides each request with the guard before the inner service sees it.
///
/// The request-target classified is `req.uri()`'s path and query (for an absolute-form
/// target, its path), as received: tower services see it before any router normalises it.
/// A rejected request is answered here with the guard's busy response: status 429,
/// `Retry-After`, and Fess's API JSON or the busy page with its content type, byte for byte
/// what [`load_runtime::load_core::busy::response`] gives; the inner service is not called. An admitted
/// request goes to the inner service untouched. The first controlled request starts the
/// cluster monitor through the guard, exactly once.
///
/// With `load.control.admission=limit`, the admitted request's permit
/// ([`load_runtime::RequestPermit`]) is held by the response future until the inner service
/// answers (the response head; a streamed body is not waited for): the in-flight count the
/// cap bounds is the requests the inner service is serving.
///
/// Fess's static-file rule applies as the guard's configuration says: set
/// `ControlConfig::static_files` ([`load_runtime::StaticFiles`]) so that a route such as
/// `/api/v1/documents/{id}` is controlled whatever extension the id ends with.
///
/// Readiness is the inner service's: like other tower middleware that can answer by itself,
/// a rejection consumes the readiness obtained from `poll_ready` without calling the inner
/// service (routers such as axum's are always ready).
pub struct LoadControlService<Svc, S> {
    inner: Svc,
    guard: LoadGuard<S>,
}

impl<Svc: Clone, S> Clone for LoadControlService<Svc, S> {
    fn clone(&self) -> Self {
        LoadControlService {
            inner: self.inner.clone(),
            guard: self.guard.clone(),
        }
    }
}

impl<Svc: fmt::Debug, S> fmt::Debug for LoadControlService<Svc, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControlService")
            .field("inner", &self.inner)
            .field("guard", &self.guard)
            .finish()
    }
}

impl<Svc, S, ReqBody, ResBody> Service<Request<ReqBody>> for LoadControlService<Svc, S>
where
    Svc: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S: CpuSource + Send + 'static,
    ResBody: From<Bytes>,
{
    type Response = Response<ResBody>;
    type Error = Svc::Error;
    type Future = Either<ResponseFuture<Svc::Future>, Ready<Result<Response<ResBody>, Svc::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let target = request
            .uri()
            .path_and_query()
            .map_or("", |target| target.as_str());
        match self.guard.admit(target) {
            Admission::Admitted(permit) => Either::Left(ResponseFuture {
                inner: self.inner.call(request),
                permit: PendingPermit::new(permit),
            }),
            Admission::Rejected(route) => {
                Either::Right(ready(Ok(self.guard.busy_http_response(route))))
            }
        }
    }
}

pin_project! {
    /// The inner service's response future, holding the request's permit until it is
    /// ready. Dropped before that (the client went away, or the inner service panicked),
    /// it abandons the permit ([`load_runtime::RequestPermit::abandon`]): counted out, but its latency,
    /// which is the client's choice and not the cluster's, is not recorded.
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        permit: PendingPermit,
    }
}

impl<F: Future> Future for ResponseFuture<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let output = std::task::ready!(this.inner.poll(cx));
        // The answer is complete: counted out and recorded now.
        this.permit.complete();
        Poll::Ready(output)
    }
}

impl<F> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("permit", &self.permit)
            .finish_non_exhaustive()
    }
}
