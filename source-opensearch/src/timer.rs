//! The default timer of the cluster source: `async-io`'s, the reactor surf runs on anyway.

/// Times the cluster source's timeout with the timer of `async-io`, the reactor that surf's
/// HTTP client runs on anyway (one background thread per process, started by the first
/// exchange), whatever executor polls the future. A runtime's own sleep replaces it with
/// [`crate::OpenSearchSource::with_sleep`].
#[derive(Clone, Copy, Debug, Default)]
pub struct IoTimer;

impl load_core::time::Sleep for IoTimer {
    async fn sleep(&self, duration: std::time::Duration) {
        async_io::Timer::after(duration).await;
    }
}
