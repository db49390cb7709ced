//! The echo role: sends every request back where it came from, frames and all (REP,
//! ROUTER, DEALER or PAIR): the message itself (zero copy, libzmq's local_lat), a copy, or
//! after reading its header into a ledger. Then it keeps its connection until the clients
//! hang up so the last reply is not lost.

use super::{
    node_usage, open_all, Control, EchoMode, HeaderUse, Io, Next, NodeSpec, Patience, RoleReport,
    STOP_POLL,
};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::{Header, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, Waiting};
use crate::progress::Progress;
use crate::stats::{Ledger, Throughput};
use crate::zmq;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let mut opened = open_all(ctx, spec, ctl, STOP_POLL)?;
    let o = &mut opened[0];
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: spec.peer_or("the ping node"),
        timeout: spec.timeout(),
        expected: spec.expect,
        unit: "round trips",
        watch: o.watch.as_ref(),
    };
    let s = &mut o.sock;
    let mut patience = Patience::new(spec.timeout());
    let mut io = Io::new(spec.io, spec.timeout());
    io.watch_stalls(s, STOP_POLL)?;
    let mut progress = Progress::new("round trips", spec.expect);
    // Frames of one request: the routing envelope (ROUTER, DEALER), then the payload.
    let mut frames: Vec<RawMsg> = Vec::new();
    let mut ledger = Ledger::new();
    // Inspect: whether requests carry the header (decided by the first one when detecting).
    let mut header = spec.echo == EchoMode::Inspect && spec.size >= HEADER_LEN;
    let mut done = 0u64;
    let mut start = 0;
    let mut cut_short = None;
    // Once the first request showed one frame (libzmq's C remote_lat, zmqperf's REQ), the
    // next ones go through `Turn::single`, as long as they look the same.
    let mut one_frame = false;
    let mut turn = Turn {
        spec,
        patience: &mut patience,
        io: &mut io,
        wait: &wait,
        progress: &mut progress,
    };
    while !(spec.ends_itself && done == spec.expect) {
        // frames[0] may hold a first frame `single` took (a request of several frames).
        let mut first = None;
        if one_frame {
            let one = &mut frames[0];
            let taken = if header {
                turn.single::<true>(one, s, ctl, &mut done, &mut ledger)?
            } else {
                turn.single::<false>(one, s, ctl, &mut done, &mut ledger)?
            };
            match taken {
                Taken::Ended => break,
                Taken::Wait(next) => first = Some(next),
                Taken::More => first = Some(Next::Got),
            }
        }
        let n = match turn.request(&mut frames, s, ctl, done, first)? {
            Request::Frames(n) => n,
            Request::Stopped => break,
            Request::Cut(why) => {
                cut_short = Some(why);
                break;
            }
        };
        if done == 0 {
            start = now_ns();
        }
        let payload = &mut frames[n - 1];
        check_size(payload, spec.size, done)?;
        if header {
            inspect(payload, done, spec, &mut ledger, &mut header)?;
        }
        if spec.echo == EchoMode::Copy {
            let copy = RawMsg::copy_of(payload.bytes())?;
            frames[n - 1] = copy;
        }
        reply(&mut frames[..n], turn.io, s)
            .map_err(|e| wait.error(e, done + 1, " (the reply could not be sent)".into()))?;
        done += 1;
        turn.progress.tick(done);
        one_frame = n == 1 && spec.echo != EchoMode::Copy;
    }
    let end = now_ns();
    io.end_watch();
    progress.finish();
    if spec.ends_itself && done < spec.expect && cut_short.is_none() {
        return Err(Error::Protocol(format!(
            "stopped after {done} of {} requests",
            spec.expect
        )));
    }
    let peer_closed = o
        .watch
        .as_ref()
        .filter(|_| !crate::interrupt::interrupted())
        .map(|w| w.wait_gone_n(spec.peers.max(1), spec.timeout()));
    let round_trips = Throughput {
        messages: done,
        payload_bytes: done * spec.size as u64,
        start_ns: start,
        end_ns: end,
    };
    Ok(RoleReport {
        ledger: header.then_some(ledger),
        round_trips: Some(round_trips),
        header,
        peer_closed,
        cut_short,
        usage: Some(node_usage(spec)),
        io_waits: io.waits(),
        ..Default::default()
    })
}

/// What [`Turn::single`] ended on.
enum Taken {
    /// The count is done.
    Ended,
    /// A wait ended without a request.
    Wait(Next),
    /// A request of several frames: its first is in the frame, the rest to read.
    More,
}

/// How [`Turn::request`] ended.
enum Request {
    /// A request of this many frames is in the first frames.
    Frames(usize),
    /// The runner said stop.
    Stopped,
    /// The requests ended before the count: why.
    Cut(String),
}

/// The echo's waits for requests.
struct Turn<'a, 'w> {
    spec: &'a NodeSpec,
    patience: &'a mut Patience,
    io: &'a mut Io,
    wait: &'a Waiting<'w>,
    progress: &'a mut Progress,
}

impl Turn<'_, '_> {
    /// Reads a request's frames into `frames` (its first already there when `first` says
    /// how its wait ended).
    #[inline(always)]
    fn request(
        &mut self,
        frames: &mut Vec<RawMsg>,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        done: u64,
        mut first: Option<Next>,
    ) -> Result<Request> {
        let mut n = 0;
        loop {
            if frames.len() == n {
                frames.push(RawMsg::new());
            }
            let got = match first.take() {
                Some(next) => next,
                None if n == 0 => self
                    .patience
                    .recv(&mut frames[0], s, ctl, self.io)
                    .map_err(|e| self.wait.error(e, done, String::new()))?,
                None => {
                    self.io
                        .recv(&mut frames[n], s)
                        .map_err(|e| self.wait.error(e, done, String::new()))?;
                    Next::Got
                }
            };
            match got {
                Next::Got => {}
                Next::Stopped => return Ok(Request::Stopped),
                other => return Ok(Request::Cut(cut(other, done, self.patience, self.wait)?)),
            }
            let more = frames[n].more();
            n += 1;
            if !more {
                return Ok(Request::Frames(n));
            }
        }
    }

    /// Requests of one frame, each sent back as it came: the loop of libzmq's local_lat,
    /// with the echo's waits and checks, and with `HEADER` each request's header read into
    /// the ledger (the in-order requests of one stream counted by [`InOrder`]).
    #[inline(always)]
    fn single<const HEADER: bool>(
        &mut self,
        frame: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        done: &mut u64,
        ledger: &mut Ledger,
    ) -> Result<Taken> {
        let mut run = InOrder::default();
        let taken = self.single_counted::<HEADER>(frame, s, ctl, done, ledger, &mut run);
        run.flush(ledger);
        taken
    }

    #[inline(always)]
    fn single_counted<const HEADER: bool>(
        &mut self,
        frame: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        done: &mut u64,
        ledger: &mut Ledger,
        run: &mut InOrder,
    ) -> Result<Taken> {
        let spec = self.spec;
        // The count in a register, written back on every way out; u64::MAX: no end.
        let end = if spec.ends_itself {
            spec.expect
        } else {
            u64::MAX
        };
        let mut n = *done;
        let taken = loop {
            if n == end {
                break Ok(Taken::Ended);
            }
            let got = match self.patience.recv(frame, s, ctl, self.io) {
                Ok(got) => got,
                Err(e) => break Err(self.wait.error(e, n, String::new())),
            };
            if got != Next::Got {
                break Ok(Taken::Wait(got));
            }
            if frame.more() {
                break Ok(Taken::More);
            }
            if let Err(e) = check_size(frame, spec.size, n) {
                break Err(e);
            }
            if HEADER && !run.takes(frame) {
                // The header was seen on the first request: it is never dropped after.
                run.flush(ledger);
                if let Err(e) = inspect(frame, n, spec, ledger, &mut true) {
                    break Err(e);
                }
                *run = InOrder::after(frame, ledger);
            }
            if let Err(e) = self.io.send(frame, s, 0) {
                let reason = " (the reply could not be sent)".into();
                break Err(self.wait.error(e, n + 1, reason));
            }
            n += 1;
            self.progress.tick(n);
        };
        *done = n;
        taken
    }
}

/// The requests that continue the ledger's last stream in order, with the same first eight
/// bytes (magic, version, flags, stream) as the request before: counted here, and given to
/// the ledger at once when the count stops ([`InOrder::flush`]), the same as recording each.
#[derive(Default)]
struct InOrder {
    /// The first eight bytes of such a request (0: none is taken: no header starts so).
    word: u64,
    /// The sequence the next such request carries.
    next: u64,
    /// Requests counted since the last flush.
    taken: u64,
}

impl InOrder {
    /// The count after `frame`, just recorded in `ledger` the full way.
    fn after(frame: &mut RawMsg, ledger: &mut Ledger) -> InOrder {
        let next = ledger.last_stream().and_then(|(_, l)| l.next_in_order());
        match (frame.head_words(), next) {
            (Some([word, _]), Some(next)) => InOrder {
                word,
                next,
                taken: 0,
            },
            _ => InOrder::default(),
        }
    }

    /// Whether `frame` is the next such request (then it is counted).
    #[inline(always)]
    fn takes(&mut self, frame: &mut RawMsg) -> bool {
        match frame.head_words() {
            Some([w, seq]) if w == self.word && seq == self.next && w != 0 => {
                self.next += 1;
                self.taken += 1;
                true
            }
            _ => false,
        }
    }

    /// Gives the requests counted to the ledger.
    fn flush(&mut self, ledger: &mut Ledger) {
        if self.taken > 0 {
            if let Some((_, l)) = ledger.last_stream() {
                l.record_in_order(self.taken);
            }
            self.taken = 0;
        }
    }
}

/// Why the requests end after `done` round trips: a signal, or no request for the idle
/// time; no request at all is the peer's absence (an error).
#[cold]
fn cut(got: Next, done: u64, patience: &Patience, wait: &Waiting) -> Result<String> {
    match got {
        Next::Idle if done == 0 => Err(wait.error(zmq::Error::EAGAIN, 0, String::new())),
        Next::Idle => Ok(format!(
            "idle: no request for {:.1} s after {done} round trips",
            patience.idle().as_secs_f64()
        )),
        _ => Ok(super::sink::interrupted_after(done, "round trips")),
    }
}

/// Sends the frames of a request back, envelope first.
#[inline(always)]
fn reply(frames: &mut [RawMsg], io: &mut Io, s: &mut zmq::Socket) -> zmq::Result<()> {
    let n = frames.len();
    for (i, f) in frames.iter_mut().enumerate() {
        let flags = if i + 1 < n { zmq::SNDMORE } else { 0 };
        io.send(f, s, flags)?;
    }
    Ok(())
}

/// Reads request `done`'s header into the ledger; `header` turns false when the first
/// request shows a client that sends no header (when the spec only detects it).
#[inline(always)]
fn inspect(
    payload: &mut RawMsg,
    done: u64,
    spec: &NodeSpec,
    ledger: &mut Ledger,
    header: &mut bool,
) -> Result<()> {
    match Header::decode(payload.prefix(HEADER_LEN)) {
        Ok(Some(h)) => ledger.record(h.stream_id, h.sequence),
        Ok(None) if spec.header == HeaderUse::Detect && done == 0 => *header = false,
        Ok(None) => {
            return Err(Error::Protocol(
                "a request without the measurement header".into(),
            ))
        }
        Err(e) => return Err(Error::Protocol(e.to_string())),
    }
    Ok(())
}
