#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
mod errors;
mod nodes;
mod options;
mod source;
mod timer;

pub use body::{read_body, read_capped};
pub use errors::{connect_error, describe_error_body};
pub use nodes::{ClusterNodes, Endpoint};
pub use options::OpenSearchOptions;
pub use source::OpenSearchSource;
pub use surf;
pub use timer::IoTimer;
