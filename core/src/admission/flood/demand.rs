//! What a span's arrivals say of the demand: a surge, calm, or too soon to tell, against
//! the rate the front end received before or what a machine's own cores serve.

use crate::admission::window::BUCKET_MS;

/// What the arrivals since the start of a span say of the demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Demand {
    /// Above the rate before by more than noise: a quarter of it and two requests a
    /// bucket, over the span or a bucket, whichever is longer. Without a rate of at least
    /// one request a bucket (a front end that received 0.4 a bucket and now receives 2.6 is
    /// surging, within that noise), any arrivals are: growth alone says a flood.
    Surge,
    /// Within the noise over a span long enough to tell: at least [`SPAN_MS`], and long
    /// enough for the rate before to bring [`TELLING`] requests (at most a second).
    Calm,
    /// Within the noise so far, over a span too short to tell.
    Unknown,
}

/// Requests the rate before brings over a span that tells calm demand from a surge.
const TELLING: u64 = 8;

/// The least span, in milliseconds, that can tell the demand is calm, or measure a rate:
/// half a bucket (looks come once a bucket, at its first completion, so two of them are
/// less than a bucket apart as often as more).
pub(crate) const SPAN_MS: u64 = BUCKET_MS / 2;

/// The longest span, in milliseconds, on a machine's own cores: two buckets, over which
/// arrivals at what its cores serve (20 a bucket, a core at 5 ms a request) are within the
/// noise's edge by two deviations.
pub(crate) const OWN_SPAN_MS: u64 = 2 * BUCKET_MS;

/// What `arrivals` over `elapsed` ms say, against `before` a bucket (both in 256ths of a
/// request).
pub(super) fn demand(arrivals: u64, elapsed: u64, before: u64) -> Demand {
    if before < 256 {
        return Demand::Surge;
    }
    let noise = (before + before / 4 + 2 * 256).saturating_mul(elapsed.max(BUCKET_MS)) / BUCKET_MS;
    if arrivals > noise {
        Demand::Surge
    } else if elapsed >= SPAN_MS.max((TELLING * 256 * BUCKET_MS / before).min(1_000)) {
        Demand::Calm
    } else {
        Demand::Unknown
    }
}

/// What `arrivals` over `elapsed` ms say on a machine whose CPU is the front end's own and
/// serves `capacity` a bucket (both in 256ths of a request): a surge is more than its cores
/// serve (by a quarter and two requests, as noise), whatever the demand before, so that a
/// burst after a quiet spell, or in a fresh front end's first second, is told from a flood
/// too; calm is no more than they serve, over half a bucket at least. Between the two the
/// span goes on: a surge at twice what the cores serve is within a quarter of the noise's
/// edge, and a calm verdict there let the bound go in a surge's first second (the local
/// loop's step test, one round in two).
pub(super) fn demand_within(arrivals: u64, elapsed: u64, capacity: u64) -> Demand {
    let noise =
        (capacity + capacity / 4 + 2 * 256).saturating_mul(elapsed.max(BUCKET_MS)) / BUCKET_MS;
    if arrivals > noise {
        Demand::Surge
    } else if elapsed >= SPAN_MS && arrivals <= capacity.saturating_mul(elapsed) / BUCKET_MS {
        Demand::Calm
    } else {
        Demand::Unknown
    }
}
