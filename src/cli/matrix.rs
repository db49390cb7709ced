//! `zmqperf matrix`: every implementation against every other, the interop grid and the
//! performance grid as ratios to C-C, recorded in the history like any run.

use super::output::{list, DbArgs};
use super::suite::Progress;
use clap::Args;
use zmqperf::error::{Error, Result};
use zmqperf::model::RunStatus;
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::runner::{self, plan as rplan, Settings};
use zmqperf::scenarios::matrix::{self, Shape, PATTERNS};

pub const EXAMPLES: &str = "\
Examples:
  # tcp, 64 B, 3 passes: about 2 minutes
  zmqperf matrix --quick
  # tcp and ipc, 64 B and 1 KiB, 5 passes
  zmqperf matrix
  zmqperf matrix --impl c,ffi-rzmq,zmqperf --patterns reqrep --repetitions 5
  zmqperf matrix --quick --format html -o matrix.html

Pairs run once per pass, all pairs in turn, so each is interleaved with C-C (the c peer
on both sides), the baseline of every ratio. Set peers up first: zmqperf peers setup.
A pair that fails or loses messages is a finding, shown in the grid with its reason
(exit 0); exit 3 for bad options or no pair to run, 130 after Ctrl-C.";

/// `zmqperf matrix`.
#[derive(Args)]
pub struct MatrixArgs {
    /// tcp, 64 B, three passes of short cases.
    #[arg(long)]
    pub quick: bool,
    /// Implementations (default: zmqperf and every peer), comma-separated.
    #[arg(long = "impl", alias = "impls", value_name = "LIST")]
    pub impls: Option<String>,
    /// Patterns: reqrep, pushpull, pubsub (comma-separated).
    #[arg(long, value_name = "LIST")]
    pub patterns: Option<String>,
    /// Transports: tcp, ipc.
    #[arg(long, value_name = "LIST")]
    pub transports: Option<String>,
    /// Message sizes, e.g. 64,1KiB.
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Passes over all pairs (the repetitions of each pair), at least 2 for intervals.
    #[arg(long = "repetitions", alias = "passes", value_name = "N")]
    pub passes: Option<u32>,
    /// Round trips of a REQ/REP pair per pass.
    #[arg(long, value_name = "N")]
    pub round_trips: Option<String>,
    /// Messages of a PUSH/PULL or PUB/SUB pair per pass.
    #[arg(long, value_name = "N")]
    pub messages: Option<String>,
    /// The pair every ratio is taken against, both sides this implementation (default c:
    /// libzmq's C API).
    #[arg(long, default_value = "c", value_name = "IMPL")]
    pub baseline: String,
    /// Longest wait for a peer or a message.
    #[arg(long, default_value = "5s")]
    pub timeout: String,
    /// Longest one pair may take.
    #[arg(long, default_value = "30s")]
    pub case_timeout: String,
    /// text, markdown, html or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Write the report here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// Do not record the run in the history.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

/// How the chosen `--format` renders the matrix (of the run it was read from).
type Render = Box<dyn Fn(&matrix::Matrix, &zmqperf::model::RunResult) -> String>;

fn renderer(format: &str) -> Result<Render> {
    use zmqperf::report::matrix as r;
    Ok(match format {
        "text" | "table" => Box::new(|m, _| r::text(m)),
        "markdown" | "md" => Box::new(|m, _| r::markdown(m)),
        "html" => Box::new(|m, _| r::html(m)),
        "json" => Box::new(r::json),
        other => {
            return Err(Error::invalid(
                "--format",
                other,
                "use text, markdown, html or json",
            ))
        }
    })
}

/// The shape of the matrix: --quick or the full one, narrowed by the options.
fn shape(a: &MatrixArgs) -> Result<Shape> {
    let mut shape = if a.quick {
        Shape::quick()
    } else {
        Shape::full()
    };
    if let Some(p) = list(&a.patterns, |p| {
        if PATTERNS.contains(&p) {
            Ok(p.to_string())
        } else {
            Err(Error::invalid(
                "--patterns",
                p,
                "the matrix has reqrep, pushpull and pubsub",
            ))
        }
    })? {
        shape.patterns = p;
    }
    if let Some(t) = list(&a.transports, |t| {
        match rplan::parse_classic_transport(t)? {
            zmqperf::endpoint::Transport::Inproc => Err(Error::invalid(
                "--transports",
                t,
                "a peer is a process of its own: use tcp or ipc",
            )),
            x => Ok(x),
        }
    })? {
        shape.transports = t;
    }
    if let Some(s) = list(&a.sizes, |s| parse_size("--sizes", s))? {
        shape.sizes = s;
    }
    if let Some(p) = a.passes {
        if p == 0 {
            return Err(Error::invalid(
                "--repetitions",
                "0",
                "run at least 1 pass (2 or more give intervals)",
            ));
        }
        shape.passes = p;
    }
    if let Some(n) = &a.round_trips {
        shape.round_trips = parse_count("--round-trips", n)?;
    }
    if let Some(n) = &a.messages {
        shape.messages = parse_count("--messages", n)?;
    }
    Ok(shape)
}

/// How each pair runs.
fn settings(a: &MatrixArgs) -> Result<Settings> {
    Ok(Settings {
        timeout: parse_duration("--timeout", &a.timeout)?,
        case_timeout: parse_duration("--case-timeout", &a.case_timeout)?,
        exe: zmqperf::runner::this_exe()?,
        stamp_every: 16,
        floor: false,
        interval: None,
        hosts: Default::default(),
    })
}

/// The implementations of the matrix (--impl), and the baseline among them.
fn implementations(a: &MatrixArgs) -> Result<(Vec<matrix::Impl>, String)> {
    let names = list(&a.impls, |n| zmqperf::peers::canonical_for("--impl", n))?;
    let impls = matrix::implementations(names.as_deref())?;
    let baseline = zmqperf::peers::canonical_for("--baseline", &a.baseline)?;
    if !impls.iter().any(|i| i.name == baseline) {
        return Err(Error::invalid(
            "--baseline",
            &baseline,
            "it is not among the implementations of the matrix; add it to --impl",
        ));
    }
    Ok((impls, baseline))
}

/// Runs the matrix.
pub fn run(a: &MatrixArgs, command: String) -> Result<()> {
    if let Some(o) = &a.output {
        if zmqperf::report::file::is_same_file(std::path::Path::new(o), &a.db.path()) {
            return Err(zmqperf::report::file::names_the_history("-o", o));
        }
    }
    let render = renderer(&a.format)?;
    let shape = shape(a)?;
    let (impls, baseline) = implementations(a)?;
    let (one_pass, skipped) = matrix::plan(&impls, &shape);
    if one_pass.is_empty() {
        return Err(Error::invalid(
            "matrix",
            "no pairs",
            "no pair can run: set the peers up first (zmqperf peers setup)",
        ));
    }
    let settings = settings(a)?;
    let mut plan = Vec::new();
    for _ in 0..shape.passes {
        plan.extend(one_pass.iter().cloned());
    }
    zmqperf::errln!(
        "{}",
        zmqperf::report::matrix::plan_line(
            impls.len(),
            one_pass.len(),
            shape.passes,
            plan.len(),
            skipped.len()
        )
    );
    let mut run = runner::new_run(command, None);
    let mut session = a.db.session(a.no_history, &run)?;
    runner::catch_signals();
    {
        let mut progress = Progress::new(&plan, |_| {});
        runner::run_suite(&mut run, &plan, &settings, &mut progress);
    }
    let passes: Vec<Vec<_>> = run
        .cases
        .chunks(one_pass.len())
        .map(|c| c.to_vec())
        .collect();
    run.cases = matrix::merge_passes(passes);
    session.keep(&run.cases);
    let recorded = session.finish(&run);
    let m = matrix::read(&run, &impls, &shape, &skipped, &baseline);
    let text = render(&m, &run);
    match &a.output {
        Some(path) => {
            zmqperf::report::file::write_output("-o", path, text.as_bytes(), Some(&a.db.path()))?
        }
        None => print!("{}", zmqperf::term::fit(&text)),
    }
    recorded?;
    session.announce()?;
    zmqperf::errln!("{}", zmqperf::report::matrix::summary_line(&m));
    if run.status == RunStatus::Interrupted {
        return Err(Error::Interrupted(
            "the matrix so far is printed above".into(),
        ));
    }
    Ok(())
}
