//! The local loop (see `load_bench::local_loop`): run it through `bench/local_loop.sh`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match load_bench::local_loop::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("local_loop: {error}");
            ExitCode::FAILURE
        }
    }
}
