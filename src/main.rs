//! The zmqperf binary: parse the command line, run, print the error chain, set the exit code.

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        // Each error's message already names its cause; the chain adds nothing.
        eprintln!("zmqperf: error: {e}");
        std::process::exit(e.exit_code());
    }
}
