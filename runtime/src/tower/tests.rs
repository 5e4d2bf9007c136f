//! The layer's seams, tested without a network: a limiter of one's own deciding instead of
//! the guard's law, and an answer the inner service marks unrecorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use load_core::{AdmissionMode, Class, ControlConfig, CpuPercent, FixedSource};
use tower_layer::Layer as _;
use tower_service::Service as _;

use super::{Decide, LoadControlLayer, Settle, Unrecorded};
use crate::{LoadGuard, Runtime, time::Sleep};

/// A runtime whose tasks never run: the monitor's poll is not what is tested.
#[derive(Clone, Copy, Default)]
struct Idle;
impl Sleep for Idle {
    async fn sleep(&self, _: std::time::Duration) {}
}
impl Runtime for Idle {
    fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {}
}

static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(10));

/// In the limit mode an answer the inner service marks as unrecorded is counted out
/// without a completion, and leaves without the marker; an unmarked one is recorded.
#[test]
fn a_marked_answer_is_counted_out_unrecorded() {
    let mut config = ControlConfig::new();
    config.web_threshold = 80.into();
    config.admission = AdmissionMode::Limit;
    let guard: LoadGuard<Idle, _> = LoadGuard::with_source(&config, &CLUSTER);
    let inner = tower::service_fn(|request: Request<()>| async move {
        let mut response = Response::new(Bytes::new());
        if request.uri().path() == "/missing" {
            *response.status_mut() = StatusCode::NOT_FOUND;
            response.extensions_mut().insert(Unrecorded);
        }
        Ok::<_, std::convert::Infallible>(response)
    });
    let mut service = LoadControlLayer::new(guard.clone()).layer(inner);
    let mut get = |path: &str| {
        let request = Request::get(path).body(()).expect("request");
        futures::executor::block_on(service.call(request)).expect("answered")
    };
    assert_eq!(get("/search?q=a").status(), StatusCode::OK);
    let missing = get("/missing");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(
        missing.extensions().get::<Unrecorded>().is_none(),
        "taken out"
    );
    let stats = guard.control().admission();
    assert_eq!((stats.in_flight, stats.completed), (0, 1), "{stats:?}");
    let _ = get("/search?q=a");
    let stats = guard.control().admission();
    assert_eq!((stats.in_flight, stats.completed), (0, 2), "{stats:?}");
}

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
