//! One poll's result applied as the monitor loop applies it: counted, handed to the sink,
//! and logged with Fess's rule.

use super::Sink;
use crate::{CpuSample, Instant, Outcome, SourceError, failures::FailureCounter};

/// Applies the outcome of a poll that completed at `now` as [`super::run`] does: counts it in
/// `failures`, hands it to `sink`, and logs it with Fess's rule (a success at DEBUG as
/// `<name>: N%`; a failure as `Failed to get <source> CPU stats: <cause>`, at WARN for
/// failures 1 to 3 of a streak and at DEBUG after). A loop of your own that calls this
/// for each poll keeps Fess's log lines.
///
/// ```
/// use load_core::monitor::{ClusterSink, handle_outcome};
/// use load_core::{ClusterStatus, Instant, LoadControl, SourceError, source::SourceErrorKind};
///
/// let control = LoadControl::new(80, 100);
/// let status = ClusterStatus::new();
/// let sink = ClusterSink::new(&control, &status);
/// // A poll of your own failed: counted, taken (0 %, as in Fess) and logged at WARN.
/// let failed = Err(SourceError::of(SourceErrorKind::Timeout));
/// handle_outcome(&sink, status.failures(), Instant::from_secs(1), failed);
/// assert_eq!(status.failures().consecutive(), 1);
/// ```
pub fn handle_outcome<K: Sink + ?Sized>(
    sink: &K,
    failures: &FailureCounter,
    now: Instant,
    outcome: Result<CpuSample, SourceError>,
) {
    match outcome {
        Ok(sample) => {
            failures.count_success();
            sink.on_sample(now, &sample);
            match sample.cpu {
                Some(cpu) if sample.failed == 0 => log::debug!("{}: {}", K::NAME, cpu),
                Some(cpu) => log::debug!(
                    "{}: {} ({} node(s) answered, {} failed)",
                    K::NAME,
                    cpu,
                    sample.nodes,
                    sample.failed
                ),
                None => log::debug!("{}: unknown", K::NAME),
            }
        }
        Err(error) => {
            let level = failures.count_failure().log_level();
            sink.on_error(now, &error);
            sink.on_outcome(now, Outcome::Failed);
            log::log!(level, "Failed to get {} CPU stats: {}", K::SOURCE, error);
        }
    }
}
