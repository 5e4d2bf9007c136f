//! What a node-stats body says, read from serde_json's document as the poll's parser is
//! documented to read it: every entry in order, duplicates included, a key spelled with an
//! escape matching no field (the parser compares keys as written).

use std::collections::HashMap;
use std::fmt;

use load_core::node_stats::SearchPool;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON document that keeps every object entry in order and how each key was spelled.
#[derive(Debug)]
pub enum Doc {
    Null,
    Bool,
    /// A non-negative integer literal that fits `u64` (serde_json's `visit_u64`).
    Unsigned(u64),
    /// A negative integer literal that fits `i64`.
    Signed(i64),
    /// Any other number: a fraction, an exponent, or an integer beyond 64 bits.
    Float(f64),
    Str,
    Array,
    Object(Vec<(Key, Doc)>),
}

/// An object key: its text, and whether the body spelled it with an escape.
#[derive(Debug)]
pub struct Key {
    pub text: String,
    pub escaped: bool,
}

impl Key {
    /// Whether the parser, which compares keys as written, reads this key as `name`.
    fn is(&self, name: &str) -> bool {
        !self.escaped && self.text == name
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Doc, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
        Ok(Doc::Bool)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Doc, E> {
        Ok(Doc::Unsigned(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Doc, E> {
        Ok(Doc::Signed(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Doc, E> {
        Ok(Doc::Float(v))
    }
    fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
        Ok(Doc::Str)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        while seq.next_element::<Doc>()?.is_some() {}
        Ok(Doc::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            entries.push((key, map.next_value::<Doc>()?));
        }
        Ok(Doc::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    // serde_json lends a key from the body when it has no escape, and copies it otherwise.
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key, E> {
        Ok(Key {
            text: v.to_owned(),
            escaped: false,
        })
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Key {
            text: v.to_owned(),
            escaped: true,
        })
    }
}

/// What the model reads from one body.
#[derive(Debug, Default)]
pub struct Reading {
    /// Something in it is not node stats: the parser must refuse the body.
    pub fatal: bool,
    /// A pool value of the wrong kind: the body reads, with no pool at all.
    pub pool_error: bool,
    /// Every node id observed was spelled without an escape (the tracker keys the ids as
    /// written; the model knows them only then).
    pub ids_known: bool,
    /// Every node's pool as reported (threads, active and queue all counts).
    pub pools: Vec<SearchPool>,
    /// The busiest of them, with the means from `kept`, by `SearchPool::busier_than`.
    pub busiest: Option<SearchPool>,
}

/// Why a pass stops.
enum Stop {
    /// Not node stats.
    Fatal,
    /// A pool value of the wrong kind.
    Pool,
}

/// Reads `doc` as the poll's parser does: a first pass reading pools, observing each node
/// that reported its pool and counters in `kept` (its counters as the tracker keeps them,
/// the means from the previous ones) until the end or the first stop; after a pool stop, a
/// second pass without pools decides whether the body reads at all.
pub fn read(doc: &Doc, kept: &mut HashMap<String, [u64; 3]>) -> Reading {
    let mut reading = Reading {
        ids_known: true,
        ..Reading::default()
    };
    match top(doc, true, kept, &mut reading) {
        Ok(()) => {}
        Err(Stop::Fatal) => reading.fatal = true,
        Err(Stop::Pool) => {
            reading.pool_error = true;
            let mut again = Reading::default();
            if top(doc, false, &mut HashMap::new(), &mut again).is_err() {
                reading.fatal = true;
            }
        }
    }
    if reading.pool_error || reading.fatal {
        reading.busiest = None;
    }
    reading
}

/// An object's entries, `null` as none; anything else is `stop`.
fn entries(doc: &Doc, stop: fn() -> Stop) -> Result<&[(Key, Doc)], Stop> {
    match doc {
        Doc::Object(entries) => Ok(entries),
        Doc::Null => Ok(&[]),
        _ => Err(stop()),
    }
}

fn fatal() -> Stop {
    Stop::Fatal
}

fn pool() -> Stop {
    Stop::Pool
}

fn top(
    doc: &Doc,
    pools: bool,
    kept: &mut HashMap<String, [u64; 3]>,
    reading: &mut Reading,
) -> Result<(), Stop> {
    // The document itself must be an object, not even `null`.
    let Doc::Object(fields) = doc else {
        return Err(Stop::Fatal);
    };
    for (key, value) in fields {
        if key.is("_nodes") {
            for (key, value) in entries(value, fatal)? {
                if (key.is("total") || key.is("failed")) && !is_u32(value) {
                    return Err(Stop::Fatal);
                }
            }
        } else if key.is("nodes") {
            for (id, node) in entries(value, fatal)? {
                read_node(id, node, pools, kept, reading)?;
            }
        } else if key.is("error") {
            return Err(Stop::Fatal);
        }
    }
    Ok(())
}

fn read_node(
    id: &Key,
    node: &Doc,
    pools: bool,
    kept: &mut HashMap<String, [u64; 3]>,
    reading: &mut Reading,
) -> Result<(), Stop> {
    // threads, active, queue; timestamp, query, fetch, wait: the last of each wins.
    let mut counts: [Option<u32>; 3] = [None; 3];
    let mut counters: [Option<u64>; 4] = [None; 4];
    for (key, value) in entries(node, fatal)? {
        if key.is("os") {
            for (key, value) in entries(value, fatal)? {
                if key.is("cpu") {
                    for (key, value) in entries(value, fatal)? {
                        if key.is("percent")
                            && !matches!(
                                value,
                                Doc::Null | Doc::Unsigned(_) | Doc::Signed(_) | Doc::Float(_)
                            )
                        {
                            return Err(Stop::Fatal);
                        }
                    }
                }
            }
        } else if !pools {
            continue;
        } else if key.is("timestamp") {
            counters[0] = Some(counter(value)?);
        } else if key.is("thread_pool") {
            for (key, value) in entries(value, pool)? {
                if key.is("search") {
                    for (key, value) in entries(value, pool)? {
                        let slot = ["threads", "active", "queue"].iter().position(|n| key.is(n));
                        if let Some(slot) = slot {
                            counts[slot] = count(value)?;
                        } else if key.is("total_wait_time_in_nanos") {
                            counters[3] = Some(counter(value)?);
                        }
                    }
                }
            }
        } else if key.is("indices") {
            for (key, value) in entries(value, pool)? {
                if key.is("search") {
                    for (key, value) in entries(value, pool)? {
                        if key.is("query_time_in_millis") {
                            counters[1] = Some(counter(value)?);
                        } else if key.is("fetch_time_in_millis") {
                            counters[2] = Some(counter(value)?);
                        }
                    }
                }
            }
        }
    }
    let [Some(threads), Some(active), Some(queue)] = counts else {
        return Ok(());
    };
    let mut here = SearchPool::new(threads, active, queue);
    reading.pools.push(here);
    if let [Some(at), Some(query), Some(fetch), Some(wait)] = counters {
        reading.ids_known &= !id.escaped;
        let now = [at, query.saturating_add(fetch), wait];
        if let Some(before) = kept.insert(id.text.clone(), now) {
            here = means(here, before, now);
        }
    }
    if reading.busiest.is_none_or(|busiest| here.busier_than(&busiest)) {
        reading.busiest = Some(here);
    }
    Ok(())
}

/// The means from `before` to `now` (timestamp ms, run ms, wait ns), when the clock moved
/// on and no counter went back; the pool as reported otherwise.
fn means(pool: SearchPool, before: [u64; 3], now: [u64; 3]) -> SearchPool {
    let [elapsed, run, wait] = [0, 1, 2].map(|i| now[i].checked_sub(before[i]));
    match (elapsed, run, wait) {
        (Some(elapsed), Some(run), Some(wait)) if elapsed > 0 => {
            let active = u128::from(run) * 1000 / u128::from(elapsed);
            let queue = u128::from(wait) / 1000 / u128::from(elapsed);
            let cap = |v: u128| u32::try_from(v).unwrap_or(u32::MAX);
            pool.with_means(cap(active), cap(queue))
        }
        _ => pool,
    }
}

/// `_nodes.total` and `failed`: a non-negative integer literal within `u32`.
fn is_u32(value: &Doc) -> bool {
    matches!(value, Doc::Unsigned(v) if *v <= u64::from(u32::MAX))
}

/// A cumulative counter: a non-negative integer literal within `u64`, read exactly; any
/// other value is a pool error.
fn counter(value: &Doc) -> Result<u64, Stop> {
    match value {
        Doc::Unsigned(v) => Ok(*v),
        _ => Err(Stop::Pool),
    }
}

/// A pool count: a whole number in `0..=u32::MAX` in any spelling (`1e2`, `2.0`), else
/// unknown; `null` is unknown; a value that is no number is a pool error.
fn count(value: &Doc) -> Result<Option<u32>, Stop> {
    let number = match value {
        Doc::Null => return Ok(None),
        Doc::Unsigned(v) => return Ok(u32::try_from(*v).ok()),
        Doc::Signed(v) => return Ok(u32::try_from(*v).ok()),
        Doc::Float(v) => *v,
        _ => return Err(Stop::Pool),
    };
    let whole = number.trunc() == number && (0.0..=f64::from(u32::MAX)).contains(&number);
    Ok(whole.then_some(number as u32))
}
