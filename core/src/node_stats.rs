//! An allocation-free parser of OpenSearch `_nodes/stats` bodies: the busiest node's CPU,
//! and the busiest node's search thread pool when the body has it.

use core::cell::Cell;
use core::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::CpuPercent;
use crate::json::{self, Invalid};

/// The request path that returns exactly what [`parse_node_stats`] reads: every node's
/// `os.cpu.percent`, its search thread pool's `threads`, `queue`, `active` and
/// `total_wait_time_in_nanos`, its shard searches' `query_time_in_millis` and
/// `fetch_time_in_millis` and its `timestamp` (what [`PoolTracker`] turns into means over
/// time), plus the `_nodes` header so that partial failures stay visible.
pub const NODE_STATS_PATH: &str = "/_nodes/stats/os,thread_pool,indices/search?filter_path=\
_nodes,nodes.*.timestamp,nodes.*.os.cpu.percent,nodes.*.thread_pool.search.threads,\
nodes.*.thread_pool.search.queue,nodes.*.thread_pool.search.active,\
nodes.*.thread_pool.search.total_wait_time_in_nanos,\
nodes.*.indices.search.query_time_in_millis,nodes.*.indices.search.fetch_time_in_millis";

pub use crate::search_pool::{PoolCounters, PoolTracker, SearchPool};

/// What a `_nodes/stats/os` body says about the cluster's CPU ([`parse_node_stats`]; a later
/// version may read more of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeStats {
    /// The highest `os.cpu.percent` over the nodes that could measure it; `0 %` when none
    /// could (Fess: the maximum starts at 0).
    pub max_cpu: CpuPercent,
    /// Entries in `nodes`, the nodes that answered.
    pub nodes: u32,
    /// Nodes whose percent was known (not `-1`, not missing).
    pub measured: u32,
    /// Nodes whose percent was refused: above 100, a fraction, `null`, or infinite. They
    /// are skipped like `-1` (the busiest valid node decides) and counted as failed
    /// ([`crate::CpuSample::cluster`]): one odd node must not fail the whole poll, which
    /// would fail open and switch control off for everyone.
    pub refused: u32,
    /// `_nodes.total`, when the body has the header.
    pub total: Option<u32>,
    /// `_nodes.failed`, when the body has the header: nodes that did not answer.
    pub failed: Option<u32>,
    /// The search thread pool of the most loaded node ([`SearchPool::busier_than`]: by the
    /// tasks it ran and had waiting per core since the previous poll when a
    /// [`PoolTracker`] gives the means, else by the tasks per thread now), when any node
    /// reports `threads`, `active` and `queue` as counts. A node that reports none, or an
    /// odd value, is left out; the CPU stands.
    pub search_pool: Option<SearchPool>,
}

/// Caps checked before parsing, because the JSON parser has no limits of its own.
///
/// Every body is first validated against JSON's grammar by an iterative scanner with
/// constant stack; only a well-formed body within both caps reaches the (recursive) parser,
/// so no body of any size or shape can exhaust the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest body accepted, in bytes.
    pub max_body: usize,
    /// Deepest nesting of objects and arrays accepted; values above 128 act as 128 (the
    /// validator keeps one bit per open container, and the parser recurses once per level).
    pub max_depth: usize,
}

impl Limits {
    /// 1 MiB and 64 levels: a 1,000-node filtered response is about 60 KiB and 5 levels
    /// deep; a full unfiltered one is a few KiB per node and under 10 levels.
    pub const DEFAULT: Limits = Limits {
        max_body: 1 << 20,
        max_depth: 64,
    };

    /// Limits with the given caps.
    #[must_use]
    pub const fn new(max_body: usize, max_depth: usize) -> Limits {
        Limits {
            max_body,
            max_depth,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Why a body could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The body is longer than [`Limits::max_body`].
    TooLarge {
        /// The body's length.
        len: usize,
        /// The cap.
        limit: usize,
    },
    /// Objects and arrays nest deeper than [`Limits::max_depth`].
    TooDeep {
        /// The cap.
        limit: usize,
    },
    /// A node's `os.cpu.percent` is not a number (a string, an object, ...): the body is
    /// not node stats. (A number out of range is a refused node, [`NodeStats::refused`].)
    PercentNotANumber,
    /// The body is an error response (`{"error": ...}`), not node stats.
    ErrorResponse,
    /// The body is not the JSON object expected.
    Json(JsonError),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::TooLarge { len, limit } => {
                write!(f, "body of {len} bytes exceeds the {limit}-byte limit")
            }
            ParseError::TooDeep { limit } => write!(f, "JSON nested deeper than {limit} levels"),
            ParseError::PercentNotANumber => f.write_str("os.cpu.percent is not a number"),
            ParseError::ErrorResponse => f.write_str("the body is an error response"),
            ParseError::Json(e) => write!(f, "invalid node stats JSON: {e}"),
        }
    }
}

impl core::error::Error for ParseError {}

/// A syntax error (with the byte offset where the body stops being JSON), or a body that is
/// JSON but not the shape expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError(JsonErrorKind);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JsonErrorKind {
    Syntax(json::Syntax),
    Shape(serde_json_core::de::Error),
}

impl JsonError {
    /// The byte offset at which the body stops being JSON; `None` when it is JSON of
    /// another shape than node stats (an array, a string where an object belongs, ...).
    #[must_use]
    pub fn offset(&self) -> Option<usize> {
        match self.0 {
            JsonErrorKind::Syntax(syntax) => Some(syntax.offset),
            JsonErrorKind::Shape(_) => None,
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            JsonErrorKind::Syntax(syntax) => fmt::Display::fmt(syntax, f),
            JsonErrorKind::Shape(e) => fmt::Display::fmt(e, f),
        }
    }
}

/// Reads a `_nodes/stats/os` body with [`Limits::DEFAULT`].
///
/// Takes the maximum `nodes.<id>.os.cpu.percent`, skipping nodes that report a negative
/// whole percent (`-1`: cannot measure) or have no `os`/`cpu`, and skipping, but counting
/// as [refused](NodeStats::refused), nodes whose percent is above 100, a fraction or `null`;
/// counts nodes; reads `_nodes.total` and `_nodes.failed` when present. `{}` (a
/// `filter_path` that matched nothing) reads as zero nodes at 0 %.
///
/// # Errors
///
/// [`ParseError`] for a body over the size or depth cap, non-JSON or truncated input, an
/// error response (`{"error": ...}`), and a percent that is not a number at all. Never
/// panics, whatever the bytes.
///
/// # Performance
///
/// One validating pass (JSON's grammar, exactly, with the depth cap), one parse; nothing is
/// allocated and no node id is copied.
///
/// ```
/// use load_core::node_stats::parse_node_stats;
///
/// let body = br#"{"_nodes":{"total":3,"successful":2,"failed":1},
///   "nodes":{"a":{"os":{"cpu":{"percent":3}}},"b":{"os":{"cpu":{"percent":87}}}}}"#;
/// let stats = parse_node_stats(body)?;
/// assert_eq!(stats.max_cpu.get(), 87);
/// assert_eq!((stats.nodes, stats.failed), (2, Some(1)));
/// # Ok::<(), load_core::node_stats::ParseError>(())
/// ```
pub fn parse_node_stats(body: &[u8]) -> Result<NodeStats, ParseError> {
    parse_node_stats_with(body, Limits::DEFAULT)
}

/// [`parse_node_stats`] with explicit [`Limits`].
///
/// # Errors
///
/// As [`parse_node_stats`].
pub fn parse_node_stats_with(body: &[u8], limits: Limits) -> Result<NodeStats, ParseError> {
    parse(body, limits, None)
}

/// [`parse_node_stats_with`], with each node's counters kept in `tracker` from one poll to
/// the next: from a node's second poll on, its pool has the mean tasks run and waiting since
/// the previous one ([`SearchPool::mean_active_milli`], [`SearchPool::mean_queue_milli`]),
/// and the busiest node is chosen by them. Call it once per poll with the same tracker.
///
/// ```
/// use load_core::node_stats::{parse_node_stats_tracked, Limits, PoolTracker};
///
/// let tracker: PoolTracker = PoolTracker::new();
/// let poll = |timestamp: u64, run: u64, wait: u64| {
///     format!(
///         r#"{{"nodes":{{"n1":{{"timestamp":{timestamp},"os":{{"cpu":{{"percent":97}}}},
///         "thread_pool":{{"search":{{"threads":2,"active":2,"queue":1,
///         "total_wait_time_in_nanos":{wait}}}}},
///         "indices":{{"search":{{"query_time_in_millis":{run},"fetch_time_in_millis":0}}}}}}}}}}"#
///     )
/// };
/// let first = parse_node_stats_tracked(poll(1_000, 0, 0).as_bytes(), Limits::DEFAULT, &tracker)?;
/// assert_eq!(first.search_pool.unwrap().mean_active_milli, None);
/// let second =
///     parse_node_stats_tracked(poll(2_000, 1_900, 600_000_000).as_bytes(), Limits::DEFAULT, &tracker)?;
/// let pool = second.search_pool.unwrap();
/// assert_eq!((pool.mean_active_milli, pool.mean_queue_milli), (Some(1_900), Some(600)));
/// assert_eq!(pool.load_per_core_milli(), Some(2_500));
/// # Ok::<(), load_core::node_stats::ParseError>(())
/// ```
///
/// # Errors
///
/// As [`parse_node_stats`].
pub fn parse_node_stats_tracked<const N: usize>(
    body: &[u8],
    limits: Limits,
    tracker: &PoolTracker<N>,
) -> Result<NodeStats, ParseError> {
    tracker.start_poll();
    parse(body, limits, Some(tracker))
}

fn parse(
    body: &[u8],
    limits: Limits,
    tracker: Option<&dyn Observe>,
) -> Result<NodeStats, ParseError> {
    if body.len() > limits.max_body {
        return Err(ParseError::TooLarge {
            len: body.len(),
            limit: limits.max_body,
        });
    }
    check(body, limits.max_depth)?;
    match parse_checked(body, false, tracker) {
        // A pool's value was no number: the CPU stands, read without pools.
        Err((_, true)) => parse_checked(body, true, None).map_err(|(e, _)| e),
        parsed => parsed.map_err(|(e, _)| e),
    }
}

/// What keeps nodes' counters between polls: [`PoolTracker`] of any capacity.
trait Observe {
    fn observe(&self, id: &[u8], pool: SearchPool, counters: PoolCounters) -> SearchPool;
}

impl<const N: usize> Observe for PoolTracker<N> {
    fn observe(&self, id: &[u8], pool: SearchPool, counters: PoolCounters) -> SearchPool {
        PoolTracker::observe(self, id, pool, counters)
    }
}

/// One pass over a checked body (`skip_pools`: without reading thread pools): the stats,
/// or the error and whether a pool's value caused it.
fn parse_checked(
    body: &[u8],
    skip_pools: bool,
    tracker: Option<&dyn Observe>,
) -> Result<NodeStats, (ParseError, bool)> {
    let ctx = Ctx {
        stats: Cell::default(),
        pool: Cell::default(),
        counters: Cell::default(),
        pool_error: Cell::default(),
        skip_pools,
        after_timestamp: Cell::default(),
        error: Cell::default(),
        tracker,
    };
    let mut deserializer = serde_json_core::de::Deserializer::new(body, None);
    let parsed = Top(&ctx)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match parsed {
        Ok(_) => Ok(ctx.stats.get()),
        Err(e) => Err((
            ctx.error
                .get()
                .unwrap_or(ParseError::Json(JsonError(JsonErrorKind::Shape(e)))),
            ctx.pool_error.get(),
        )),
    }
}

/// The `type` and `reason` of an OpenSearch/Elasticsearch error body
/// (`{"error":{"type":...,"reason":...},"status":...}`); `None` when the body is not such an
/// error. Strings are returned as written (JSON
/// escapes are not resolved). Used to describe failed polls.
///
/// ```
/// use load_core::node_stats::error_summary;
///
/// let body = br#"{"error":{"root_cause":[],"type":"security_exception","reason":"no permissions"},"status":403}"#;
/// assert_eq!(error_summary(body), Some(("security_exception", "no permissions")));
/// assert_eq!(error_summary(b"Unauthorized"), None);
/// ```
#[must_use]
pub fn error_summary(body: &[u8]) -> Option<(&str, &str)> {
    if body.len() > Limits::DEFAULT.max_body || check(body, Limits::DEFAULT.max_depth).is_err() {
        return None;
    }
    let summary = Cell::new(None);
    let mut deserializer = serde_json_core::de::Deserializer::new(body, None);
    ErrorTop(&summary).deserialize(&mut deserializer).ok()?;
    summary.get()
}

type Summary<'de> = Cell<Option<(&'de str, &'de str)>>;

struct ErrorTop<'c, 'de>(&'c Summary<'de>);
struct ErrorField<'c, 'de>(&'c Summary<'de>);

impl<'de> DeserializeSeed<'de> for ErrorTop<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(Object(self))
    }
}

impl<'de> Fields<'de> for ErrorTop<'_, 'de> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "error" => map.next_value_seed(ErrorField(self.0)),
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> DeserializeSeed<'de> for ErrorField<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ErrorField<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut kind, mut reason) = ("error", "");
        while let Some(key) = map.next_key::<&'de str>()? {
            match key {
                "type" => kind = map.next_value::<&'de str>()?,
                "reason" => reason = map.next_value::<&'de str>()?,
                _ => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        self.0.set(Some((kind, reason)));
        Ok(())
    }
}

/// Validates the whole body against JSON's grammar, with the depth cap, before the recursive
/// parser sees it: the parser then never descends deeper than the cap, whatever it skips.
fn check(body: &[u8], max_depth: usize) -> Result<(), ParseError> {
    json::validate(body, max_depth).map_err(|invalid| match invalid {
        Invalid::TooDeep { limit } => ParseError::TooDeep { limit },
        Invalid::Syntax(syntax) => ParseError::Json(JsonError(JsonErrorKind::Syntax(syntax))),
    })
}

struct Ctx<'c> {
    stats: Cell<NodeStats>,
    /// The search pool of the node being read: `threads`, `active`, `queue` as they come.
    pool: Cell<[Option<u32>; 3]>,
    /// The node's counters: `timestamp`, `query_time_in_millis`, `fetch_time_in_millis`,
    /// `total_wait_time_in_nanos`.
    counters: Cell<[Option<u64>; 4]>,
    /// Whether a pool's value was no number (then the body is read again, without pools),
    /// and whether this pass reads pools at all.
    pool_error: Cell<bool>,
    skip_pools: bool,
    /// Whether the node's last value read was its `timestamp`: a number that goes on after
    /// its integer part (`1.5`, `1e3`) fails at the next key, outside the value.
    after_timestamp: Cell<bool>,
    /// A typed error found by a visitor, reported instead of the parser's generic one.
    error: Cell<Option<ParseError>>,
    /// Where nodes' counters are kept between polls, if anywhere.
    tracker: Option<&'c dyn Observe>,
}

impl Ctx<'_> {
    fn set_counter(&self, slot: usize, value: u64) {
        let mut counters = self.counters.get();
        counters[slot] = Some(value);
        self.counters.set(counters);
    }

    fn update(&self, f: impl FnOnce(&mut NodeStats)) {
        let mut stats = self.stats.get();
        f(&mut stats);
        self.stats.set(stats);
    }
}

/// One level of the document: what to do with each field of an object.
trait Fields<'de>: Sized {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error>;
}

/// Visits an object field by field; `null` where an object may stand counts as absent.
struct Object<T>(T);

impl<'de, T: Fields<'de>> Visitor<'de> for Object<T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<&'de str>()? {
            self.0.field(key, &mut map)?;
        }
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// Implements `DeserializeSeed` for a level: an object, or `null` (absent).
macro_rules! object_seed {
    ($($level:ident),*) => {$(
        impl<'de> DeserializeSeed<'de> for $level<'_> {
            type Value = ();

            fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
                deserializer.deserialize_option(Object(self))
            }
        }
    )*};
}

struct Top<'c>(&'c Ctx<'c>);
struct Header<'c>(&'c Ctx<'c>);
struct Nodes<'c>(&'c Ctx<'c>);
struct Node<'c>(&'c Ctx<'c>);
struct Os<'c>(&'c Ctx<'c>);
struct Cpu<'c>(&'c Ctx<'c>);
struct ThreadPool<'c>(&'c Ctx<'c>);
struct Search<'c>(&'c Ctx<'c>);
struct Indices<'c>(&'c Ctx<'c>);
struct SearchStats<'c>(&'c Ctx<'c>);

object_seed!(
    Header,
    Nodes,
    Node,
    Os,
    Cpu,
    ThreadPool,
    Search,
    Indices,
    SearchStats
);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = ();

    // The document itself must be an object, not `null`.
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(Object(self))
    }
}

impl<'de> Fields<'de> for Top<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "_nodes" => map.next_value_seed(Header(self.0)),
            "nodes" => map.next_value_seed(Nodes(self.0)),
            "error" => {
                self.0.error.set(Some(ParseError::ErrorResponse));
                Err(de::Error::custom("error response"))
            }
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> Fields<'de> for Header<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "total" => {
                let total = map.next_value::<u32>()?;
                self.0.update(|s| s.total = Some(total));
            }
            "failed" => {
                let failed = map.next_value::<u32>()?;
                self.0.update(|s| s.failed = Some(failed));
            }
            _ => drop(map.next_value::<IgnoredAny>()?),
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Nodes<'_> {
    fn field<A: MapAccess<'de>>(&self, id: &str, map: &mut A) -> Result<(), A::Error> {
        self.0.update(|s| s.nodes = s.nodes.saturating_add(1));
        self.0.pool.set([None; 3]);
        self.0.counters.set([None; 4]);
        map.next_value_seed(Node(self.0)).inspect_err(|_| {
            // A timestamp that is no whole number fails past its integer part: a pool
            // error, as any other odd counter.
            if self.0.after_timestamp.get() {
                self.0.pool_error.set(true);
            }
        })?;
        // The node's pool, if it reported all of it, against the most loaded so far; with
        // the means since the previous poll when it reported its counters too.
        if let [Some(threads), Some(active), Some(queue)] = self.0.pool.get() {
            let mut pool = SearchPool::new(threads, active, queue);
            if let (Some(tracker), [Some(at), Some(query), Some(fetch), Some(wait)]) =
                (self.0.tracker, self.0.counters.get())
            {
                let counters = PoolCounters::new(at, query.saturating_add(fetch), wait);
                pool = tracker.observe(id.as_bytes(), pool, counters);
            }
            self.0.update(|s| {
                if s.search_pool
                    .is_none_or(|busiest| pool.busier_than(&busiest))
                {
                    s.search_pool = Some(pool);
                }
            });
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Node<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        self.0.after_timestamp.set(false);
        // Whatever fails inside a pool's part of the node (a value of another kind, a
        // counter that is no whole number) fails this pass only: the body is read again
        // without pools, and the CPU stands.
        let pool_error = |_: &A::Error| self.0.pool_error.set(true);
        match key {
            "os" => map.next_value_seed(Os(self.0)),
            "thread_pool" if !self.0.skip_pools => map
                .next_value_seed(ThreadPool(self.0))
                .inspect_err(pool_error),
            "indices" if !self.0.skip_pools => {
                map.next_value_seed(Indices(self.0)).inspect_err(pool_error)
            }
            "timestamp" if !self.0.skip_pools => {
                counter(self.0, 0, map)?;
                self.0.after_timestamp.set(true);
                Ok(())
            }
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> Fields<'de> for ThreadPool<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "search" => map.next_value_seed(Search(self.0)),
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

/// A cumulative counter into the node's slot `slot`: an integer in `0..=u64::MAX` written
/// as one (no fraction, no exponent), read exactly; anything else fails this pass, and the
/// body is read again without pools.
fn counter<'de, A: MapAccess<'de>>(
    ctx: &Ctx<'_>,
    slot: usize,
    map: &mut A,
) -> Result<(), A::Error> {
    let value = map
        .next_value::<u64>()
        .inspect_err(|_| ctx.pool_error.set(true))?;
    ctx.set_counter(slot, value);
    Ok(())
}

impl<'de> Fields<'de> for Indices<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "search" => map.next_value_seed(SearchStats(self.0)),
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> Fields<'de> for SearchStats<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "query_time_in_millis" => counter(self.0, 1, map),
            "fetch_time_in_millis" => counter(self.0, 2, map),
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> Fields<'de> for Search<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        let slot = match key {
            "threads" => 0,
            "active" => 1,
            "queue" => 2,
            "total_wait_time_in_nanos" => return counter(self.0, 3, map),
            _ => return map.next_value::<IgnoredAny>().map(drop),
        };
        // A count, exactly: a whole number in `0..=u32::MAX` (`null` reads as NaN). A
        // fraction or a negative leaves the node's pool unknown; a value that is no number
        // fails this pass, and the body is read again without pools.
        let value = map
            .next_value::<f64>()
            .inspect_err(|_| self.0.pool_error.set(true))?;
        let whole = libm::trunc(value) == value;
        let count = (whole && (0.0..=f64::from(u32::MAX)).contains(&value)).then_some(value as u32);
        let mut pool = self.0.pool.get();
        pool[slot] = count;
        self.0.pool.set(pool);
        Ok(())
    }
}

impl<'de> Fields<'de> for Os<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "cpu" => map.next_value_seed(Cpu(self.0)),
            _ => map.next_value::<IgnoredAny>().map(drop),
        }
    }
}

impl<'de> Fields<'de> for Cpu<'_> {
    fn field<A: MapAccess<'de>>(&self, key: &str, map: &mut A) -> Result<(), A::Error> {
        if key != "percent" {
            return map.next_value::<IgnoredAny>().map(drop);
        }
        // Read as a number of any form (`1e2`, `-1.0`); `null` reads as NaN.
        let percent = map.next_value::<f64>().inspect_err(|_| {
            self.0.error.set(Some(ParseError::PercentNotANumber));
        })?;
        // Whole, infinities included (NaN is not); `trunc` because `f64::fract` needs std.
        let whole = libm::trunc(percent) == percent;
        if percent < 0.0 && whole {
            // Negative, of any magnitude: the node cannot measure its CPU (`-1`); skipped.
        } else if whole && (0.0..=100.0).contains(&percent) {
            // Within 0..=100 and whole, so the conversion is exact.
            let cpu = CpuPercent::saturating(percent as u8);
            self.0.update(|s| {
                s.measured += 1;
                s.max_cpu = s.max_cpu.max(cpu);
            });
        } else {
            self.0.update(|s| s.refused = s.refused.saturating_add(1));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(body: &str) -> NodeStats {
        match parse_node_stats(body.as_bytes()) {
            Ok(stats) => stats,
            Err(e) => panic!("{body}: {e}"),
        }
    }

    #[test]
    fn empty_object_is_zero_nodes_at_zero() {
        assert_eq!(stats("{}"), NodeStats::default());
        assert_eq!(stats(" {\"nodes\":{}} \n").nodes, 0);
    }

    #[test]
    fn integral_numbers_in_any_form_are_integers() {
        let s = stats(
            r#"{"nodes":{"a":{"os":{"cpu":{"percent":1e2}}},"b":{"os":{"cpu":{"percent":-1.0}}}}}"#,
        );
        assert_eq!((s.max_cpu.get(), s.measured), (100, 1));
    }

    #[test]
    fn max_skips_unknown_and_missing() {
        let s = stats(
            r#"{"nodes":{"a":{"os":{"cpu":{"percent":-1}}},"b":{"os":{"cpu":{"percent":40,"load_average":{"1m":0.5}}}},
                "c":{"os":{"mem":{}}},"d":{"name":"x"},"e":{"os":null},"f":{"os":{"cpu":{"percent":7}}}}}"#,
        );
        assert_eq!(s.max_cpu.get(), 40);
        assert_eq!((s.nodes, s.measured), (6, 2));
        assert_eq!((s.total, s.failed), (None, None));
    }

    /// Found from outside: one node reporting a percent outside 0..=100 or a fraction
    /// failed the whole poll, and fail-open then read the whole cluster as 0 %.
    #[test]
    fn an_odd_node_is_a_failed_node_and_the_busiest_valid_node_decides() {
        for odd in [
            "3.5",
            "101",
            "-1.5",
            "null",
            "99999999999999999999",
            "1e999",
            "100.5",
        ] {
            let body = format!(
                r#"{{"_nodes":{{"total":3,"successful":3,"failed":0}},"nodes":{{"a":{{"os":{{"cpu":{{"percent":{odd}}}}}}},"b":{{"os":{{"cpu":{{"percent":87}}}}}},"c":{{"os":{{"cpu":{{"percent":12}}}}}}}}}}"#
            );
            let s = stats(&body);
            assert_eq!(
                (s.max_cpu.get(), s.measured, s.refused),
                (87, 2, 1),
                "{odd}"
            );
            let sample = crate::CpuSample::cluster(&s);
            assert_eq!(sample.cpu, CpuPercent::new(87), "{odd}");
            assert_eq!((sample.nodes, sample.failed), (3, 1), "{odd}");
        }
    }

    #[test]
    fn typed_errors() {
        for body in [
            r#"{"nodes":{"a":{"os":{"cpu":{"percent":"3"}}}}}"#,
            r#"{"nodes":{"a":{"os":{"cpu":{"percent":true}}}}}"#,
            r#"{"nodes":{"a":{"os":{"cpu":{"percent":[1]}}}}}"#,
        ] {
            assert_eq!(
                parse_node_stats(body.as_bytes()),
                Err(ParseError::PercentNotANumber),
                "{body}"
            );
        }
        assert_eq!(
            parse_node_stats(br#"{"error":{"type":"x"},"status":403}"#),
            Err(ParseError::ErrorResponse)
        );
        for body in [
            "",
            "null",
            "[]",
            "{",
            r#"{"nodes":"#,
            "{} x",
            "\u{0}",
            r#"{"nodes":[1]}"#,
        ] {
            assert!(
                matches!(parse_node_stats(body.as_bytes()), Err(ParseError::Json(_))),
                "{body:?}"
            );
        }
    }

    #[test]
    fn the_most_loaded_search_pool_is_kept() {
        let body = br#"{"_nodes":{"total":3,"successful":3,"failed":0},"nodes":{
            "a":{"os":{"cpu":{"percent":90}},"thread_pool":{"search":{"threads":4,"queue":0,"active":2}}},
            "b":{"thread_pool":{"search":{"queue":3,"active":2,"threads":2,"rejected":7}},"os":{"cpu":{"percent":40}}},
            "c":{"os":{"cpu":{"percent":50}},"thread_pool":{"search":{"threads":13,"queue":1,"active":13},"write":{"queue":99}}}}}"#;
        let stats = parse_node_stats(body).unwrap();
        assert_eq!(stats.max_cpu.get(), 90);
        assert_eq!(
            stats.search_pool,
            Some(SearchPool::new(2, 2, 3)),
            "b: 5 tasks for 2 threads"
        );
        assert_eq!(SearchPool::new(2, 2, 3).load_milli(), 2500);
    }

    #[test]
    fn an_odd_or_partial_pool_is_left_out_and_the_cpu_stands() {
        for pool in [
            r#"{"threads":2,"queue":-1,"active":1}"#,
            r#"{"threads":2,"queue":1.5,"active":1}"#,
            r#"{"threads":"2","queue":1,"active":1}"#,
            r#"{"threads":2,"queue":null,"active":1}"#,
            r#"{"threads":2,"queue":[1],"active":{"x":1}}"#,
            r#"{"threads":2,"active":1}"#,
            r#"{"threads":4294967296,"queue":1,"active":1}"#,
            r#"null"#,
            r#"{}"#,
        ] {
            let body = format!(
                r#"{{"nodes":{{"a":{{"os":{{"cpu":{{"percent":70}}}},"thread_pool":{{"search":{pool}}}}}}}}}"#
            );
            let stats = parse_node_stats(body.as_bytes()).unwrap_or_else(|e| panic!("{pool}: {e}"));
            assert_eq!(stats.max_cpu.get(), 70, "{pool}");
            assert_eq!(stats.search_pool, None, "{pool}");
        }
        // Whole numbers in any form count; the node without a pool does not reset another's.
        let stats = parse_node_stats(
            br#"{"nodes":{"a":{"thread_pool":{"search":{"threads":2e0,"queue":1,"active":2.0}}},"b":{"os":{"cpu":{"percent":5}}}}}"#,
        )
        .unwrap();
        assert_eq!(stats.search_pool, Some(SearchPool::new(2, 2, 1)));
    }

    #[test]
    fn an_odd_counter_or_pool_shape_drops_the_pools_and_the_cpu_stands() {
        let pool = r#""thread_pool":{"search":{"threads":2,"active":1,"queue":0}}"#;
        for odd in [
            r#""timestamp":1.5"#,
            r#""timestamp":1e3"#,
            r#""timestamp":-1"#,
            r#""timestamp":"1""#,
            r#""timestamp":18446744073709551616"#,
            r#""thread_pool":5"#,
            r#""thread_pool":{"search":[1]}"#,
            r#""thread_pool":{"search":{"total_wait_time_in_nanos":1.0}}"#,
            r#""indices":"x""#,
            r#""indices":{"search":true}"#,
            r#""indices":{"search":{"query_time_in_millis":2.5,"fetch_time_in_millis":1}}"#,
            r#""indices":{"search":{"fetch_time_in_millis":1E2}}"#,
        ] {
            // The odd value after the pool and before it, in a node of its own and in the
            // pool's node: the body reads, with no pool at all.
            for body in [
                format!(r#"{{"nodes":{{"a":{{{pool},{odd},"os":{{"cpu":{{"percent":70}}}}}}}}}}"#),
                format!(r#"{{"nodes":{{"a":{{{odd},{pool},"os":{{"cpu":{{"percent":70}}}}}}}}}}"#),
                format!(
                    r#"{{"nodes":{{"a":{{{pool}}},"b":{{{odd}}},"c":{{"os":{{"cpu":{{"percent":70}}}}}}}}}}"#
                ),
            ] {
                let stats =
                    parse_node_stats(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e}"));
                assert_eq!(
                    (stats.max_cpu.get(), stats.search_pool),
                    (70, None),
                    "{body}"
                );
            }
        }
    }

    #[test]
    fn caps_are_checked_first() {
        let limits = Limits::new(16, 3);
        assert_eq!(
            parse_node_stats_with(b"{                  }", limits),
            Err(ParseError::TooLarge { len: 20, limit: 16 })
        );
        assert_eq!(
            parse_node_stats_with(b"{\"a\":[[[1]]]}", Limits::new(100, 3)),
            Err(ParseError::TooDeep { limit: 3 })
        );
        // Brackets inside strings do not count.
        assert!(parse_node_stats_with(br#"{"a":"[[[[\"[["}"#, Limits::new(100, 3)).is_ok());
        let deep = [b'['; 100_000];
        assert_eq!(
            parse_node_stats(&deep),
            Err(ParseError::TooDeep { limit: 64 })
        );
    }
}
