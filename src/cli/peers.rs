//! `zmqperf peers setup|list`: readies the peers in other languages and shows them.

use clap::Subcommand;
use zmqperf::error::{Error, Result};
use zmqperf::peers;

/// `zmqperf peers ...`.
#[derive(Subcommand)]
pub enum PeersCmd {
    /// Install what each peer needs from its own registry into its cache folder, build it
    /// and run its conformance test; a peer that passes is ready.
    #[command(after_help = SETUP_EXAMPLES)]
    Setup {
        /// Peers to set up (names or aliases); all of them when none is given.
        names: Vec<String>,
    },
    /// Show every peer: its language, binding and version, the ZMTP implementation
    /// underneath, and whether it is ready.
    #[command(after_help = "Examples:\n  zmqperf peers list\n  zmqperf peers list --json")]
    List {
        /// One JSON object per peer, one per line.
        #[arg(long)]
        json: bool,
    },
}

const SETUP_EXAMPLES: &str = "\
Examples:
  # all peers (a few minutes on a fresh machine)
  zmqperf peers setup
  # two of them
  zmqperf peers setup pyzmq node
  ZMQPERF_PEERS_CACHE=/tmp/peers zmqperf peers setup c

Each peer's steps are in peers/<name>/peer.toml; their output is kept in
<cache>/<name>/setup.log. Exit 0 when every peer named is ready, 3 otherwise.";

/// Runs `zmqperf peers ...`.
pub fn run(cmd: &PeersCmd) -> Result<()> {
    match cmd {
        PeersCmd::Setup { names } => setup(names),
        PeersCmd::List { json } => list(*json),
    }
}

fn setup(names: &[String]) -> Result<()> {
    zmqperf::errln!(
        "zmqperf: setting up peers in {} (ZMQPERF_PEERS_CACHE to change)",
        peers::cache_root().display()
    );
    let outcomes = peers::setup(names, &mut |line| zmqperf::errln!("  {line}"))?;
    let mut failed = Vec::new();
    for o in &outcomes {
        match &o.result {
            Ok(r) => zmqperf::outln!(
                "{:<10} ready   {} ({}) in {:.1} s",
                o.name,
                r.binding,
                r.engine,
                o.seconds
            ),
            Err(why) => {
                zmqperf::outln!("{:<10} FAILED  after {:.1} s: {why}", o.name, o.seconds);
                failed.push(o.name.clone());
            }
        }
    }
    let total: f64 = outcomes.iter().map(|o| o.seconds).sum();
    zmqperf::outln!(
        "{} of {} peers ready, {:.1} s in all",
        outcomes.len() - failed.len(),
        outcomes.len(),
        total
    );
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(
            "peers setup",
            &failed.join(","),
            "these peers are not ready; the lines above say why and what to install",
        ))
    }
}

fn list(json: bool) -> Result<()> {
    let all = peers::all()?;
    if json {
        let mut list = Vec::new();
        for m in &all {
            let r = m.ready();
            list.push(serde_json::json!({
                "name": m.name,
                "aliases": m.aliases,
                "language": m.language,
                "binding": r.as_ref().map(|r| r.binding.clone()).unwrap_or(m.binding.clone()),
                "engine": r.as_ref().map(|r| r.engine.clone()).unwrap_or(m.engine.clone()),
                "ready": r.is_some(),
                "transports": m.transports,
                "roles": m.roles,
                "sockets": m.sockets,
            }));
        }
        print!(
            "{}",
            zmqperf::report::json::envelope::<(), _>(
                "peers",
                None,
                None,
                &serde_json::json!({ "peers": list }),
                true
            )
        );
        return Ok(());
    }
    let mut rows = vec![
        [
            "peer".to_string(),
            "language".into(),
            "binding".into(),
            "underneath".into(),
            "ready".into(),
        ],
        [
            peers::CORE.to_string(),
            "Rust".into(),
            format!("zmqperf {}", zmqperf::VERSION),
            format!("libzmq {}", zmqperf::libzmq_version()),
            "always (its own core)".into(),
        ],
    ];
    for m in &all {
        let (binding, engine, ready) = match m.ready() {
            Some(r) => (r.binding, r.engine, "yes".to_string()),
            None => (
                m.binding.clone(),
                m.engine.clone(),
                match m.setup_record() {
                    Some(_) => format!("no, changed since setup: zmqperf peers setup {}", m.name),
                    None => format!("no: zmqperf peers setup {}", m.name),
                },
            ),
        };
        rows.push([m.name.clone(), m.language.clone(), binding, engine, ready]);
    }
    // Each column as wide as its widest cell.
    let widths: Vec<usize> = (0..4)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let mut line = String::new();
        for (c, w) in widths.iter().enumerate() {
            line.push_str(&format!("{:<w$}  ", r[c]));
        }
        line.push_str(&r[4]);
        zmqperf::outln!("{line}");
    }
    zmqperf::outln!("cache: {}", peers::cache_root().display());
    Ok(())
}
