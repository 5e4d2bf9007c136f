//! Why a sample could not be taken: [`SourceError`], small and `Copy`.

use core::fmt;

use crate::node_stats::ParseError;
use crate::text::Snippet;

/// What kind of failure a [`SourceError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// The address could not be resolved or connected to, or TLS failed.
    Connect,
    /// The whole exchange took longer than its timeout.
    Timeout,
    /// The server answered with a status that is not 2xx.
    Status(u16),
    /// The answer's body is not what the source reads.
    Body(BodyError),
    /// The connection failed while reading, or closed before an answer.
    Io,
    /// The node answered with bytes that are not an HTTP answer: the connection was made,
    /// but nothing in it could be read as a status line and headers.
    Protocol,
    /// The source cannot measure at all on this machine.
    Unsupported,
    /// Anything else, described by the detail.
    Other,
}

/// Why a sample could not be taken: a small `Copy` value with a kind and up to 160 bytes of
/// detail (for an HTTP status, the first line of the body).
///
/// It never carries credentials: sources must not put them in the detail.
///
/// ```
/// use load_core::{SourceError, source::SourceErrorKind};
///
/// let error = SourceError::new(SourceErrorKind::Status(401), "Unauthorized");
/// assert_eq!(error.to_string(), "HTTP status 401: Unauthorized");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SourceError {
    kind: SourceErrorKind,
    detail: Snippet<160>,
    at: Snippet<48>,
}

impl SourceError {
    /// An error of `kind` with a detail (cut at 160 bytes).
    #[must_use]
    pub fn new(kind: SourceErrorKind, detail: &str) -> SourceError {
        SourceError {
            kind,
            detail: Snippet::new(detail),
            at: Snippet::EMPTY,
        }
    }

    /// An error of `kind` without detail.
    #[must_use]
    pub fn of(kind: SourceErrorKind) -> SourceError {
        SourceError::of_const(kind)
    }

    /// [`SourceError::of`], usable in constants and statics (test scripts).
    #[must_use]
    pub const fn of_const(kind: SourceErrorKind) -> SourceError {
        SourceError {
            kind,
            detail: Snippet::EMPTY,
            at: Snippet::EMPTY,
        }
    }

    /// What kind of failure it is.
    #[must_use]
    pub const fn kind(&self) -> SourceErrorKind {
        self.kind
    }

    /// The detail, possibly empty.
    #[must_use]
    pub fn detail(&self) -> &str {
        self.detail.as_str()
    }

    /// The same error, saying which address it came from (never with a password: pass
    /// the address without its credentials). `Display` then starts with it.
    ///
    /// ```
    /// use load_core::{SourceError, source::SourceErrorKind};
    ///
    /// let error = SourceError::of(SourceErrorKind::Timeout).at("http://node2:9200");
    /// assert_eq!(error.to_string(), "http://node2:9200: timed out");
    /// assert_eq!(error.address(), "http://node2:9200");
    /// ```
    #[must_use]
    pub fn at(self, address: &str) -> SourceError {
        SourceError {
            at: Snippet::new(address),
            ..self
        }
    }

    /// The address the error came from, if the source said ([`SourceError::at`]).
    #[must_use]
    pub fn address(&self) -> &str {
        self.at.as_str()
    }
}

/// Why an answer's body was refused, in terms any source can use; the detail of the
/// [`SourceError`] says more (for the cluster source: the OpenSearch parser's error).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BodyError {
    /// Longer than the source reads.
    TooLarge {
        /// The body's length (or the bytes read, one past the cap, when it was cut off).
        len: usize,
        /// The cap.
        limit: usize,
    },
    /// Nested deeper than the source reads.
    TooDeep {
        /// The cap.
        limit: usize,
    },
    /// Not in the format expected: `offset` is where it stops being well-formed, `None`
    /// when it is well-formed but of another shape.
    Malformed {
        /// The byte offset of the first error, if it is a syntax error.
        offset: Option<usize>,
    },
    /// Well-formed and of the right shape, but with a value the source refuses (an
    /// out-of-range percent, an error object where a reading belongs).
    Unexpected,
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge { len, limit } => {
                write!(f, "body of {len} bytes exceeds the {limit}-byte limit")
            }
            BodyError::TooDeep { limit } => write!(f, "body nested deeper than {limit} levels"),
            BodyError::Malformed { offset: Some(at) } => write!(f, "malformed body at byte {at}"),
            BodyError::Malformed { offset: None } => f.write_str("body of an unexpected shape"),
            BodyError::Unexpected => f.write_str("unexpected value in the body"),
        }
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.at.is_empty() {
            write!(f, "{}: ", self.at)?;
        }
        match self.kind {
            SourceErrorKind::Connect => f.write_str("cannot connect")?,
            SourceErrorKind::Timeout => f.write_str("timed out")?,
            SourceErrorKind::Status(status) => write!(f, "HTTP status {status}")?,
            SourceErrorKind::Body(_) => f.write_str("unreadable body")?,
            SourceErrorKind::Io => f.write_str("connection failed")?,
            SourceErrorKind::Protocol => f.write_str("unreadable answer")?,
            SourceErrorKind::Unsupported => f.write_str("CPU usage cannot be measured here")?,
            SourceErrorKind::Other => f.write_str("sampling failed")?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl fmt::Debug for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceError")
            .field("kind", &self.kind)
            .field("detail", &self.detail)
            .field("at", &self.at)
            .finish()
    }
}

impl core::error::Error for SourceError {}

impl From<ParseError> for SourceError {
    /// The parser's error as a [`BodyError`], its own words as the detail.
    fn from(e: ParseError) -> Self {
        let kind = match e {
            ParseError::TooLarge { len, limit } => BodyError::TooLarge { len, limit },
            ParseError::TooDeep { limit } => BodyError::TooDeep { limit },
            ParseError::Json(json) => BodyError::Malformed {
                offset: json.offset(),
            },
            _ => BodyError::Unexpected,
        };
        let mut detail = heapless::String::<160>::new();
        let _ = fmt::write(&mut detail, format_args!("{e}"));
        SourceError::new(SourceErrorKind::Body(kind), &detail)
    }
}
