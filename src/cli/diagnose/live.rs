//! `zmqperf diagnose --connect|--bind ENDPOINT --type SUB|PULL`: listening to a live stream
//! someone else sends. Its options turned into a [`ListenConfig`], its progress lines, and
//! the run: listen, record the findings, print them, exit with what was heard.

use super::{DiagnoseArgs, MIN_TIMEOUT};
use zmqperf::endpoint::{Endpoint, Side};
use zmqperf::error::{Error, Result};
use zmqperf::model::RunStatus;
use zmqperf::parse::{parse_count, parse_duration};
use zmqperf::progress::StatusLine;
use zmqperf::runner;
use zmqperf::scenarios::diagnose::listen::field::FieldSpec;
use zmqperf::scenarios::diagnose::listen::tally::Listening;
use zmqperf::scenarios::diagnose::listen::{self, EndedBy, ListenConfig, ListenObserver};
use zmqperf::topology::SocketType;
use zmqperf::units::grouped;

/// Where the listen listens, if `--connect` or `--bind` asks for one; without either, an
/// error for an option that only a listen takes.
fn listen_at(a: &DiagnoseArgs) -> Result<Option<(String, Side)>> {
    Ok(Some(match (&a.connect, &a.bind) {
        (Some(c), Some(_)) => {
            return Err(Error::invalid(
                "--bind",
                a.bind.as_deref().unwrap_or(""),
                format!(
                    "give either --connect (the sender binds) or --bind (the senders connect), \
                     not both; e.g. --connect {c}"
                ),
            ))
        }
        (Some(c), None) => (c.clone(), Side::Connect),
        (None, Some(b)) => (b.clone(), Side::Bind),
        (None, None) => {
            for (flag, given) in [
                ("--type", &a.kind),
                ("--subscribe", &a.subscribe),
                ("--count", &a.count),
                ("--seq", &a.seq),
                ("--stream-id", &a.stream_id),
                ("--expect", &a.expect),
            ] {
                if let Some(value) = given {
                    return Err(Error::invalid(
                        flag,
                        value,
                        "it is for listening to a live stream: add --connect ENDPOINT or --bind ENDPOINT",
                    ));
                }
            }
            return Ok(None);
        }
    }))
}

/// The listening socket `--type` names (SUB or PULL).
fn listen_kind(a: &DiagnoseArgs) -> Result<SocketType> {
    match a.kind.as_deref().map(|k| k.trim().to_ascii_uppercase()) {
        Some(k) if k == "SUB" => Ok(SocketType::Sub),
        Some(k) if k == "PULL" => Ok(SocketType::Pull),
        Some(_) => Err(Error::invalid(
            "--type",
            a.kind.as_deref().unwrap_or(""),
            "listen with SUB (to a PUB or XPUB) or PULL (to a PUSH): --type SUB or --type PULL",
        )),
        None => Err(Error::invalid(
            "--type",
            "",
            "missing: say what the listening socket is, --type SUB (the stream is \
                 published) or --type PULL (it is pushed)",
        )),
    }
}

/// The listen's configuration, if `--connect` or `--bind` asks for one; errors for the
/// options that belong to the other mode.
pub(super) fn listen_config(a: &DiagnoseArgs) -> Result<Option<ListenConfig>> {
    let Some((endpoint, side)) = listen_at(a)? else {
        return Ok(None);
    };
    for (flag, given) in [
        ("--only", a.only.clone()),
        ("--transports", a.transports.clone()),
        ("--quick", a.quick.then(|| "on".to_string())),
    ] {
        if let Some(value) = given {
            return Err(Error::invalid(
                flag,
                &value,
                "it chooses the loopback experiments, which do not run while listening to a \
                 stream; drop it, or drop --connect/--bind",
            ));
        }
    }
    Endpoint::parse(&endpoint, side)?;
    let kind = listen_kind(a)?;
    if a.subscribe.is_some() && kind != SocketType::Sub {
        return Err(Error::invalid(
            "--subscribe",
            a.subscribe.as_deref().unwrap_or(""),
            "only a SUB subscribes; drop it or use --type SUB",
        ));
    }
    let duration = parse_duration("--duration", &a.duration)?;
    if duration < MIN_TIMEOUT {
        return Err(Error::invalid(
            "--duration",
            &a.duration,
            "too short to listen to anything; give at least 100ms, e.g. --duration 10s",
        ));
    }
    let idle = parse_duration("--idle", &a.idle)?;
    if idle.is_zero() {
        return Err(Error::invalid(
            "--idle",
            &a.idle,
            "a silence must last some time to count; e.g. --idle 1s",
        ));
    }
    let positive = |flag: &str, v: &Option<String>| -> Result<Option<u64>> {
        v.as_deref()
            .map(|s| {
                let n = parse_count(flag, s)?;
                if n == 0 {
                    return Err(Error::invalid(flag, s, "give at least 1 message"));
                }
                Ok(n)
            })
            .transpose()
    };
    let field = |flag: &str, v: &Option<String>| {
        v.as_deref().map(|s| FieldSpec::parse(flag, s)).transpose()
    };
    Ok(Some(ListenConfig {
        endpoint,
        side,
        kind,
        subscribe: a.subscribe.clone().unwrap_or_default(),
        duration,
        count: positive("--count", &a.count)?,
        seq: field("--seq", &a.seq)?,
        stream_id: field("--stream-id", &a.stream_id)?,
        expect: positive("--expect", &a.expect)?,
        idle,
        rcvhwm: None,
        max_size: zmqperf::parse::parse_size("--max-size", &a.max_size)?,
    }))
}

/// How often the listen says on stderr how it is going.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// The listen's lines on stderr: where it listens, then what it has seen every few seconds.
struct ListenProgress {
    line: StatusLine,
    what: String,
    duration: std::time::Duration,
}

impl ListenObserver for ListenProgress {
    fn opened(&mut self, endpoint: &str) {
        // The endpoint last, so scripts (and the tests) can read the port chosen for `*`.
        zmqperf::errln!(
            "zmqperf: {} for up to {} (Ctrl-C ends it early and still reports), listening on {endpoint}",
            self.what,
            zmqperf::error::fmt_duration(self.duration)
        );
    }

    fn progress(&mut self, elapsed: std::time::Duration, seen: &Listening) {
        let mut lost = 0;
        for s in seen.streams.values() {
            for e in &s.epochs {
                let top = e.tally.highest_seq().map_or(0, |t| t + 1);
                lost += e.tally.summary(top).lost;
            }
        }
        let line = format!(
            "[{:.0} s] {} messages, {} stream{}, {} missing so far{}",
            elapsed.as_secs_f64(),
            grouped(seen.messages),
            seen.streams.len(),
            if seen.streams.len() == 1 { "" } else { "s" },
            grouped(lost),
            if seen.unreadable.total() > 0 {
                format!(", {} unreadable", grouped(seen.unreadable.total()))
            } else {
                String::new()
            }
        );
        self.line.show(&line);
    }
}

impl Drop for ListenProgress {
    fn drop(&mut self) {
        self.line.clear();
    }
}

/// `zmqperf diagnose --connect|--bind ENDPOINT --type SUB|PULL`: listens, then records and
/// prints the findings. Ctrl-C ends the listen; what was seen is reported all the same.
pub(super) fn run_listen(a: &DiagnoseArgs, cfg: ListenConfig, command: String) -> Result<()> {
    let mut run = runner::new_run(command, None);
    let mut session = a.db.session(a.no_history, &run)?;
    runner::catch_signals();
    let mut progress = ListenProgress {
        line: StatusLine::new(),
        what: format!(
            "{} ({})",
            cfg.kind.name().to_ascii_uppercase(),
            if cfg.side == Side::Bind {
                "bound"
            } else {
                "connected"
            }
        ),
        duration: cfg.duration,
    };
    let listened = listen::listen(&cfg, PROGRESS_EVERY, &mut progress, runner::interrupted)?;
    drop(progress);
    run.findings = listen::findings(&cfg, &listened);
    for f in &run.findings {
        session.finding(f)?;
    }
    runner::finish(&mut run, RunStatus::Complete);
    session.mark_end(&run)?;
    let header = format!(
        "zmqperf diagnose: listened with {} for {:.1} s{}\n\n",
        cfg.describe(&listened.endpoint),
        listened.ended_ns.saturating_sub(listened.started_ns) as f64 / 1e9,
        match listened.ended_by {
            EndedBy::Duration => String::new(),
            EndedBy::Count => " (--count reached)".into(),
            EndedBy::Interrupted => format!(" (ended by {})", runner::interrupted_by()),
        }
    );
    let printed = super::print_run(a, &run, header);
    session.announce()?;
    printed?;
    listen_outcome(&cfg, &listened)
}

/// The exit of a listen, once its report is printed and recorded: 0 when it heard a
/// stream (whatever the findings; a stop signal is the ordinary end of a listen), 6 when
/// nothing arrived, 9 when messages carried a header of another version or with reserved
/// flags (a sender of another zmqperf, or not zmqperf's header at all).
fn listen_outcome(cfg: &ListenConfig, l: &listen::Listened) -> Result<()> {
    let u = &l.seen.unreadable;
    if u.bad_header > 0 {
        return Err(Error::Protocol(format!(
            "{} of {} messages had a zmqperf header of another version or with reserved flags set: the sender is of another zmqperf version, or its messages start with bytes of their own (then give --seq FIELD); the findings above are of the rest",
            grouped(u.bad_header),
            grouped(l.seen.messages)
        )));
    }
    if l.seen.messages == 0 && l.ended_by != EndedBy::Interrupted {
        return Err(Error::NoReceiver(format!(
            "nothing arrived on {} within {}: no sender was heard. Check the endpoint and that the sender runs{}",
            l.endpoint,
            zmqperf::error::fmt_duration(cfg.duration),
            if cfg.kind == SocketType::Sub && !cfg.subscribe.is_empty() {
                format!(", and that its messages start with the prefix subscribed to ('{}')", cfg.subscribe)
            } else {
                String::new()
            }
        )));
    }
    Ok(())
}
