//! A background task's stop request and its "finished" signal.

use std::sync::atomic::{AtomicBool, Ordering};

use load_core::monitor::Stop;

/// A background task's stop request and its "finished" signal.
#[derive(Debug, Default)]
pub(crate) struct TaskState {
    pub(crate) stop: Stop,
    started: AtomicBool,
    finished: Stop,
}

impl TaskState {
    /// Marks the task as started: [`TaskState::shutdown`] then waits for it.
    pub(crate) fn start(&self) {
        self.started.store(true, Ordering::Release);
    }

    /// Whether the task was started.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Called by the task when it ends.
    pub(crate) fn finish(&self) {
        self.finished.request();
    }

    /// Asks the task to stop, and waits until it has, if it was started.
    pub(crate) async fn shutdown(&self) {
        self.stop.request();
        if self.started() {
            self.finished.wait().await;
        }
    }
}
