//! What the law's step reads and writes: the state only the poll touches ([`PollState`]),
//! what the front end held when a poll was sent ([`Sent`]), one poll's reading and what the
//! requests share with it ([`Poll`]), and what the step changes ([`Step`]).

use super::Averaged;
use crate::admission::flood::Span;
use crate::node_stats::SearchPool;

/// What only the poll touches, between one poll and the next.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PollState {
    /// The busiest node's CPU, smoothed ([`Law::smooth`](crate::admission::law::Law::smooth)),
    /// in thousandths of a percent (`None`: no poll yet).
    pub(crate) cpu_milli: Option<u32>,
    /// Whether the smoothed CPU says the cluster is saturated.
    pub(crate) saturated: bool,
    /// Whether the last poll found the class bounded (armed or a flood bounded): the first
    /// bounded poll after an unbounded one is where the cap starts.
    pub(crate) bounded: bool,
    /// Whether the last poll found the class armed: the refusals up to a poll that arms it
    /// while a flood bound holds were the bound's, and do not grow the cap.
    pub(crate) armed: bool,
    /// Whether the fleet law holds (a poll reported the search pool within the grace).
    pub(crate) fleet: bool,
    /// Polls in a row without the pool.
    pub(crate) missed: u32,
    /// The last poll's search pool (`None`: none, or none within the grace), for the stats.
    pub(crate) pool: Option<SearchPool>,
    /// The CPUs of a machine whose CPU is the front end's own, when the last poll read its
    /// own load over them as the pool ([`own_pool`](super::own::own_pool)), for the stats.
    pub(crate) own_cores: Option<u32>,
    /// The completion and refusal counts (wrapping) the last poll took, and the requests
    /// in flight then.
    pub(crate) completed_seen: u32,
    pub(crate) refused_seen: u32,
    pub(crate) in_flight_seen: u32,
    /// On a machine's own load with
    /// [`OwnGate::Demand`](crate::admission::law::OwnGate::Demand): the CPU its demand would
    /// take and the requests that arrived, averaged over the polls (`None`: no poll that served
    /// a request yet).
    pub(crate) demand: Option<Averaged>,
    /// The share of this front end's demand refused between the last two polls that took
    /// the counts, in percent.
    pub(crate) refused_percent: u8,
    /// The start of the flood bound's span the last poll found ([`Poll::span`]): the
    /// arrivals since are measured from it.
    pub(crate) span: Option<Span>,
    /// This front end's share of the busiest node's load (its mean in flight over the
    /// node's tasks, on average since the poll before) at the last poll that left its
    /// class unbounded with the node at or below the operating point (`None`: none yet).
    pub(crate) share: Option<f32>,
    /// What the front end held when the poll now answering was sent (`None`: the monitor
    /// did not say it sent one, or the last answer took it).
    pub(crate) sent: Option<Sent>,
}

/// What the front end held when a poll was sent ([`PollState::sent`]): a node reads its
/// stats about then, and its answer may come late (in a surge on a fresh front end, behind
/// the surge's own connections), when what the front end holds is the surge's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sent {
    /// The cap, the mean in flight or the recent peak, whichever is more, in 1/256ths.
    pub(crate) holds: u32,
    /// The requests in flight on average over the second before, in 1/256ths.
    pub(crate) mean_fine: u32,
}

impl Sent {
    /// What a front end holds with the cap `fine`, `mean_fine` in flight on average and a
    /// recent peak of `peak`: the cap, the mean or the peak, whichever is more.
    pub(crate) fn holds(fine: u32, mean_fine: u32, peak: u32) -> u32 {
        fine.max(mean_fine).max(peak.saturating_mul(256))
    }
}

impl PollState {
    /// Before the first poll.
    pub(crate) const NEW: PollState = PollState {
        cpu_milli: None,
        saturated: false,
        bounded: false,
        armed: false,
        fleet: false,
        missed: 0,
        pool: None,
        own_cores: None,
        completed_seen: 0,
        refused_seen: 0,
        in_flight_seen: 0,
        demand: None,
        refused_percent: 0,
        span: None,
        share: None,
        sent: None,
    };
}

/// One poll, and what the requests share with it at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Poll {
    /// Whether a class is armed.
    pub(crate) armed: bool,
    /// The busiest node's CPU, as the poll read it.
    pub(crate) cpu: u8,
    /// The busiest node's search pool (`None`: the poll did not report one).
    pub(crate) pool: Option<SearchPool>,
    /// Without a pool, the CPUs of a machine whose CPU is the front end's own: its own
    /// requests in flight are the load on them ([`own_pool`](super::own::own_pool)).
    pub(crate) own_cores: Option<u32>,
    /// The front end's completions and refusals at the limit in all (wrapping).
    pub(crate) completed: u32,
    pub(crate) refused: u32,
    /// Requests in flight now.
    pub(crate) in_flight: u32,
    /// The recent peak of the in-flight count.
    pub(crate) peak: u32,
    /// The requests in flight on average over the last second, in 1/256ths.
    pub(crate) mean_fine: u32,
    /// The cap now, in 1/256ths of a request.
    pub(crate) fine: u32,
    /// Whether the flood bound holds.
    pub(crate) flooding: bool,
    /// The start of the flood bound's span now (`None`: no look yet).
    pub(crate) span: Option<Span>,
    /// What the front end held at its last poll that left its class unbounded (with
    /// [`FloodBase::Below`](crate::admission::law::FloodBase::Below), one that found the node
    /// at or below its operating point; the initial cap before any), in 1/256ths: what a flood
    /// is measured against, and the most [`Start::Share`](crate::admission::law::Start::Share)
    /// starts the cap at.
    pub(crate) held: u32,
}

/// What a poll changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    /// The state for the next poll.
    pub(crate) state: PollState,
    /// The new cap, in 1/256ths (`None`: left as it is).
    pub(crate) fine: Option<u32>,
    /// Whether the flood bound is released.
    pub(crate) release: bool,
    /// Whether the cap now comes from the law (it is learnt).
    pub(crate) learned: bool,
    /// What a flood is measured against from now on, in 256ths (`None`: as it was): what
    /// the front end holds at a poll that leaves its class unbounded
    /// (`FloodBase::Quiet`).
    pub(crate) quiet: Option<u32>,
    /// The arrivals per bucket a flood is measured against from now on, in 256ths (`None`:
    /// as it was): what the front end received since the last poll, taken at a poll that
    /// leaves the class unbounded as what it holds is, and without a pool at any such poll.
    pub(crate) rate: Option<u32>,
}
