//! The zmqperf binary: parse the command line, run, print the error chain, set the exit code.

mod cli;

use clap::{CommandFactory, FromArgMatches};
use zmqperf::zmq::{self, LIBZMQ_ENV};

/// Set when standard output was closed when zmqperf started (`>&-`): it is then kept on
/// /dev/full, so that a write to it fails and says so (it would be thrown away silently
/// otherwise).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether standard output was closed when zmqperf started. Rust's runtime puts /dev/null,
/// opened for reading and writing, on a closed standard descriptor before `main`; a shell
/// redirection `> /dev/null` opens it for writing only. So /dev/null opened read-write on
/// descriptor 1 is taken for a closed standard output (or descriptor 1 itself closed).
fn stdout_was_closed() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // SAFETY: F_GETFL only reads descriptor 1's flags.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    if flags == -1 {
        return true;
    }
    if flags & libc::O_ACCMODE != libc::O_RDWR {
        return false;
    }
    let (Ok(out), Ok(null)) = (
        std::fs::metadata("/proc/self/fd/1"),
        std::fs::metadata("/dev/null"),
    ) else {
        return false;
    };
    out.file_type().is_char_device() && out.rdev() == null.rdev()
}

/// Keeps descriptor 1 on /dev/full when standard output was closed (see
/// [`STDOUT_CLOSED`]). Where /dev/full cannot be opened, a closed standard output is
/// refused at once (exit 11).
fn guard_closed_stdout() {
    if !stdout_was_closed() {
        return;
    }
    STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: a constant NUL-terminated path; dup2 and close on descriptors this owns.
    let ok = unsafe {
        let fd = libc::open(c"/dev/full".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        fd == 1 || (fd >= 0 && libc::dup2(fd, 1) == 1 && libc::close(fd) == 0)
    };
    if !ok {
        zmqperf::errln!("zmqperf: error: standard output is closed (>&-): give the output somewhere to go (> FILE, or > /dev/null to throw it away)");
        std::process::exit(11);
    }
}

/// A write to standard output that failed: a closed pipe (`| head`, the reader left) ends
/// the program quietly, as other Unix tools do; anything else (a full disk, a standard
/// output that was closed) is an error that says so (exit 11), and points to the run in
/// the history only when this command recorded one.
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
    let closed = STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed);
    if why.contains("Broken pipe") && !closed {
        std::process::exit(0);
    }
    let recorded = match cli::output::RECORDED_RUN.get() {
        Some(id) => format!(" (run {id} is in the history already: zmqperf show {id})"),
        None => String::new(),
    };
    if closed {
        zmqperf::errln!(
            "zmqperf: error: standard output is closed (started with >&-), so the output was not printed; give it somewhere to go (> FILE, or -o FILE where the command has it){recorded}"
        );
    } else {
        zmqperf::errln!(
            "zmqperf: error: writing to standard output failed: {why}; free some space or send the output to a file (> FILE, or -o FILE where the command has it){recorded}"
        );
    }
    std::process::exit(11);
}

/// The subcommand on the command line (the first word that is not an option or the value
/// of `--libzmq`).
fn subcommand() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--libzmq" {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// Commands that never load libzmq (the history's, completions and the manual): a bad
/// `--libzmq`/`ZMQPERF_LIBZMQ` does not stop them.
const WITHOUT_LIBZMQ: [&str; 7] = [
    "history",
    "show",
    "report",
    "compare",
    "import",
    "completions",
    "man",
];

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
    if subcommand().is_some_and(|c| WITHOUT_LIBZMQ.contains(&c.as_str())) {
        return;
    }
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
            zmqperf::errln!("zmqperf: error: {e}");
            std::process::exit(3);
        }
    }
}

/// What `zmqperf --version` prints: zmqperf's version, the libzmq it measures and this
/// executable's GNU build-id (what a remote node's must equal).
fn version_text() -> String {
    let l = zmq::library();
    let mut t = format!(
        "{}{}\nlibzmq {} ({}: {})\n  capabilities (zmq_has): {}\n  sha256: {}",
        zmqperf::VERSION,
        zmqperf::COMMIT
            .map(|c| format!(" (commit {c})"))
            .unwrap_or_default(),
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
        zmqperf::errln!(
            "zmqperf: error: invalid value '{arg}': negative; counts, sizes, rates, durations and high-water marks are 0 or more"
        );
        std::process::exit(3);
    }
    e
}

/// The value of `--width N` (or `--width=N`) among the arguments, if one is given.
fn width_asked() -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().enumerate().find_map(|(i, a)| {
        let v = match a.strip_prefix("--width") {
            Some("") => args.get(i + 1)?.as_str(),
            Some(rest) => rest.strip_prefix('=')?,
            None => return None,
        };
        v.parse().ok()
    })
}

fn main() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !on_stdout_failure(info) {
            default_hook(info);
        }
    }));
    zmqperf::runner::notice::set_printer(cli::output::say);
    // A node process takes everything, its libzmq included, from the spec on its stdin.
    if std::env::args().nth(1).as_deref() == Some("__node") && std::env::args().len() == 2 {
        std::process::exit(zmqperf::runner::place::child_main(None));
    }
    guard_closed_stdout();
    choose_libzmq();
    let long_version: &'static str = Box::leak(version_text().into_boxed_str());
    // `--width` is read before the parse so that the help is laid out for it too.
    let mut command = cli::Cli::command()
        .long_version(long_version)
        .after_long_help(cli::root_long_help());
    if let Some(w) = width_asked() {
        command = command.term_width(w.max(zmqperf::term::NARROWEST));
    }
    let args = command
        .try_get_matches()
        .and_then(|m| cli::Cli::from_arg_matches(&m))
        .unwrap_or_else(|e| refuse_negative(e).exit());
    let result = cli::run(args);
    // The socket files of ipc paths this process bound go with it, success or failure.
    zmqperf::net::remove_bound_ipc_files();
    if let Err(e) = result {
        // Each error's message already names its cause; the chain adds nothing.
        // Values quoted from the user's files (names, endpoints) cannot act on the terminal.
        zmqperf::errln!(
            "zmqperf: error: {}",
            zmqperf::report::terminal_safe(&e.to_string())
        );
        std::process::exit(e.exit_code());
    }
}
