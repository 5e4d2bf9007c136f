//! Test doubles that ship with the library: a scripted source and a settable one, both
//! allocation-free and shared by reference.
//!
//! Both can say what a real cluster's poll says, the busiest node's search pool included:
//! in the limit mode (`load.control.admission=limit`) the pool is what the law holds the
//! node by. A double without a pool exercises the law without one (the cap learnt from the
//! front end's own completions, never below `load.control.admission.initial`), which a
//! real OpenSearch cluster's front ends run only before the first answer that carries the
//! pool, and after more than three answered polls in a row without it.

use core::cell::Cell;
use core::future::Future;

use embassy_sync::blocking_mutex::CriticalSectionMutex;

use super::{CpuSample, CpuSource, SourceError, SourceErrorKind};
use crate::CpuPercent;
use crate::atomic::{AtomicU8, AtomicU32, Ordering};
use crate::node_stats::SearchPool;

/// A test double that plays a fixed script of results, then repeats the last one, and
/// counts how often it was sampled. Share it by reference (`&ScriptedSource` is a
/// [`CpuSource`]) so a test can read [`ScriptedSource::taken`] while a monitor runs.
///
/// ```
/// use load_core::{CpuPercent, CpuSample, CpuSource, SourceError, source::{ScriptedSource, SourceErrorKind}};
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
///
/// A script says what a cluster says with each sample's search pool
/// ([`CpuSample::with_search_pool`]): here a one-core node (two search threads) whose load
/// per core rises from 1 to 4 tasks, on average since the poll before, as a real poll's
/// means are. Without a pool, the limit mode runs the law a cluster's front ends never run
/// (see the module's docs).
///
/// ```
/// use load_core::node_stats::SearchPool;
/// use load_core::{CpuPercent, CpuSample, CpuSource, SourceError, source::ScriptedSource};
///
/// const fn busy(cpu: u8, queued_milli: u32) -> Result<CpuSample, SourceError> {
///     Ok(CpuSample::local(CpuPercent::new(cpu))
///         .with_search_pool(SearchPool::new(2, 2, 0).with_means(1_000, queued_milli)))
/// }
/// static NODE: [Result<CpuSample, SourceError>; 2] = [busy(60, 0), busy(99, 3_000)];
/// let source = ScriptedSource::new(&NODE);
/// futures::executor::block_on(async {
///     let load = |s: CpuSample| s.search_pool.and_then(|p| p.load_per_core_milli());
///     assert_eq!(load((&source).sample().await.unwrap()), Some(1_000));
///     assert_eq!(load((&source).sample().await.unwrap()), Some(4_000));
/// });
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

    fn kind(&self) -> super::SourceKind {
        super::SourceKind::Fixed
    }
}

/// A test double whose value the test sets at any time (`None`: unknown, or fail with
/// [`FixedSource::fail`]), and the busiest node's search pool with it
/// ([`FixedSource::set_pool`]); it counts samples. Share it by reference.
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
///
/// With a search pool it says what a cluster's poll says, and the limit mode runs the law
/// production runs; without one, the law without a pool (see the module's docs):
///
/// ```
/// use load_core::node_stats::SearchPool;
/// use load_core::{CpuPercent, CpuSource, FixedSource};
///
/// static NODE: FixedSource = FixedSource::new(CpuPercent::new(95));
/// // A one-core node (two search threads): now both running and three searches waiting;
/// // on average since the last poll, one running and three waiting.
/// NODE.set_pool(Some(SearchPool::new(2, 2, 3).with_means(1_000, 3_000)));
/// let sample = futures::executor::block_on((&NODE).sample()).unwrap();
/// assert_eq!(sample.search_pool.and_then(|p| p.load_per_core_milli()), Some(4_000));
/// NODE.set_pool(None);
/// let sample = futures::executor::block_on((&NODE).sample()).unwrap();
/// assert_eq!(sample.search_pool, None);
/// ```
pub struct FixedSource {
    value: AtomicU8,
    failing: AtomicU8,
    taken: AtomicU32,
    /// The search pool each sample reports; only the test's `set_pool` and the samples
    /// take the lock, never a request.
    pool: CriticalSectionMutex<Cell<Option<SearchPool>>>,
}

impl core::fmt::Debug for FixedSource {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FixedSource")
            .field("value", &self.value)
            .field("failing", &self.failing)
            .field("taken", &self.taken)
            .field("pool", &self.pool.lock(Cell::get))
            .finish()
    }
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
            pool: CriticalSectionMutex::new(Cell::new(None)),
        }
    }

    /// Changes the search pool reported with each sample (`None`: none, as a source that is
    /// not a cluster, or a cluster whose answer lacks it).
    pub fn set_pool(&self, pool: Option<SearchPool>) {
        self.pool.lock(|cell| cell.set(pool));
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
        let sample = CpuSample::local(CpuPercent::new(self.value.load(Ordering::Relaxed)));
        Ok(match self.pool.lock(Cell::get) {
            Some(pool) => sample.with_search_pool(pool),
            None => sample,
        })
    }
}

impl CpuSource for &FixedSource {
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send {
        core::future::ready(self.next())
    }

    fn kind(&self) -> super::SourceKind {
        super::SourceKind::Fixed
    }
}
