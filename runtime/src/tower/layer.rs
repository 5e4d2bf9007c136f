use std::fmt;

use tower_layer::Layer;

use super::LoadControlService;
use crate::{LoadGuard, Runtime};

/// Puts a [`LoadGuard`] in front of a service: see [`LoadControlService`].
///
/// Put it around the whole router, in front of routing: it then sees every request-target
/// as the client sent it, and costs one wrapper per request. axum's `Router::layer` works
/// too, but wraps every route separately (a boxed service each; about 1.4x the cost of the
/// outer placement in the project's tower bench), and a router nested with `Router::nest`
/// strips its prefix before its own layers run, so a layer inside it would classify
/// `/v1/documents` instead of `/api/v1/documents`.
pub struct LoadControlLayer<R: Runtime, S> {
    guard: LoadGuard<R, S>,
}

impl<R: Runtime, S> LoadControlLayer<R, S> {
    /// A layer deciding with `guard` (clones share it: one monitor, one set of counters).
    #[must_use]
    pub fn new(guard: LoadGuard<R, S>) -> Self {
        LoadControlLayer { guard }
    }
}

impl<R: Runtime, S> Clone for LoadControlLayer<R, S> {
    fn clone(&self) -> Self {
        LoadControlLayer {
            guard: self.guard.clone(),
        }
    }
}

impl<R: Runtime, S> fmt::Debug for LoadControlLayer<R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControlLayer")
            .field("guard", &self.guard)
            .finish()
    }
}

impl<Svc, R: Runtime, S> Layer<Svc> for LoadControlLayer<R, S> {
    type Service = LoadControlService<Svc, R, S>;

    fn layer(&self, inner: Svc) -> Self::Service {
        LoadControlService::new(inner, self.guard.clone())
    }
}
