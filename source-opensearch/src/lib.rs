#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
mod client;
mod connections;
mod errors;
mod http10;
mod nodes;
mod options;
mod source;
mod timer;

pub use client::{ClusterClient, ClusterResponse, Method};
pub use options::OpenSearchOptions;
pub use source::OpenSearchSource;
pub use timer::IoTimer;
