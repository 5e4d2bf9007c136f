//! [`Unrecorded`]: the inner service's word that an answer did none of the work the cap
//! bounds.

/// Put in a response's extensions by the inner service when the answer did none of the work
/// the in-flight cap bounds (a 404 of your own, a cache hit, an answer from memory): the
/// layer counts the request out without recording its latency
/// ([`crate::RequestPermit::abandon`]), so that many instant answers do not teach the cap
/// a latency the cluster, or the service's own work, never had. The layer takes the marker
/// out of the response before it leaves.
///
/// In Fess's mode nothing is recorded anyway, and the marker changes nothing.
///
/// ```
/// use bytes::Bytes;
/// use http::{Response, StatusCode};
/// use http_body_util::Full;
/// use load_runtime::tower::Unrecorded;
///
/// fn not_found() -> Response<Full<Bytes>> {
///     let mut response = Response::new(Full::new(Bytes::from_static(b"not found")));
///     *response.status_mut() = StatusCode::NOT_FOUND;
///     response.extensions_mut().insert(Unrecorded);
///     response
/// }
/// # assert!(not_found().extensions().get::<Unrecorded>().is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Unrecorded;

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::{Request, Response, StatusCode};
    use load_core::{AdmissionMode, ControlConfig, CpuPercent, FixedSource};
    use tower_layer::Layer as _;
    use tower_service::Service as _;

    use super::Unrecorded;
    use crate::tower::LoadControlLayer;
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
}
