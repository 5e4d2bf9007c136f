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
