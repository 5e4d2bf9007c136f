//! The limit mode's side of [`LoadControl`] ([`crate::AdmissionMode::Limit`]): admission with a
//! permit, the in-flight count, and the state the fleet law reads. Fess's mode and the
//! signal side are in the parent module; the counting itself is [`crate::admission`]'s.

use super::{Admission, IDLE, LoadControl, Permit, Ticket, Word};
use crate::AdmissionStats;
use crate::admission::Bound;
use crate::atomic::Ordering;
use crate::node_stats::SearchPool;
use crate::{Class, Clock, Decision, Instant, RejectReason};

impl LoadControl {
    /// [`LoadControl::check`] in the limit mode. A checked request is not counted, so an
    /// armed class rejects it, as Fess's rule does (a server that only checks would
    /// otherwise admit everything under a cap nobody fills); disarmed, it is admitted but
    /// while the flood bound holds and the requests [`LoadControl::admit`] counts are at
    /// the cap.
    #[cold]
    pub(super) fn check_limited(&self, word: Word, class: Class) -> Decision {
        let armed = self.armed(word, class);
        // No clock here: the probe's halving is for counted admissions only.
        if armed {
            self.reject(word, class)
        } else if self.limiter.in_flight() < self.limiter.bound(false, None).limit() {
            Decision::Allow
        } else {
            // The flood bound, a reason of its own.
            self.rejected.count(class, RejectReason::Flood);
            if word.monitor() {
                Decision::Allow
            } else {
                Decision::Reject(class)
            }
        }
    }

    /// Whether `class` (web or API; ambiguous: either) is armed in `word`.
    #[inline]
    pub(super) fn armed(&self, word: Word, class: Class) -> bool {
        match class {
            Class::Api => word.armed(true),
            Class::Ambiguous => word.armed(true) || word.armed(false),
            _ => word.armed(false),
        }
    }

    /// Admits a request by its target, with a permit to hold while it is served: the
    /// decision of [`LoadControl::check`], plus, in the limit mode
    /// ([`crate::AdmissionMode::Limit`]), the in-flight count. Dropping the permit counts the
    /// request out and records its latency on `clock` ([`crate::admission`]).
    ///
    /// # Performance
    ///
    /// In Fess's mode, what [`LoadControl::check`] costs: the permit holds nothing and its
    /// drop does nothing. In the limit mode, an atomic increment and a clock read when
    /// admitted, and at the drop a clock read, a decrement and two additions; no lock and
    /// no allocation.
    #[inline(always)]
    pub fn admit<'a, C: Clock + ?Sized>(
        &'a self,
        target: &str,
        clock: &'a C,
    ) -> Admission<Permit<'a, C>> {
        self.admit_class(self.paths.classify(target), clock)
    }

    /// [`LoadControl::admit`] for a request already classified.
    #[inline(always)]
    pub fn admit_class<'a, C: Clock + ?Sized>(
        &'a self,
        class: Class,
        clock: &'a C,
    ) -> Admission<Permit<'a, C>> {
        match self.acquire(class, clock) {
            Ok(ticket) => Admission::Admitted(Permit::new(self, clock, ticket)),
            Err(class) => Admission::Rejected(class),
        }
    }

    /// The name [`LoadControl::admit_class`] had before 0.4.
    #[deprecated(since = "0.4.0", note = "renamed `admit_class`")]
    #[inline(always)]
    pub fn admit_route<'a, C: Clock + ?Sized>(
        &'a self,
        class: Class,
        clock: &'a C,
    ) -> Admission<Permit<'a, C>> {
        self.admit_class(class, clock)
    }

    /// The building block of the permits: admits `class` as [`LoadControl::admit_class`]
    /// does, reading `clock` only when the request is counted; the caller must hand the
    /// ticket to [`LoadControl::release`] when the request completes.
    ///
    /// # Errors
    ///
    /// The class to answer with the busy response when the request is rejected.
    #[inline(always)]
    pub fn acquire<C: Clock + ?Sized>(&self, class: Class, clock: &C) -> Result<Ticket, Class> {
        // `check_class`'s fast path, on the same single load of the word.
        let (shift, reject_bit) = match class {
            Class::Excluded => return Ok(Ticket::UNCOUNTED),
            Class::Web => (Word::WEB_SHIFT, Word::REJECT_WEB),
            Class::Api => (Word::API_SHIFT, Word::REJECT_API),
            Class::Ambiguous => return self.acquire_ambiguous(clock),
        };
        let word = self.word.load(Ordering::Relaxed);
        if Word::off_at(word, shift) {
            return Ok(Ticket::UNCOUNTED);
        }
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        if word & (reject_bit | Word::LIMIT) == 0 {
            return Ok(Ticket::UNCOUNTED);
        }
        if word & Word::LIMIT != 0 {
            return self.acquire_limited(Word(word), class, clock);
        }
        match self.reject(Word(word), class) {
            Decision::Allow => Ok(Ticket::UNCOUNTED), // monitor mode
            Decision::Reject(class) => Err(class),
        }
    }

    /// [`LoadControl::acquire`] for a target routers could read as either class.
    #[cold]
    fn acquire_ambiguous<C: Clock + ?Sized>(&self, clock: &C) -> Result<Ticket, Class> {
        let word = self.word();
        if word.limit() {
            return self.acquire_limited(word, Class::Ambiguous, clock);
        }
        match self.check_ambiguous() {
            Decision::Allow => Ok(Ticket::UNCOUNTED),
            Decision::Reject(class) => Err(class),
        }
    }

    /// [`LoadControl::acquire`] in the limit mode.
    #[inline(never)]
    fn acquire_limited<C: Clock + ?Sized>(
        &self,
        word: Word,
        class: Class,
        clock: &C,
    ) -> Result<Ticket, Class> {
        let (web, api) = (word.controlled(false), word.controlled(true));
        let class = match class {
            Class::Excluded => return Ok(Ticket::UNCOUNTED),
            Class::Web if !web => return Ok(Ticket::UNCOUNTED),
            Class::Api if !api => return Ok(Ticket::UNCOUNTED),
            Class::Ambiguous if !web && !api => return Ok(Ticket::UNCOUNTED),
            Class::Ambiguous if api && (word.armed(true) || !web) => Class::Api,
            Class::Ambiguous => Class::Web,
            class => class,
        };
        if self.latch.load(Ordering::Relaxed) == IDLE {
            self.trip_latch();
        }
        let now = clock.now();
        let armed = self.armed(word, class);
        // The flood bound's look at a bucket's first request, where it watches requests (on a
        // machine whose CPU is the front end's own, or with `Watch::Requests`).
        self.limiter.arrive(now, armed);
        let bound = self.limiter.bound(armed, Some(now));
        if self.limiter.try_enter(bound.limit()) {
            return Ok(Ticket::counted(now));
        }
        self.limiter.refuse();
        let reason = if let Bound::Cap(_) = bound {
            RejectReason::Cap
        } else {
            RejectReason::Flood
        };
        self.rejected.count(class, reason);
        if word.monitor() {
            // Monitor mode: counted as a rejection, admitted, and in flight all the same.
            self.limiter.enter();
            return Ok(Ticket::counted(now));
        }
        Err(class)
    }

    /// Counts out a request admitted with `ticket` that completed at `now`, recording its
    /// latency (nothing for an uncounted ticket). Release a ticket on the control that
    /// issued it: one released elsewhere is ignored when that control has nothing in flight,
    /// and otherwise counts one of its requests out early.
    pub fn release(&self, mut ticket: Ticket, now: Instant) {
        if let Some(started) = ticket.take() {
            let word = self.word();
            let armed = word.armed(false) || word.armed(true);
            self.limiter.leave(started, now, armed);
        }
    }

    /// Counts out a request admitted with `ticket` without recording it as a completion:
    /// for a request whose latency is not the cluster's, because the client went away (a
    /// response future dropped before it was ready) or it was answered without the cluster
    /// (a 404 of the front end's own, a cache hit). Recorded, such requests would teach the
    /// cap a latency the cluster never gave: many instant ones lower it, for up to the ten
    /// seconds the least latency is kept.
    pub fn abandon(&self, mut ticket: Ticket) {
        if ticket.take().is_some() {
            self.limiter.abandon();
        }
    }

    /// A poll's reading of the busiest node's search thread pool (`None`: the poll did not
    /// report one), for the limit mode's fleet law ([`crate::admission`]): while a class is
    /// armed, the cap grows with the share of this front end's demand it refused since the
    /// last poll and shrinks with the busiest node's load per core over the operating
    /// point, while its CPU says it is saturated. Call it after
    /// [`LoadControl::update`] with the same poll's sample; a monitor's
    /// [`crate::monitor::ClusterSink`] does. Nothing happens in Fess's mode.
    pub fn observe_pool(&self, pool: Option<SearchPool>) {
        self.observe_load(pool, None);
    }

    /// Marks a poll of the cluster as sent, for the limit mode's fleet law: a node reads
    /// its stats about when the request reaches it, and the answer may come late (in a
    /// surge on a fresh front end, behind the surge's own connections), when what this
    /// front end holds is already the surge's. What it held at this call is what the
    /// answer's pool is weighed against ([`LoadControl::observe_pool`]). Call it as the
    /// request for the stats goes out; [`crate::monitor::run`] does, through
    /// [`crate::monitor::Sink::on_poll_sent`]. Without it, the answer is weighed against
    /// what the front end holds when it arrives. Nothing happens in Fess's mode.
    ///
    /// ```
    /// use load_core::node_stats::SearchPool;
    /// use load_core::{AdmissionMode, ControlConfig, CpuPercent, Instant, LoadControl, Outcome};
    ///
    /// let mut config = ControlConfig::new();
    /// config.admission = AdmissionMode::Limit;
    /// let control = LoadControl::from_config(&config);
    /// control.poll_sent();
    /// // ... the node's stats arrive ...
    /// let _ = control.update(Instant::from_secs(1), Outcome::Sample(CpuPercent::new(20)));
    /// control.observe_pool(Some(SearchPool::new(13, 1, 0)));
    /// assert!(!control.admission().flooding);
    /// ```
    pub fn poll_sent(&self) {
        if self.word().limit() {
            self.limiter.poll_sent();
        }
    }

    /// [`LoadControl::observe_pool`] with what a machine's sample says of itself: with
    /// `own_cores` ([`crate::CpuSample::own_cores`]: the CPU is this front end's own, over
    /// that many CPUs) and no pool, the law reads this front end's requests in flight as
    /// the load on those CPUs (running up to one a CPU, the rest waiting), as it reads a
    /// node's search pool.
    pub fn observe_load(&self, pool: Option<SearchPool>, own_cores: Option<u32>) {
        let word = self.word();
        if !word.limit() {
            return;
        }
        let cpu = self.cpu().map_or(0, crate::CpuPercent::get);
        self.limiter
            .on_poll(word.armed(false) || word.armed(true), cpu, pool, own_cores);
    }

    /// The limit mode's state: the cap, the requests in flight, the completions, the flood bound and what the last poll said of the
    /// cluster's search pool.
    #[must_use]
    pub fn admission(&self) -> AdmissionStats {
        let reading = self.limiter.reading();
        AdmissionStats {
            cap: self.limiter.cap(),
            cap_hundredths: self.limiter.cap_hundredths(),
            ceiling: self.limiter.bound(false, None).limit(),
            learned: self.limiter.learned(),
            in_flight: self.limiter.in_flight(),
            completed: self.limiter.completed(),
            flooding: self.limiter.flooding(),
            flood_engaged_at: self.limiter.flood_engaged_at(),
            rejected_flood: self.rejected.flood(),
            search_pool: reading.pool,
            refused_percent: reading.refused_percent,
            own_cores: reading.own_cores,
            saturated: self.limiter.saturated(),
        }
    }
}
