//! The rejection response as data: status, headers and body bytes, ready for any server.

use core::fmt::{self, Write};

use crate::Class;

/// The HTML body of a web rejection. It never echoes the request.
pub const BUSY_PAGE: &str = "<!DOCTYPE html>\n\
<html lang=\"en\">\n\
<head>\n\
<meta charset=\"UTF-8\">\n\
<title>Service Temporarily Unavailable</title>\n\
</head>\n\
<body>\n\
<h1>Service Temporarily Unavailable</h1>\n\
<p>The server is currently experiencing high load. Please try again later.</p>\n\
</body>\n\
</html>\n";

/// `Content-Type` of an API rejection (Fess's exact value).
pub const JSON_CONTENT_TYPE: &str = "application/json;charset=UTF-8";
/// `Content-Type` of a web rejection.
pub const HTML_CONTENT_TYPE: &str = "text/html;charset=UTF-8";

/// The status of every rejection: 429 Too Many Requests.
pub const STATUS: u16 = 429;

/// A complete rejection response, as data.
///
/// Build it once per configuration with [`response`] and serve it for every rejection; it
/// holds its body inline (no allocation) and borrows nothing.
///
/// ```
/// use load_core::{busy, Class};
///
/// let api = busy::response(Class::Api, 60);
/// assert_eq!(api.status(), 429);
/// assert_eq!(
///     api.body(),
///     br#"{"response":{"status":9,"message":"Server is busy. Please retry after 60 seconds.","retry_after":60}}"#
/// );
/// assert_eq!(api.headers()[0], ("Content-Type", "application/json;charset=UTF-8"));
/// assert_eq!(api.headers()[1], ("Retry-After", "60"));
///
/// let web = busy::response(Class::Web, 60);
/// assert!(web.body_str().contains("Service Temporarily Unavailable"));
/// assert_eq!(web.retry_after(), "60");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct BusyResponse {
    content_type: &'static str,
    retry_after: heapless::String<10>,
    body: Body,
}

#[derive(Clone, PartialEq, Eq)]
enum Body {
    Static(&'static str),
    Json(heapless::String<128>),
}

/// The busy response for a rejected request of class `class`, telling the client to retry
/// after `retry_after` seconds: Fess's JSON for [`Class::Api`], the HTML busy page
/// otherwise. Both carry `Retry-After`.
#[must_use]
pub fn response(class: Class, retry_after: u32) -> BusyResponse {
    let mut seconds = heapless::String::new();
    // u32::MAX has 10 digits: always fits.
    let _ = write!(seconds, "{retry_after}");
    let body = match class {
        Class::Api => {
            let mut json = heapless::String::new();
            // 97 bytes of text plus two numbers of at most 10 digits: always fits in 128.
            let _ = write!(
                json,
                "{{\"response\":{{\"status\":9,\"message\":\"Server is busy. Please retry after {retry_after} seconds.\",\"retry_after\":{retry_after}}}}}"
            );
            Body::Json(json)
        }
        Class::Web | Class::Excluded | Class::Ambiguous => Body::Static(BUSY_PAGE),
    };
    BusyResponse {
        content_type: match class {
            Class::Api => JSON_CONTENT_TYPE,
            _ => HTML_CONTENT_TYPE,
        },
        retry_after: seconds,
        body,
    }
}

impl BusyResponse {
    /// 429.
    #[must_use]
    pub const fn status(&self) -> u16 {
        STATUS
    }

    /// The `Content-Type` value.
    #[must_use]
    pub const fn content_type(&self) -> &'static str {
        self.content_type
    }

    /// The `Retry-After` value (seconds, as text).
    #[must_use]
    pub fn retry_after(&self) -> &str {
        &self.retry_after
    }

    /// The headers to send: `Content-Type` and `Retry-After`.
    #[must_use]
    pub fn headers(&self) -> [(&'static str, &str); 2] {
        [
            ("Content-Type", self.content_type),
            ("Retry-After", &self.retry_after),
        ]
    }

    /// The body bytes.
    #[must_use]
    pub fn body(&self) -> &[u8] {
        self.body_str().as_bytes()
    }

    /// The body as text (it is always UTF-8).
    #[must_use]
    pub fn body_str(&self) -> &str {
        match &self.body {
            Body::Static(text) => text,
            Body::Json(text) => text,
        }
    }
}

impl fmt::Debug for BusyResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BusyResponse")
            .field("status", &STATUS)
            .field("content_type", &self.content_type)
            .field("retry_after", &self.retry_after())
            .field("body_len", &self.body().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_body_is_fess_byte_for_byte() {
        let response = response(Class::Api, 60);
        assert_eq!(
            response.body_str(),
            "{\"response\":{\"status\":9,\"message\":\"Server is busy. Please retry after 60 seconds.\",\"retry_after\":60}}"
        );
        assert_eq!(response.content_type(), "application/json;charset=UTF-8");
    }

    #[test]
    fn retry_after_is_substituted_everywhere() {
        let response = response(Class::Api, 4_294_967_295);
        assert!(
            response
                .body_str()
                .contains("retry after 4294967295 seconds.")
        );
        assert!(
            response
                .body_str()
                .ends_with("\"retry_after\":4294967295}}")
        );
        assert_eq!(response.retry_after(), "4294967295");
        let web = super::response(Class::Web, 5);
        assert_eq!(
            web.headers(),
            [("Content-Type", HTML_CONTENT_TYPE), ("Retry-After", "5")]
        );
        assert_eq!(web.status(), 429);
    }

    #[test]
    fn web_page_has_the_fess_wording() {
        let page = response(Class::Web, 60);
        assert!(
            page.body_str()
                .contains("<title>Service Temporarily Unavailable</title>")
        );
        assert!(
            page.body_str().contains(
                "The server is currently experiencing high load. Please try again later."
            )
        );
    }
}
