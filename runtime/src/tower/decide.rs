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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::Bytes;
    use http::{Request, Response, StatusCode};
    use load_core::{Class, ControlConfig, CpuPercent, FixedSource};
    use tower_layer::Layer as _;
    use tower_service::Service as _;

    use super::{Decide, Settle};
    use crate::tower::{LoadControlLayer, Unrecorded};
    use crate::{LoadGuard, Runtime, time::Sleep};

    #[derive(Clone, Copy, Default)]
    struct Idle;
    impl Sleep for Idle {
        async fn sleep(&self, _: std::time::Duration) {}
    }
    impl Runtime for Idle {
        fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {}
    }

    static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(10));

    /// Admits a controlled request while `open`, and counts how its permits end.
    #[derive(Clone, Default)]
    struct Gate {
        open: Arc<AtomicUsize>,
        decided: Arc<AtomicUsize>,
        completed: Arc<AtomicUsize>,
        abandoned: Arc<AtomicUsize>,
    }

    struct Ticket(Gate, bool);
    impl Settle for Ticket {
        fn complete(&mut self) {
            if std::mem::take(&mut self.1) {
                self.0.completed.fetch_add(1, Ordering::Relaxed);
            }
        }
        fn abandon(&mut self) {
            if std::mem::take(&mut self.1) {
                self.0.abandoned.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    impl Drop for Ticket {
        fn drop(&mut self) {
            self.abandon();
        }
    }

    impl<R: Runtime, S> Decide<R, S> for Gate {
        type Permit = Ticket;
        fn decide(&self, guard: &LoadGuard<R, S>, target: &str) -> Result<Ticket, Class> {
            match guard.control().paths().classify(target) {
                Class::Excluded => Ok(Ticket(self.clone(), false)),
                class => {
                    self.decided.fetch_add(1, Ordering::Relaxed);
                    if self.open.load(Ordering::Relaxed) == 1 {
                        Ok(Ticket(self.clone(), true))
                    } else {
                        Err(class)
                    }
                }
            }
        }
    }

    /// A limiter of one's own decides instead of the guard: the guard's classification,
    /// uncontrolled paths and busy response stay; the guard's monitor never starts (its law
    /// decides nothing); the limiter's permits are completed, or abandoned for an answer
    /// marked unrecorded.
    #[test]
    fn a_limiter_of_ones_own_decides_behind_the_guards_classification() {
        let mut config = ControlConfig::new();
        config.web_threshold = 70.into();
        config.api_threshold = 70.into();
        config.uncontrolled = &["/metrics"];
        let guard: LoadGuard<Idle, _> = LoadGuard::with_source(&config, &CLUSTER);
        let gate = Gate::default();
        let inner = tower::service_fn(|request: Request<()>| async move {
            let mut response = Response::new(Bytes::from_static(b"ok"));
            if request.uri().path() == "/missing" {
                *response.status_mut() = StatusCode::NOT_FOUND;
                response.extensions_mut().insert(Unrecorded);
            }
            Ok::<_, std::convert::Infallible>(response)
        });
        let mut service = LoadControlLayer::new(guard.clone())
            .deciding_with(gate.clone())
            .layer(inner);
        let mut get = |path: &str| {
            let request = Request::get(path).body(()).expect("request");
            futures::executor::block_on(service.call(request)).expect("answered")
        };
        // Closed: every controlled request refused with the guard's busy response.
        let refused = get("/api/v1/documents?q=a");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            refused.headers()["content-type"],
            guard.busy_response(Class::Api).content_type()
        );
        assert_eq!(get("/search?q=a").status(), StatusCode::TOO_MANY_REQUESTS);
        // Excluded and uncontrolled paths go through without the limiter's say.
        assert_eq!(get("/admin/").status(), StatusCode::OK);
        assert_eq!(get("/metrics").status(), StatusCode::OK);
        assert_eq!(gate.decided.load(Ordering::Relaxed), 2);
        // Open: admitted, completed; a marked answer abandoned.
        gate.open.store(1, Ordering::Relaxed);
        assert_eq!(get("/search?q=a").status(), StatusCode::OK);
        assert_eq!(get("/missing").status(), StatusCode::NOT_FOUND);
        assert_eq!(gate.completed.load(Ordering::Relaxed), 1);
        assert_eq!(gate.abandoned.load(Ordering::Relaxed), 1);
        assert!(!guard.monitor_started(), "the guard's law decided nothing");
    }
}
