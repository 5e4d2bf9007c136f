use std::fmt;

use tower_layer::Layer;

use super::{Decide, GuardDecides, LoadControlService};
use crate::{LoadGuard, Runtime};

/// Puts a [`LoadGuard`] in front of a service: see [`LoadControlService`].
///
/// Put it around the whole router, in front of routing: it then sees every request-target
/// as the client sent it, and costs one wrapper per request. axum's `Router::layer` works
/// too, but wraps every route separately (a boxed service each; about 1.4x the cost of the
/// outer placement in the project's tower bench), and a router nested with `Router::nest`
/// strips its prefix before its own layers run, so a layer inside it would classify
/// `/v1/documents` instead of `/api/v1/documents`.
///
/// The guard's own law decides by default ([`GuardDecides`]); [`LoadControlLayer::deciding_with`]
/// puts a limiter of your own in its place ([`Decide`]).
pub struct LoadControlLayer<R: Runtime, S, D = GuardDecides> {
    guard: LoadGuard<R, S>,
    decide: D,
}

impl<R: Runtime, S> LoadControlLayer<R, S> {
    /// A layer deciding with `guard` (clones share it: one monitor, one set of counters).
    #[must_use]
    pub fn new(guard: LoadGuard<R, S>) -> Self {
        LoadControlLayer {
            guard,
            decide: GuardDecides,
        }
    }
}

impl<R: Runtime, S, D> LoadControlLayer<R, S, D> {
    /// The same layer with `decide` deciding instead of the guard's law: the guard still
    /// classifies the target, never controls its uncontrolled paths (as `decide` is told
    /// through [`LoadGuard::control`]'s `paths`), and answers a refusal with its busy
    /// response.
    #[must_use]
    pub fn deciding_with<E: Decide<R, S>>(self, decide: E) -> LoadControlLayer<R, S, E> {
        LoadControlLayer {
            guard: self.guard,
            decide,
        }
    }
}

impl<R: Runtime, S, D: Clone> Clone for LoadControlLayer<R, S, D> {
    fn clone(&self) -> Self {
        LoadControlLayer {
            guard: self.guard.clone(),
            decide: self.decide.clone(),
        }
    }
}

impl<R: Runtime, S, D> fmt::Debug for LoadControlLayer<R, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadControlLayer")
            .field("guard", &self.guard)
            .field("decide", &std::any::type_name::<D>())
            .finish()
    }
}

impl<Svc, R: Runtime, S, D: Clone> Layer<Svc> for LoadControlLayer<R, S, D> {
    type Service = LoadControlService<Svc, R, S, D>;

    fn layer(&self, inner: Svc) -> Self::Service {
        LoadControlService::deciding_with(inner, self.guard.clone(), self.decide.clone())
    }
}
