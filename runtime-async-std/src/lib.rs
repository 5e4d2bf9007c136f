//! Load control on the `async-std` runtime.
//!
//! This crate has no API yet: it will spawn `load-core`'s monitors on `async-std` and
//! offer ready-made request and background-work handles. Use `load-core` directly
//! meanwhile.
#![forbid(unsafe_code)]
