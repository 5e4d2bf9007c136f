#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
mod connections;
mod errors;
mod nodes;
mod options;
mod source;
mod timer;

pub use body::{read_body, read_capped};
pub use errors::{describe_error_body, send_error};
pub use nodes::{ClusterNodes, Endpoint};
pub use options::OpenSearchOptions;
pub use source::OpenSearchSource;
pub use surf;
pub use timer::IoTimer;
