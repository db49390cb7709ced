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

/// clap reads `-5` as an unknown flag and tips "use -- -5", which the value parser then
/// refuses anyway: say at once that the number must not be negative (a bad value, exit 3).
fn refuse_negative(e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let negative = arg
        .strip_prefix('-')
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_digit() || c == '.');
    if negative {
        // clap names only the first "flag" of `-64`; the user typed the whole number.
        let arg = std::env::args()
            .find(|a| a.starts_with(arg.as_str()))
            .unwrap_or_else(|| arg.clone());
        eprintln!(
            "zmqperf: error: invalid value '{arg}': negative; counts, sizes, rates, durations and high-water marks are 0 or more"
        );
        std::process::exit(3);
    }
    e
}

fn main() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !on_stdout_failure(info) {
            default_hook(info);
        }
    }));
    let args = cli::Cli::try_parse().unwrap_or_else(|e| refuse_negative(e).exit());
    if let Err(e) = cli::run(args) {
        // Each error's message already names its cause; the chain adds nothing.
        eprintln!("zmqperf: error: {e}");
        std::process::exit(e.exit_code());
    }
}
