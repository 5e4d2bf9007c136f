//! What a failed exchange is, in this crate's words: no connection (and why), or an error
//! body summed up.

use load_core::{SourceError, SourceErrorKind};

/// A request that got no answer, in this crate's words: what failed (connection refused,
/// connect timed out, the host name not resolved, TLS, ...) with the operating system's
/// error or the TLS library's text kept. surf's HTTP/1 client hands its connection pool's
/// errors over as text only (`An error occured while creating a new object: ...`), so the
/// text is what is read.
pub fn connect_error(error: &surf::Error) -> SourceError {
    SourceError::new(
        SourceErrorKind::Connect,
        &describe_connect(&error.to_string()),
    )
}

/// See [`connect_error`].
fn describe_connect(text: &str) -> String {
    const POOL: [&str; 2] = [
        "An error occured while creating a new object: ",
        "An error occurred while creating a new object: ",
    ];
    let cause = POOL
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
        .unwrap_or(text)
        .trim();
    if let Some(code) = os_error(cause) {
        use std::io::ErrorKind;
        let what = match std::io::Error::from_raw_os_error(code).kind() {
            ErrorKind::ConnectionRefused => "connection refused",
            ErrorKind::TimedOut => "connect timed out",
            ErrorKind::HostUnreachable => "host unreachable",
            ErrorKind::NetworkUnreachable => "network unreachable",
            ErrorKind::ConnectionReset => "connection reset",
            ErrorKind::ConnectionAborted => "connection aborted",
            ErrorKind::AddrNotAvailable => "no local address to connect from",
            ErrorKind::PermissionDenied => "connecting is not permitted",
            _ => "connect failed",
        };
        return format!("{what} (os error {code})");
    }
    if cause.starts_with("failed to lookup address") {
        return format!("host name not resolved ({cause})");
    }
    let lower = cause.to_ascii_lowercase();
    if ["ssl", "tls", "certificate", "handshake"]
        .iter()
        .any(|word| lower.contains(word))
    {
        return format!("TLS failure: {cause}");
    }
    format!("connect failed: {cause}")
}

/// The `N` of a trailing `(os error N)`.
fn os_error(text: &str) -> Option<i32> {
    let start = text.rfind("(os error ")?;
    text[start + "(os error ".len()..]
        .strip_suffix(')')?
        .parse()
        .ok()
}

/// An error body in a few words: `type: reason` of an OpenSearch/Elasticsearch error, else
/// its first non-empty line (the security plugin answers in plain text), else `fallback`.
pub fn describe_error_body(body: &[u8], fallback: &str) -> String {
    if let Some((kind, reason)) = load_core::node_stats::error_summary(body) {
        return if reason.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}: {reason}")
        };
    }
    let text = String::from_utf8_lossy(body);
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(fallback)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found from outside: a refused connection was logged in the HTTP client's pool
    /// wording, misspelt (`An error occured while creating a new object: ...`).
    #[test]
    fn connect_failures_are_said_in_our_words_with_the_os_error() {
        for (surf, ours) in [
            (
                "An error occured while creating a new object: Connection refused (os error 111)",
                "connection refused (os error 111)",
            ),
            (
                "An error occured while creating a new object: Connection timed out (os error 110)",
                "connect timed out (os error 110)",
            ),
            (
                "An error occured while creating a new object: No route to host (os error 113)",
                "host unreachable (os error 113)",
            ),
            (
                "failed to lookup address information: Name or service not known",
                "host name not resolved (failed to lookup address information: Name or service \
                 not known)",
            ),
            (
                "An error occured while creating a new object: error:0A00010B:SSL \
                 routines:ssl3_get_record:wrong version number",
                "TLS failure: error:0A00010B:SSL routines:ssl3_get_record:wrong version number",
            ),
            (
                "missing valid address",
                "connect failed: missing valid address",
            ),
        ] {
            assert_eq!(describe_connect(surf), ours, "{surf}");
        }
    }
}
