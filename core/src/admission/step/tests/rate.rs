//! The arrivals a flood is measured against, as a poll measures them.

use super::*;

/// A poll that leaves the class unbounded measures the arrivals per bucket since the last
/// poll's span start, over the clock's wrap too; a span under half a bucket measures
/// nothing and keeps its start; a poll that bounds the class keeps the rate as it was.
#[test]
fn a_poll_measures_the_rate_a_flood_is_measured_against() {
    let idle = Some(SearchPool::new(2, 0, 0).with_means(0, 0));
    let first = Law::DEFAULT.step(
        &PollState::NEW,
        &Poll {
            span: Some(span(1_000, 100)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        (first.rate, first.state.span),
        (None, Some(span(1_000, 100)))
    );
    let second = Law::DEFAULT.step(
        &first.state,
        &Poll {
            span: Some(span(2_000, 200)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        second.rate,
        Some(10 * 256),
        "100 arrivals over 1 s: 10 a bucket"
    );
    let wrapped = Law::DEFAULT.step(
        &PollState {
            span: Some(span(u32::MAX - 499, u32::MAX - 9)),
            ..first.state
        },
        &Poll {
            span: Some(span(500, 90)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(wrapped.rate, Some(10 * 256), "across the wrap");
    let short = Law::DEFAULT.step(
        &second.state,
        &Poll {
            span: Some(span(2_040, 300)),
            ..poll(false, 20, idle, 256)
        },
    );
    assert_eq!(
        (short.rate, short.state.span),
        (None, Some(span(2_000, 200)))
    );
    let bounded = Law::DEFAULT.step(
        &second.state,
        &Poll {
            span: Some(span(3_000, 400)),
            ..poll(true, 99, idle, 256)
        },
    );
    assert_eq!(bounded.rate, None, "armed: the rate stays");
    assert_eq!(
        bounded.state.span,
        Some(span(3_000, 400)),
        "measured from here on"
    );
}

/// A quiet spell (a gap of over a second between two looks) is not measured: the arrivals
/// are measured over the time without it, so that the light traffic that resumes after it
/// is not measured as almost nothing, whichever polls fall in it.
#[test]
fn a_quiet_spell_is_not_measured_as_a_rate() {
    let idle = Some(SearchPool::new(2, 0, 0).with_means(0, 0));
    let at = |state: &PollState, span: Span| {
        Law::DEFAULT.step(
            state,
            &Poll {
                span: Some(span),
                ..poll(false, 20, idle, 256)
            },
        )
    };
    let first = at(&PollState::NEW, span(1_000, 0));
    // 20 arrivals from 1 s to 1.2 s, then 1.7 s of quiet, then 40 from 2.9 s to 3.3 s.
    let resumed = at(
        &first.state,
        Span {
            ms: 3_300,
            arrived: 60,
            quiet_ms: 1_700,
        },
    );
    assert_eq!(
        resumed.rate,
        Some(10 * 256),
        "60 over the 600 ms without the spell"
    );
    // A span that is all quiet measures nothing and keeps its start.
    let quiet = at(
        &resumed.state,
        Span {
            ms: 4_800,
            arrived: 61,
            quiet_ms: 3_200,
        },
    );
    assert_eq!(quiet.rate, None);
    assert_eq!(quiet.state.span, resumed.state.span);
}
