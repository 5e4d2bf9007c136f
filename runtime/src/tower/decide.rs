//! What decides for the layer: the guard's own law ([`GuardDecides`], the default), or a
//! limiter of your own behind Fess's classification and busy response ([`Decide`]).

use load_core::Class;

use crate::{LoadGuard, PendingPermit, Runtime};

/// Decides each request for [`super::LoadControlLayer`]: a permit that the response future
/// holds until the inner service answers, or the class whose busy response answers it.
///
/// The default, [`GuardDecides`], is the guard's own law (Fess's rule or the limit mode).
/// Another limiter (a concurrency limit of your own, or a peer's law to benchmark against)
/// decides instead with [`super::LoadControlLayer::deciding_with`]: it keeps the guard's
/// classification of the target as received, the paths it never controls and its busy
/// response (status, `Retry-After`, Fess's body), and replaces only the decision.
///
/// ```
/// use load_core::Class;
/// use load_runtime::tower::{Decide, Settle};
/// use load_runtime::{LoadGuard, Runtime};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// At most `max` controlled requests at once, whatever the CPU.
/// #[derive(Clone)]
/// struct AtMost { max: usize, held: Arc<AtomicUsize> }
///
/// struct Slot(Option<Arc<AtomicUsize>>);
/// impl Settle for Slot {
///     fn complete(&mut self) { self.abandon() }
///     fn abandon(&mut self) {
///         if let Some(held) = self.0.take() { held.fetch_sub(1, Ordering::Relaxed); }
///     }
/// }
/// impl Drop for Slot {
///     fn drop(&mut self) { self.abandon() }
/// }
///
/// impl<R: Runtime, S> Decide<R, S> for AtMost {
///     type Permit = Slot;
///     fn decide(&self, guard: &LoadGuard<R, S>, target: &str) -> Result<Slot, Class> {
///         match guard.control().paths().classify(target) {
///             Class::Excluded => Ok(Slot(None)),
///             _ if self.held.fetch_add(1, Ordering::Relaxed) < self.max => {
///                 Ok(Slot(Some(Arc::clone(&self.held))))
///             }
///             class => {
///                 self.held.fetch_sub(1, Ordering::Relaxed);
///                 Err(class)
///             }
///         }
///     }
/// }
/// ```
pub trait Decide<R: Runtime, S>: Clone {
    /// What an admitted request holds until its answer.
    type Permit: Settle + Send + 'static;

    /// The permit of the request to `target` (its path and query as received), or the class
    /// of a refused one, answered with `guard`'s busy response for it.
    ///
    /// # Errors
    ///
    /// The class of a refused request.
    fn decide(&self, guard: &LoadGuard<R, S>, target: &str) -> Result<Self::Permit, Class>;
}

/// How an admitted request's permit ends: the response future settles it when the inner
/// service answers, and drops it unsettled when the request is given up (the client went
/// away), where it should count the request out as [`Settle::abandon`] does.
pub trait Settle {
    /// The answer is complete: counted out, and its latency recorded.
    fn complete(&mut self);

    /// The answer is complete but did none of the work the limiter bounds (the inner
    /// service marked it [`super::Unrecorded`]): counted out without a record.
    fn abandon(&mut self);
}

impl Settle for PendingPermit {
    fn complete(&mut self) {
        PendingPermit::complete(self);
    }

    fn abandon(&mut self) {
        PendingPermit::abandon(self);
    }
}

/// The guard's own law decides ([`LoadGuard::admit`]): the default of the layer.
#[derive(Clone, Copy, Debug, Default)]
pub struct GuardDecides;

impl<R: Runtime, S> Decide<R, S> for GuardDecides {
    type Permit = PendingPermit;

    #[inline]
    fn decide(&self, guard: &LoadGuard<R, S>, target: &str) -> Result<PendingPermit, Class> {
        match guard.admit(target) {
            load_core::Admission::Admitted(permit) => Ok(PendingPermit::new(permit)),
            load_core::Admission::Rejected(class) => Err(class),
        }
    }
}
