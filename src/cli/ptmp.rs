//! PTMP's test programs (check_send, check_recv, check_sendrecv): their positional
//! arguments, checked at this boundary, and their printing.

use clap::Args;
use std::cell::RefCell;
use std::io::Write;
use zmqperf::endpoint::Side;
use zmqperf::error::{fmt_duration, Error, Result};
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::progress::StatusLine;
use zmqperf::ptmp_wire::Wire;
use zmqperf::report::{compat::json, ptmp as text};
use zmqperf::scenarios::ptmp::{self, Ended, GapLine, WaitStatus, RECEIVING, SENDING};
use zmqperf::units::grouped;
use zmqperf::zmq;

pub(super) const EXAMPLES: &str = "\
Examples (PTMP's README, with zmqperf in place of ./build/test/; two shells):
  zmqperf check_recv 10 SUB bind ipc://junk.txt
  # slow joiner: the start is lost
  zmqperf check_send 10000 PUB connect ipc://junk.txt 0
  # 1 ms start delay: seq 0 arrives
  zmqperf check_send 10000 PUB connect ipc://junk.txt 1

  zmqperf check_recv 10000 PAIR bind ipc://junk.txt
  # fast quit: the end is lost
  zmqperf check_send 10000 PAIR connect ipc://junk.txt
  # 1 s quit delay: all arrive
  zmqperf check_send 10000 PAIR connect ipc://junk.txt 0 1000

  # both ends in one process
  zmqperf check_sendrecv 1000000 bind pubsub inproc://sendrecv

  # PTMP's own messages (a type frame, then a TPSet), as a PTMP sender's
  zmqperf check_send 10000 PUSH connect ipc://junk.txt 0 1000 --wire ptmp

check_recv prints PTMP's gap lines (i - seq = diff : t s) for the first message and where
diff changes, PTMP's summary line (recv COUNT in T s or R kHz, missed M), then the ledger;
it ends after TIMEOUT ms without a message (10 s by default) where PTMP's receiver hung.
It reads zmqperf's header or PTMP's own messages (a type frame, then a TPSet whose count
is the sequence), told from the first message. Sockets have czmq's linger 0, as PTMP's.
Exit codes: 0 all arrived, 2 usage, 3 bad value, 4 bad endpoint, 5 address in use,
6 nothing arrived within TIMEOUT, 7 a send blocked past --timeout, 9 a wrong pairing or
a message in neither format (or not the first's), 12 messages lost, 17 stream cut short (the sender
stopped or quit before its last message arrived). See docs/ptmp.md.";

#[derive(Args)]
pub(super) struct CheckSend {
    /// Messages to send (10000, 10k, 1M).
    #[arg(value_name = "COUNT", allow_negative_numbers = true)]
    count: String,
    /// Socket type: PAIR, PUB or PUSH (any case).
    #[arg(value_name = "TYPE")]
    socket_type: String,
    /// bind or connect ADDR.
    #[arg(value_name = "bind|connect")]
    attach: String,
    /// The endpoint: ipc://junk.txt, tcp://127.0.0.1:5678 (tcp://127.0.0.1:* binds a free port).
    #[arg(value_name = "ADDR")]
    addr: String,
    /// Milliseconds to sleep between opening the socket and the first send (default 0).
    #[arg(value_name = "START_DELAY_MS", allow_negative_numbers = true)]
    start_delay: Option<String>,
    /// Milliseconds to sleep after the last send before closing the socket (default 0).
    #[arg(value_name = "QUIT_DELAY_MS", allow_negative_numbers = true)]
    quit_delay: Option<String>,
    /// Bytes per message (at least the measurement header's 24; default 64).
    #[arg(long, value_name = "BYTES")]
    size: Option<String>,
    /// Longest a send may block (a PAIR or PUSH with no receiver taking messages).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    timeout: String,
    /// The message format: zmqperf (the measurement header, with check_send's trailer) or
    /// ptmp (PTMP's messages: a 4-byte type 0, then a TPSet whose count is the sequence;
    /// what PTMP's own check_recv reads; --size does not apply).
    #[arg(long, default_value = "zmqperf", value_name = "zmqperf|ptmp")]
    wire: String,
    /// Print one JSON object (schema/ptmp-result.schema.json) instead of the lines.
    #[arg(long)]
    pub(super) json: bool,
}

#[derive(Args)]
pub(super) struct CheckRecv {
    /// Messages to receive; without the sender's end mark, also the stream's length.
    #[arg(value_name = "COUNT", allow_negative_numbers = true)]
    count: String,
    /// Socket type: PAIR, SUB or PULL (any case).
    #[arg(value_name = "TYPE")]
    socket_type: String,
    /// bind or connect ADDR.
    #[arg(value_name = "bind|connect")]
    attach: String,
    /// The endpoint: ipc://junk.txt, tcp://127.0.0.1:5678 (tcp://127.0.0.1:* binds a free port).
    #[arg(value_name = "ADDR")]
    addr: String,
    /// Milliseconds to wait for each message before giving up (default 10000; PTMP's -1,
    /// for ever, is taken as the default).
    #[arg(value_name = "TIMEOUT", allow_negative_numbers = true)]
    timeout: Option<String>,
    /// A gap line for every message, not only where diff changes.
    #[arg(short, long)]
    verbose: bool,
    /// The largest message to take: a peer that declares a larger frame is disconnected
    /// (ZMQ_MAXMSGSIZE); give check_send's --size when it is above the default.
    #[arg(long, default_value = "64MiB", value_name = "BYTES")]
    max_size: String,
    /// Print one JSON object (schema/ptmp-result.schema.json) instead of the lines.
    #[arg(long)]
    pub(super) json: bool,
}

#[derive(Args)]
pub(super) struct CheckSendrecv {
    /// Messages to send (1000000, 1M).
    #[arg(value_name = "N", allow_negative_numbers = true)]
    count: String,
    /// bind: the sender binds and the receiver connects; connect: the other way round.
    #[arg(value_name = "bind|connect")]
    attach: String,
    /// pubsub (PUB to SUB), pipe or pair (PAIR to PAIR), pushpull (PUSH to PULL).
    #[arg(value_name = "PATTERN")]
    pattern: String,
    /// The endpoint: inproc://sendrecv, ipc://junk.txt, tcp://127.0.0.1:* (a free port).
    #[arg(value_name = "ADDR")]
    addr: String,
    /// Bytes per message (at least the measurement header's 24).
    #[arg(long, default_value = "64", value_name = "BYTES")]
    size: String,
    /// Longest wait for a send or a message.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    timeout: String,
    /// Print one JSON object (schema/ptmp-result.schema.json) instead of the lines.
    #[arg(long)]
    pub(super) json: bool,
}

fn count(value: &str) -> Result<u64> {
    parse_count("<COUNT>", value)
}

/// `zmqperf check_send`.
pub(super) fn check_send(a: &CheckSend, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let side = ptmp::parse_side(&a.attach)?;
    let cfg = ptmp::SendConfig {
        count: count(&a.count)?,
        kind: ptmp::parse_type("check_send", &a.socket_type, &SENDING)?,
        side,
        endpoint: ptmp::endpoint(&a.addr, side)?,
        start_delay: a
            .start_delay
            .as_deref()
            .map(|v| ptmp::parse_delay("<START_DELAY_MS>", v))
            .transpose()?
            .unwrap_or_default(),
        quit_delay: a
            .quit_delay
            .as_deref()
            .map(|v| ptmp::parse_delay("<QUIT_DELAY_MS>", v))
            .transpose()?
            .unwrap_or_default(),
        size: parse_size("--size", a.size.as_deref().unwrap_or("64"))?,
        timeout: parse_duration("--timeout", &a.timeout)?,
        stream_id: std::process::id(),
        wire: Wire::parse(&a.wire).ok_or_else(|| {
            Error::invalid(
                "--wire",
                &a.wire,
                "write zmqperf (the measurement header) or ptmp (PTMP's TPSet messages)",
            )
        })?,
    };
    if let (Wire::Ptmp, Some(size)) = (cfg.wire, &a.size) {
        return Err(Error::invalid(
            "--size",
            size,
            "does not apply with --wire ptmp: a PTMP message is a TPSet, whose size follows \
             from its fields; leave --size out, or send zmqperf's messages (--wire zmqperf)",
        ));
    }
    let r = ptmp::check_send(ctx, &cfg, |b| {
        super::compat::announce("check_send", &cfg.endpoint, b)
    })?;
    if a.json {
        println!("{}", json("check_send", &r, None));
        super::compat::result_printed();
    } else {
        print!("{}", zmqperf::term::fit(&text::send_text(&r)));
    }
    if r.interrupted {
        return Err(Error::Interrupted(format!(
            "after {} of {} messages; the figures above are of what was sent before it",
            grouped(r.sent),
            grouped(r.socket.count)
        )));
    }
    match ptmp::unseen_receiver(&r) {
        Some((true, what)) => return Err(Error::NoReceiver(what)),
        Some((false, what)) => eprintln!("zmqperf: warning: {what}"),
        None => {}
    }
    Ok(())
}

/// The progress line of a wait that lasts: on a terminal one line kept up to date, else
/// one line when the wait passes a second.
struct WaitLine {
    line: StatusLine,
    last_whole_s: u64,
}

impl WaitLine {
    fn update(&mut self, w: &WaitStatus, count: u64) {
        let s = w.silent.as_secs();
        if s == 0 {
            self.line.clear_shown();
            self.last_whole_s = 0;
            return;
        }
        if s == self.last_whole_s || (self.line.is_shown() && !self.line.is_live()) {
            return;
        }
        self.last_whole_s = s;
        let peer = match w.disconnected {
            Some(true) => " (the sender has disconnected)",
            Some(false) if w.received > 0 => " (the sender is still connected)",
            _ => "",
        };
        let line = format!(
            "zmqperf: check_recv: waiting: {} of {} received, nothing for {} s{peer}; giving up at {}",
            grouped(w.received),
            grouped(count),
            s,
            fmt_duration(w.timeout)
        );
        self.line.show(&line);
    }

    fn finish(&mut self) {
        self.line.settle();
    }
}

/// `zmqperf check_recv`.
pub(super) fn check_recv(a: &CheckRecv, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let side = ptmp::parse_side(&a.attach)?;
    let (timeout, forever) = ptmp::parse_timeout(a.timeout.as_deref())?;
    let cfg = ptmp::RecvConfig {
        count: count(&a.count)?,
        kind: ptmp::parse_type("check_recv", &a.socket_type, &RECEIVING)?,
        side,
        endpoint: ptmp::endpoint(&a.addr, side)?,
        timeout,
        verbose: a.verbose,
        max_size: parse_size("--max-size", &a.max_size)?,
    };
    if forever {
        zmqperf::errln!(
            "zmqperf: note: TIMEOUT -1 (PTMP's wait for ever) is taken as {}: zmqperf always ends",
            fmt_duration(timeout)
        );
    }
    let out = RefCell::new(std::io::BufWriter::new(std::io::stdout().lock()));
    let mut on_line = |l: &GapLine| {
        if !a.json {
            let _ = writeln!(out.borrow_mut(), "{}", text::gap_line(l));
        }
    };
    let mut wait = WaitLine {
        line: StatusLine::new(),
        last_whole_s: 0,
    };
    let mut on_wait = |w: &WaitStatus| {
        let _ = out.borrow_mut().flush();
        wait.update(w, cfg.count);
    };
    let result = ptmp::check_recv(
        ctx,
        &cfg,
        |b| super::compat::announce("check_recv", &cfg.endpoint, b),
        &mut on_line,
        &mut on_wait,
    );
    wait.finish();
    let mut out = out.into_inner();
    let r = result?;
    if a.json {
        let _ = writeln!(out, "{}", json("check_recv", &r, None));
        super::compat::result_printed();
    } else {
        let _ = write!(out, "{}", zmqperf::term::fit(&text::recv_text(&r)));
    }
    out.flush().map_err(|e| Error::Io {
        op: "writing to standard output".into(),
        source: e,
    })?;
    drop(out);
    recv_outcome(&r, &cfg, timeout)
}

/// The exit of `check_recv`, once its figures are printed: a protocol error, a signal, a
/// stream cut short, lost messages; a note when the stream was shorter than COUNT.
fn recv_outcome(
    r: &ptmp::RecvResult,
    cfg: &ptmp::RecvConfig,
    timeout: std::time::Duration,
) -> Result<()> {
    if let Some(why) = &r.protocol_error {
        return Err(Error::Protocol(format!(
            "{why} (the figures above are of the messages before it)"
        )));
    }
    if r.ended == Ended::Interrupted {
        return Err(Error::Interrupted(format!(
            "after {} of {} messages; the figures above are of what arrived before it",
            grouped(r.received),
            grouped(cfg.count)
        )));
    }
    let l = &r.loss;
    if r.ended == Ended::Timeout && l.lost > 0 {
        return Err(Error::CutShort {
            detail: format!(
                "nothing arrived {} {}{}",
                if r.received == 0 {
                    "within".to_string()
                } else {
                    format!("after message {} for", grouped(r.received))
                },
                fmt_duration(timeout),
                match r.sender_disconnected {
                    Some(true) => ", and the sender had disconnected",
                    Some(false) => ", and the sender is still connected",
                    None => "",
                }
            ),
            received: l.received,
            expected: l.expected,
            at_start: l.lost_at_start,
            in_middle: l.lost_in_middle,
            at_end: l.lost_at_end,
            cause: r.cause_line(),
        });
    }
    if l.lost > 0 {
        return Err(Error::Lost {
            lost: l.lost,
            expected: l.expected,
            at_start: l.lost_at_start,
            in_middle: l.lost_in_middle,
            at_end: l.lost_at_end,
            cause: r.cause_line(),
        });
    }
    if r.ended == Ended::EndMark && r.received < cfg.count {
        zmqperf::errln!(
            "zmqperf: note: the sender's stream had {} messages, fewer than COUNT {}: all of them arrived",
            grouped(l.expected),
            grouped(cfg.count)
        );
    }
    Ok(())
}

/// `zmqperf check_sendrecv`.
pub(super) fn check_sendrecv(a: &CheckSendrecv) -> Result<()> {
    zmqperf::runner::catch_signals();
    let side = ptmp::parse_side(&a.attach)?;
    let endpoint = zmqperf::endpoint::Endpoint::parse(&a.addr, Side::Bind)?;
    let mut cfg = ptmp::SendRecvConfig::new(count(&a.count)?, &a.pattern, side, endpoint)?;
    cfg.size = parse_size("--size", &a.size)?;
    cfg.timeout = parse_duration("--timeout", &a.timeout)?;
    if cfg.size < zmqperf::header::HEADER_LEN {
        return Err(Error::invalid(
            "--size",
            &a.size,
            format!(
                "the measurement header needs {} bytes; give {} or more",
                zmqperf::header::HEADER_LEN,
                zmqperf::header::HEADER_LEN
            ),
        ));
    }
    let r = ptmp::check_sendrecv(&cfg)?;
    if a.json {
        println!("{}", json("check_sendrecv", &r, None));
        super::compat::result_printed();
    } else {
        print!("{}", zmqperf::term::fit(&text::sendrecv_text(&r)));
    }
    if r.ended == Ended::Interrupted {
        return Err(Error::Interrupted(
            "the figures above are of what was done before it".into(),
        ));
    }
    let l = &r.loss;
    if l.lost > 0 {
        return Err(Error::Lost {
            lost: l.lost,
            expected: l.expected,
            at_start: l.lost_at_start,
            in_middle: l.lost_in_middle,
            at_end: l.lost_at_end,
            cause: r.cause_line(),
        });
    }
    Ok(())
}
