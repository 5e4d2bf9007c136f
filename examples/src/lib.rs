//! The demo search server that shows load control at work. Not written yet.
#![forbid(unsafe_code)]
