//! What a failed exchange is, in this crate's words: no connection (and why), a connection
//! that closed or answered in another protocol, or an error body summed up.

use load_core::{SourceError, source::SourceErrorKind};

use crate::connections::{Failure, Phase};

/// A request that got no answer, in this crate's words, by when it failed:
///
/// - no connection ([`SourceErrorKind::Connect`]): connection refused, connect timed out,
///   the host name not resolved, TLS, ... with the operating system's error or the TLS
///   library's text kept;
/// - connected, but the request could not be sent or the connection closed before a byte
///   of the answer ([`SourceErrorKind::Io`]);
/// - connected, and bytes came that are not an HTTP answer ([`SourceErrorKind::Protocol`]):
///   a server of another protocol on the port, or an answer out of step.
pub(crate) fn send_error(error: &surf::Error) -> SourceError {
    let Some(failure) = error.downcast_ref::<Failure>() else {
        return SourceError::new(SourceErrorKind::Other, &error.to_string());
    };
    match failure.phase {
        Phase::Connect => {
            SourceError::new(SourceErrorKind::Connect, &describe_connect(&failure.cause))
        }
        Phase::Closed => SourceError::new(
            SourceErrorKind::Io,
            &format!("closed before an answer ({})", failure.cause),
        ),
        Phase::NotHttp => SourceError::new(
            SourceErrorKind::Protocol,
            &format!("not an HTTP answer ({})", failure.cause),
        ),
        Phase::Elsewhere => SourceError::new(SourceErrorKind::Other, &failure.cause),
    }
}

/// A connect failure's text in our words.
fn describe_connect(cause: &str) -> String {
    let cause = cause.trim();
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
pub(crate) fn describe_error_body(body: &[u8], fallback: &str) -> String {
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
    /// wording (`An error occured while creating a new object: ...`). Connect failures are
    /// said in our words, with the operating system's error.
    #[test]
    fn connect_failures_are_said_in_our_words_with_the_os_error() {
        for (io, ours) in [
            (
                "Connection refused (os error 111)",
                "connection refused (os error 111)",
            ),
            (
                "Connection timed out (os error 110)",
                "connect timed out (os error 110)",
            ),
            (
                "No route to host (os error 113)",
                "host unreachable (os error 113)",
            ),
            (
                "failed to lookup address information: Name or service not known",
                "host name not resolved (failed to lookup address information: Name or service \
                 not known)",
            ),
            (
                "TLS handshake: error:0A00010B:SSL routines:ssl3_get_record:wrong version number",
                "TLS failure: TLS handshake: error:0A00010B:SSL routines:ssl3_get_record:wrong \
                 version number",
            ),
            (
                "missing valid address",
                "connect failed: missing valid address",
            ),
        ] {
            assert_eq!(describe_connect(io), ours, "{io}");
        }
    }

    #[test]
    fn each_phase_has_its_kind() {
        let error = |phase, cause: &str| {
            send_error(&surf::Error::new(
                surf::StatusCode::BadGateway,
                Failure {
                    phase,
                    cause: cause.to_owned(),
                },
            ))
        };
        let refused = error(Phase::Connect, "Connection refused (os error 111)");
        assert_eq!(refused.kind(), SourceErrorKind::Connect);
        assert_eq!(
            refused.to_string(),
            "cannot connect: connection refused (os error 111)"
        );
        let closed = error(Phase::Closed, "connection closed");
        assert_eq!(closed.kind(), SourceErrorKind::Io);
        assert_eq!(
            closed.to_string(),
            "connection failed: closed before an answer (connection closed)"
        );
        let garbage = error(Phase::NotHttp, "invalid HTTP version");
        assert_eq!(garbage.kind(), SourceErrorKind::Protocol);
        assert_eq!(
            garbage.to_string(),
            "unreadable answer: not an HTTP answer (invalid HTTP version)"
        );
    }
}
