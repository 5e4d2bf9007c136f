//! `/admin/load`: the library's operator page (`load_runtime::dashboard`, feature
//! `dashboard`), which the demo fills with its crawler's counts.

pub use load_runtime::dashboard::*;
