//! Benchmarks of the load-control crates. Not written yet.
#![forbid(unsafe_code)]
