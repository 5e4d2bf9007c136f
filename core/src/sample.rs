//! Where CPU samples come from: the [`CpuSource`] trait, its sample and error types, and
//! allocation-free test doubles. `no_std`, like everything the decisions use; the sources
//! that need an OS live in `sources`.

use crate::atomic::{AtomicU8, AtomicU32, Ordering};
use core::fmt;
use core::future::Future;

use crate::{CpuPercent, Snippet};

/// One reading of a CPU source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSample {
    /// The CPU: for a cluster, the busiest node (0 % when no node could measure, as in
    /// Fess); for a machine, its usage, `None` when it cannot measure.
    pub cpu: Option<CpuPercent>,
    /// Nodes that answered (1 for a machine).
    pub nodes: u32,
    /// Nodes that did not answer (a cluster's `_nodes.failed`, 0 when unknown).
    pub failed: u32,
    /// Which of the source's addresses answered, as an index into its list (0 for a source
    /// with one address).
    pub endpoint: u8,
}

impl CpuSample {
    /// A sample of one machine.
    #[must_use]
    pub const fn local(cpu: Option<CpuPercent>) -> CpuSample {
        CpuSample {
            cpu,
            nodes: 1,
            failed: 0,
            endpoint: 0,
        }
    }

    /// The same sample, answered by the address at `endpoint` of the source's list.
    #[must_use]
    pub const fn from_endpoint(self, endpoint: u8) -> CpuSample {
        CpuSample { endpoint, ..self }
    }
}

/// A source of CPU samples: a cluster polled over HTTP, this machine, or a test double.
///
/// The future is `Send` so that monitors can run on multi-threaded executors.
///
/// # Example
///
/// A source that reads a value some other part of the program keeps up to date:
///
/// ```
/// use core::sync::atomic::{AtomicU8, Ordering};
/// use load_core::{CpuPercent, CpuSample, CpuSource, SourceError};
///
/// struct FromAtomic<'a>(&'a AtomicU8);
///
/// impl CpuSource for FromAtomic<'_> {
///     async fn sample(&mut self) -> Result<CpuSample, SourceError> {
///         let percent = self.0.load(Ordering::Relaxed);
///         Ok(CpuSample::local(CpuPercent::new(percent)))
///     }
/// }
///
/// let value = AtomicU8::new(42);
/// let sample = futures::executor::block_on(FromAtomic(&value).sample()).unwrap();
/// assert_eq!(sample.cpu, CpuPercent::new(42));
/// ```
pub trait CpuSource {
    /// Takes one sample.
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send;
}

impl<S: CpuSource + Send + ?Sized> CpuSource for &mut S {
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send {
        (**self).sample()
    }
}

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
    /// The connection failed while reading.
    Io,
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
/// use load_core::{SourceError, SourceErrorKind};
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
    /// use load_core::{SourceError, SourceErrorKind};
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

/// A test double that plays a fixed script of results, then repeats the last one, and
/// counts how often it was sampled. Share it by reference (`&ScriptedSource` is a
/// [`CpuSource`]) so a test can read [`ScriptedSource::taken`] while a monitor runs.
///
/// ```
/// use load_core::{CpuPercent, CpuSample, CpuSource, ScriptedSource, SourceError, SourceErrorKind};
///
/// static SCRIPT: [Result<CpuSample, SourceError>; 2] = [
///     Ok(CpuSample::local(CpuPercent::new(90))),
///     Ok(CpuSample::local(CpuPercent::new(10))),
/// ];
/// let source = ScriptedSource::new(&SCRIPT);
/// futures::executor::block_on(async {
///     assert_eq!((&source).sample().await.unwrap().cpu, CpuPercent::new(90));
///     assert_eq!((&source).sample().await.unwrap().cpu, CpuPercent::new(10));
///     assert_eq!((&source).sample().await.unwrap().cpu, CpuPercent::new(10));
/// });
/// assert_eq!(source.taken(), 3);
/// ```
#[derive(Debug)]
pub struct ScriptedSource<'a> {
    script: &'a [Result<CpuSample, SourceError>],
    taken: AtomicU32,
}

impl<'a> ScriptedSource<'a> {
    /// A source that plays `script` (an empty script fails with
    /// [`SourceErrorKind::Unsupported`]).
    #[must_use]
    pub const fn new(script: &'a [Result<CpuSample, SourceError>]) -> ScriptedSource<'a> {
        ScriptedSource {
            script,
            taken: AtomicU32::new(0),
        }
    }

    /// How many samples were taken.
    #[must_use]
    pub fn taken(&self) -> u32 {
        self.taken.load(Ordering::Relaxed)
    }

    fn next(&self) -> Result<CpuSample, SourceError> {
        let n = self.taken.fetch_add(1, Ordering::Relaxed) as usize;
        match self.script.get(n).or(self.script.last()) {
            Some(result) => *result,
            None => Err(SourceError::of(SourceErrorKind::Unsupported)),
        }
    }
}

impl CpuSource for &ScriptedSource<'_> {
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send {
        core::future::ready(self.next())
    }
}

/// A test double whose value the test sets at any time (`None`: unknown, or fail with
/// [`FixedSource::fail`]); it counts samples. Share it by reference.
///
/// ```
/// use load_core::{CpuPercent, CpuSource, FixedSource};
///
/// let source = FixedSource::new(CpuPercent::new(20));
/// source.set(CpuPercent::new(95));
/// let sample = futures::executor::block_on((&source).sample()).unwrap();
/// assert_eq!(sample.cpu, CpuPercent::new(95));
/// source.fail(true);
/// assert!(futures::executor::block_on((&source).sample()).is_err());
/// assert_eq!(source.taken(), 2);
/// ```
#[derive(Debug)]
pub struct FixedSource {
    value: AtomicU8,
    failing: AtomicU8,
    taken: AtomicU32,
}

const FIXED_UNKNOWN: u8 = u8::MAX;

impl FixedSource {
    /// A source reporting `cpu`.
    #[must_use]
    pub const fn new(cpu: Option<CpuPercent>) -> FixedSource {
        FixedSource {
            value: AtomicU8::new(match cpu {
                Some(cpu) => cpu.get(),
                None => FIXED_UNKNOWN,
            }),
            failing: AtomicU8::new(0),
            taken: AtomicU32::new(0),
        }
    }

    /// Changes the reported value.
    pub fn set(&self, cpu: Option<CpuPercent>) {
        self.value.store(
            cpu.map_or(FIXED_UNKNOWN, CpuPercent::get),
            Ordering::Relaxed,
        );
    }

    /// Makes every sample fail (`true`) or succeed again (`false`).
    pub fn fail(&self, failing: bool) {
        self.failing.store(u8::from(failing), Ordering::Relaxed);
    }

    /// How many samples were taken.
    #[must_use]
    pub fn taken(&self) -> u32 {
        self.taken.load(Ordering::Relaxed)
    }

    fn next(&self) -> Result<CpuSample, SourceError> {
        self.taken.fetch_add(1, Ordering::Relaxed);
        if self.failing.load(Ordering::Relaxed) != 0 {
            return Err(SourceError::new(SourceErrorKind::Other, "scripted failure"));
        }
        Ok(CpuSample::local(CpuPercent::new(
            self.value.load(Ordering::Relaxed),
        )))
    }
}

impl CpuSource for &FixedSource {
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send {
        core::future::ready(self.next())
    }
}

/// Either of two sources, chosen at run time (for instance the cluster when its address is
/// configured, else this machine).
impl<A, B> CpuSource for futures::future::Either<A, B>
where
    A: CpuSource + Send,
    B: CpuSource + Send,
{
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        match self {
            futures::future::Either::Left(a) => a.sample().await,
            futures::future::Either::Right(b) => b.sample().await,
        }
    }
}
