use std::fmt;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use tower_service::Service;

use super::{Decide, GuardDecides, ResponseFuture};
use crate::{LoadGuard, Runtime};

/// Decides each request with the guard before the inner service sees it.
///
/// The request-target classified is `req.uri()`'s path and query (for an absolute-form
/// target, its path), as received: tower services see it before any router normalises it.
/// A rejected request is answered here with the guard's busy response: status 429,
/// `Retry-After`, and Fess's API JSON or the busy page with its content type, byte for byte
/// what [`LoadGuard::busy_response`] gives; the inner service is not called. An admitted
/// request goes to the inner service untouched. The first controlled request starts the
/// cluster monitor through the guard, exactly once.
///
/// With `load.control.admission=limit`, the admitted request's permit
/// ([`crate::RequestPermit`]) is held by the response future until the inner service
/// answers (the response head; a streamed body is not waited for): the in-flight count the
/// cap bounds is the requests the inner service is serving.
///
/// Fess's static-file rule applies as the guard's configuration says: set
/// `ControlConfig::static_files` ([`crate::path::StaticFiles`]) so that a route such as
/// `/api/v1/documents/{id}` is controlled whatever extension the id ends with.
///
/// Readiness is the inner service's: like other tower middleware that can answer by itself,
/// a rejection consumes the readiness obtained from `poll_ready` without calling the inner
/// service (routers such as axum's are always ready).
pub struct LoadControlService<Svc, R: Runtime, S, D = GuardDecides> {
    inner: Svc,
    guard: LoadGuard<R, S>,
    decide: D,
}

impl<Svc, R: Runtime, S> LoadControlService<Svc, R, S> {
    /// `inner` behind `guard` (what [`super::LoadControlLayer`] builds).
    #[must_use]
    pub fn new(inner: Svc, guard: LoadGuard<R, S>) -> Self {
        LoadControlService {
            inner,
            guard,
            decide: GuardDecides,
        }
    }
}

impl<Svc, R: Runtime, S, D> LoadControlService<Svc, R, S, D> {
    /// `inner` behind `guard`, with `decide` deciding instead of the guard's law
    /// ([`super::LoadControlLayer::deciding_with`]).
    #[must_use]
    pub fn deciding_with(inner: Svc, guard: LoadGuard<R, S>, decide: D) -> Self {
        LoadControlService {
            inner,
            guard,
            decide,
        }
    }

    /// The inner service.
    #[must_use]
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut Svc {
        &mut self.inner
    }

    /// The inner service, consuming this one.
    #[must_use]
    pub fn into_inner(self) -> Svc {
        self.inner
    }
}

impl<Svc: Clone, R: Runtime, S, D: Clone> Clone for LoadControlService<Svc, R, S, D> {
    fn clone(&self) -> Self {
        LoadControlService {
            inner: self.inner.clone(),
            guard: self.guard.clone(),
            decide: self.decide.clone(),
        }
    }
}

impl<Svc: fmt::Debug, R: Runtime, S, D> fmt::Debug for LoadControlService<Svc, R, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControlService")
            .field("inner", &self.inner)
            .field("guard", &self.guard)
            .finish()
    }
}

impl<Svc, R, S, D, ReqBody, ResBody> Service<Request<ReqBody>> for LoadControlService<Svc, R, S, D>
where
    Svc: Service<Request<ReqBody>, Response = Response<ResBody>>,
    R: Runtime,
    D: Decide<R, S>,
    ResBody: From<Bytes>,
{
    type Response = Response<ResBody>;
    type Error = Svc::Error;
    type Future = ResponseFuture<Svc::Future, ResBody, D::Permit>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let target = request
            .uri()
            .path_and_query()
            .map_or("", |target| target.as_str());
        match self.decide.decide(&self.guard, target) {
            Ok(permit) => ResponseFuture::admitted(self.inner.call(request), permit),
            Err(class) => ResponseFuture::rejected(self.guard.busy_http_response(class)),
        }
    }
}
