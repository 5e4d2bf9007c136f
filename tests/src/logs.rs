//! Captures `log` records so tests can assert on what was logged.

use std::sync::{Mutex, OnceLock};

/// One captured record.
#[derive(Clone, Debug)]
pub struct Record {
    /// Its level.
    pub level: log::Level,
    /// Its formatted message.
    pub message: String,
    /// Its target (the module that logged it, unless it named another).
    pub target: String,
}

struct Capture {
    records: Mutex<Vec<Record>>,
}

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let record = Record {
            level: record.level(),
            message: record.args().to_string(),
            target: record.target().to_owned(),
        };
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(record);
    }

    fn flush(&self) {}
}

static CAPTURE: OnceLock<&'static Capture> = OnceLock::new();

fn capture() -> &'static Capture {
    CAPTURE.get_or_init(|| {
        let capture: &'static Capture = Box::leak(Box::new(Capture {
            records: Mutex::new(Vec::new()),
        }));
        // Only the first logger set wins; this is the only one tests set.
        let _ = log::set_logger(capture);
        log::set_max_level(log::LevelFilter::Trace);
        capture
    })
}

/// Installs the capture (once per test binary) and empties it.
pub fn start() {
    capture()
        .records
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

/// Everything captured since [`start`].
#[must_use]
pub fn records() -> Vec<Record> {
    capture()
        .records
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}
