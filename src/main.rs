//! The zmqperf binary: parse the command line, run, print the error chain, set the exit code.

mod cli;

use clap::{CommandFactory, FromArgMatches};
use zmqperf::zmq::{self, LIBZMQ_ENV};

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

/// Loads the libzmq asked for by `--libzmq` (anywhere on the command line) or
/// `ZMQPERF_LIBZMQ`, before anything touches libzmq, and passes the choice on to every child
/// process through the environment. A library that cannot be used is a bad value (exit 3).
fn choose_libzmq() {
    let args: Vec<String> = std::env::args().collect();
    let given = args.iter().enumerate().find_map(|(i, a)| {
        if a == "--libzmq" {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix("--libzmq=").map(String::from)
        }
    });
    let Some(choice) = given.or_else(|| std::env::var(LIBZMQ_ENV).ok()) else {
        return;
    };
    match zmq::library::choose(&choice) {
        Ok(info) => {
            // A path is passed on absolute, so children started elsewhere load the same file.
            let inherited = if info.source == "path" {
                info.path.clone()
            } else {
                info.source.clone()
            };
            // Still one thread: nothing reads the environment concurrently.
            std::env::set_var(LIBZMQ_ENV, inherited);
        }
        Err(e) => {
            eprintln!("zmqperf: error: {e}");
            std::process::exit(3);
        }
    }
}

/// What `zmqperf --version` prints: zmqperf's version, the libzmq it measures and this
/// executable's GNU build-id (what a remote node's must equal).
fn version_text() -> String {
    let l = zmq::library();
    let mut t = format!(
        "{}\nlibzmq {} ({}: {})\n  capabilities (zmq_has): {}\n  sha256: {}",
        zmqperf::VERSION,
        l.version,
        l.source,
        l.path,
        if l.capabilities.is_empty() {
            "none".to_string()
        } else {
            l.capabilities.join(", ")
        },
        l.sha256
    );
    if !l.build.is_empty() {
        t.push_str(&format!("\n  built: {}", l.build));
    }
    // Last, so the libzmq line stays the second (`--vs-libzmq` reads it there).
    match zmqperf::build_id::own_build_id() {
        Ok(id) => t.push_str(&format!("\nbuild-id: {id}")),
        Err(e) => t.push_str(&format!("\nbuild-id: unknown ({e})")),
    }
    t
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
    // A node process takes everything, its libzmq included, from the spec on its stdin.
    if std::env::args().nth(1).as_deref() == Some("__node") && std::env::args().len() == 2 {
        std::process::exit(zmqperf::runner::place::child_main(None));
    }
    choose_libzmq();
    let long_version: &'static str = Box::leak(version_text().into_boxed_str());
    let args = cli::Cli::command()
        .long_version(long_version)
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m))
        .unwrap_or_else(|e| refuse_negative(e).exit());
    let result = cli::run(args);
    // The socket files of ipc paths this process bound go with it, success or failure.
    zmqperf::net::remove_bound_ipc_files();
    if let Err(e) = result {
        // Each error's message already names its cause; the chain adds nothing.
        eprintln!("zmqperf: error: {e}");
        std::process::exit(e.exit_code());
    }
}
