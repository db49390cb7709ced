//! `--peer-on HOST`: the other side of a compatible pair started on another host through
//! its launcher, with the same settings, before this side measures.

use super::args::{Common, PeerOn, SecurityOpts};
use std::time::Duration;
use zmqperf::error::{Error, Result};

/// The words that start the other side with the same settings: `cmd EP SIZE COUNT` and
/// the options both sides share.
pub(super) fn peer_words(
    cmd: &str,
    ep: &str,
    size: &str,
    count: &str,
    sec: &SecurityOpts,
    common: &Common,
) -> Vec<String> {
    let mut w: Vec<String> = [
        cmd,
        ep,
        size,
        count,
        "--timeout",
        &common.timeout,
        "--security",
        &sec.security,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(k) = &sec.curve_keys {
        w.extend(["--curve-keys".to_string(), k.clone()]);
    }
    if let Some(p) = &sec.gssapi_principal {
        w.extend(["--gssapi-principal".to_string(), p.clone()]);
    }
    if common.detail {
        w.push("--detail".into());
    }
    w
}

/// The endpoint the other side uses: a wildcard interface of this side's bind becomes the
/// address of this host in the hosts file.
pub(super) fn peer_endpoint(ep: &str, hosts: &zmqperf::runner::hosts::Hosts) -> Result<String> {
    if ep.ends_with(":*") || ep.contains(":*/") {
        return Err(Error::invalid(
            "--peer-on",
            ep,
            "the other side is started before this one binds: give a fixed port (tcp://ADDR:5555)",
        ));
    }
    let local = hosts.local().map(|h| h.addr.as_str());
    for wild in ["tcp://*:", "tcp://0.0.0.0:"] {
        if let Some(port) = ep.strip_prefix(wild) {
            let a = local.ok_or_else(|| {
                Error::invalid(
                    "--peer-on",
                    ep,
                    "a wildcard bind: the other host needs this host's address; give it in the endpoint, or in the hosts file (local = true, addr = \"IP\")",
                )
            })?;
            return Ok(format!("tcp://{a}:{port}"));
        }
    }
    Ok(ep.to_string())
}

/// Runs `ours` with the other side of the pair started on `--peer-on`'s host first (the
/// side that connects retries until the other binds, so the order does not matter); a
/// peer that fails ends this side at once, with its host and why.
pub(super) fn with_peer(
    p: &PeerOn,
    words: impl FnOnce(&zmqperf::runner::hosts::Hosts) -> Result<Vec<String>>,
    ours: impl FnOnce() -> Result<()> + Send,
) -> Result<()> {
    let Some(name) = &p.peer_on else {
        return ours();
    };
    let hosts = zmqperf::runner::hosts::Hosts::load(p.hosts.as_deref().unwrap_or_default())?;
    let host = hosts.get("--peer-on", name)?.clone();
    if host.is_local() {
        return Err(Error::invalid(
            "--peer-on",
            name,
            "that is this host (local = true); name another host",
        ));
    }
    let words = words(&hosts)?;
    let exe = zmqperf::runner::remote_exe(&host)?;
    let mut peer = zmqperf::runner::remote::RemoteCommand::start(&host, &exe, &words)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let r = std::thread::scope(|sc| {
        sc.spawn(move || {
            let _ = tx.send(ours());
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => return r,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Protocol(
                        "this side's thread ended without a result".into(),
                    ))
                }
                Err(_) => {
                    if let Some(e) = peer.failed_early() {
                        // This side waits for a peer that will never come: end here.
                        zmqperf::errln!("zmqperf: error: {e}");
                        std::process::exit(e.exit_code());
                    }
                }
            }
        }
    });
    let out = peer.finish(Duration::from_secs(30));
    r?;
    let out = out?;
    if !out.trim().is_empty() {
        zmqperf::outln!(
            "--- {} on host {name}:",
            words.first().map_or("", |w| w.as_str())
        );
        print!("{out}");
    }
    Ok(())
}
