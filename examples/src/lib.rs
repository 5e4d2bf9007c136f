//! The demo search server: Fess-style load control embedded in an HTTP/1.1 server
//! (hyper 1) on smol or async-std.
//!
//! The binary `search-server` is a thin `main` over this library; the end-to-end tests run
//! the same code in-process. What to copy into your own server is in [`app::App::handle`]:
//! one `guard.admit(target)` before routing, its permit held until the answer is complete,
//! and the prebuilt busy response on rejection.
#![forbid(unsafe_code)]

pub mod app;
pub mod cli;
pub mod corpus;
pub mod dashboard;
pub mod http;
pub mod metrics;
pub mod peer;
pub mod search;
pub mod server;
