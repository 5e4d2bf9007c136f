//! The closed-loop experiment (see `load_bench::closed_loop`): run it through
//! `bench/closed_loop.sh`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match load_bench::closed_loop::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("closed_loop: {error}");
            ExitCode::FAILURE
        }
    }
}
