#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod cgroup;
mod locate;
mod system;

pub use cgroup::{Cgroup, CgroupError, CgroupSource, CgroupVersion, cpu_percent};
pub use system::{DEFAULT_CGROUP_ROOT, LocalCpu, SystemSource};
