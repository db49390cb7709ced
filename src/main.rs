//! The zmqperf binary: parse the command line, run, print the error chain, set the exit code.

mod cli;

use clap::Parser;

/// A write to standard output that failed: a closed pipe (`| head`) ends the program
/// quietly, as other Unix tools do; anything else (a full disk) is an error that says so.
/// Whatever was measured was recorded before the report was printed.
fn on_stdout_failure(info: &std::panic::PanicHookInfo) -> bool {
    let msg = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or("");
    let Some(why) = msg.strip_prefix("failed printing to stdout: ") else {
        return false;
    };
    if why.contains("Broken pipe") {
        std::process::exit(0);
    }
    eprintln!(
        "zmqperf: error: writing to standard output failed: {why}; free some space or send the report to a file with -o (a run is in the history already: zmqperf show last)"
    );
    std::process::exit(11);
}

fn main() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !on_stdout_failure(info) {
            default_hook(info);
        }
    }));
    let args = cli::Cli::parse();
    if let Err(e) = cli::run(args) {
        // Each error's message already names its cause; the chain adds nothing.
        eprintln!("zmqperf: error: {e}");
        std::process::exit(e.exit_code());
    }
}
