//! Test doubles that ship with the library: a scripted source and a settable one, both
//! allocation-free and shared by reference.

use core::future::Future;

use super::{CpuSample, CpuSource, SourceError, SourceErrorKind};
use crate::CpuPercent;
use crate::atomic::{AtomicU8, AtomicU32, Ordering};

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
