//! The busy response as an `http::Response` (feature `http`), for hyper, axum and tower.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use http::{Response, StatusCode};
use load_core::busy::BusyResponse;

/// `busy` as an `http::Response`: status 429, `Content-Type`, `Retry-After`, and the body
/// (Fess's API JSON or the busy page), byte for byte what [`load_core::busy::response`]
/// gives. Generic over any body a [`Bytes`] converts into (`Full<Bytes>`, axum's `Body`,
/// `String` bodies through `Bytes`...).
///
/// ```
/// use http_body_util::Full;
/// use load_core::{Class, busy};
///
/// let response: http::Response<Full<bytes::Bytes>> =
///     load_runtime::http_response(&busy::response(Class::Api, 60));
/// assert_eq!(response.status(), 429);
/// assert_eq!(response.headers()["retry-after"], "60");
/// assert_eq!(response.headers()["content-type"], "application/json;charset=UTF-8");
/// ```
#[must_use]
pub fn http_response<B: From<Bytes>>(busy: &BusyResponse) -> Response<B> {
    let mut response = Response::new(B::from(Bytes::copy_from_slice(busy.body())));
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(busy.content_type()));
    for (name, value) in busy.headers() {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(name, value);
        }
    }
    response
}
