//! The cap's fixed point: a cap is kept in 1/256ths of a request, so that the law can move
//! it by fractions, and a fraction is one more request that share of the time. Its
//! ceiling is the room a cap leaves for a load that doubles.

use crate::Instant;

/// The least cap of the fleet law, in 1/256ths of a request: one request an eighth of the
/// time.
pub(crate) const MIN_FINE: u32 = 32;

/// The whole requests a cap of `fine` 256ths admits at `now`: a fraction `f` is one more
/// during the first `f` milliseconds of every 256, so that the allowed concurrency
/// averages the fraction whatever the arrival rate (`None`: no clock, no fraction).
#[inline]
pub(crate) fn at(fine: u32, now: Option<Instant>) -> u32 {
    let extra = now.is_some_and(|now| ((now.as_millis() % 256) as u32) < (fine & 0xFF));
    (fine >> 8) + u32::from(extra)
}

/// The ceiling of `cap`, `2 cap + ⌈3 √(2 cap)⌉`: twice the cap and three standard
/// deviations of a Poisson count of that mean, room for a load that doubles.
#[inline]
pub(crate) const fn ceiling(cap: u32) -> u32 {
    let twice = cap.saturating_mul(2);
    twice.saturating_add(deviations(twice))
}

/// Three standard deviations of a Poisson count of mean `mean`, rounded up:
/// `ceil(3 sqrt(mean))`.
#[inline]
const fn deviations(mean: u32) -> u32 {
    // 3 sqrt(x) = sqrt(9 x).
    let nine = mean.saturating_mul(9);
    let root = nine.isqrt();
    if root * root < nine { root + 1 } else { root }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_twice_the_cap_and_three_deviations() {
        for (cap, ceiling_) in [
            (0, 0),
            (1, 7),
            (2, 10),
            (4, 17),
            (8, 28),
            (50, 130),
            (u32::MAX, u32::MAX),
        ] {
            assert_eq!(ceiling(cap), ceiling_, "{cap}");
        }
    }

    #[test]
    fn a_fraction_is_one_more_request_that_share_of_the_time() {
        let fine = 256 + 64;
        let more = (0..256)
            .filter(|n| at(fine, Some(Instant::from_millis(1_000 + n))) == 2)
            .count();
        assert_eq!(more, 64);
        assert_eq!(at(fine, None), 1, "no clock, no fraction");
        assert_eq!(
            at(u32::MAX, Some(Instant::from_millis(0))),
            (u32::MAX >> 8) + 1
        );
    }
}
