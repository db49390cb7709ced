//! Sockets for the experiments: opened with timeouts and linger 0, bound to ephemeral
//! loopback endpoints, and the measured messages they carry (the measurement header with a
//! sequence number and the send time).

use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{zmq_err, Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, HEADER_LEN};
use crate::msg::RawMsg;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Payload bytes of the experiments' messages unless one says otherwise.
pub const SIZE: usize = 64;

/// Milliseconds for a socket option, capped to what it holds.
pub fn millis(d: Duration) -> i32 {
    d.as_millis().min(i32::MAX as u128) as i32
}

/// A socket with send and receive timeouts of `timeout` and linger 0 (an experiment's
/// socket never holds up the end of the experiment; the fast-quit sender sets its own).
pub fn socket(ctx: &zmq::Context, kind: zmq::SocketType, timeout: Duration) -> Result<zmq::Socket> {
    let s = ctx.socket(kind).map_err(zmq_err("zmq_socket"))?;
    let ms = millis(timeout);
    s.set_rcvtimeo(ms)
        .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    s.set_sndtimeo(ms)
        .map_err(zmq_err("setting ZMQ_SNDTIMEO"))?;
    s.set_linger(0).map_err(zmq_err("setting ZMQ_LINGER"))?;
    if kind == zmq::SUB {
        s.set_subscribe(b"").map_err(zmq_err("subscribing"))?;
    }
    Ok(s)
}

/// Sets both high-water marks of a socket (0: no limit).
pub fn set_hwm(s: &zmq::Socket, hwm: i32) -> Result<()> {
    s.set_sndhwm(hwm).map_err(zmq_err("setting ZMQ_SNDHWM"))?;
    s.set_rcvhwm(hwm).map_err(zmq_err("setting ZMQ_RCVHWM"))
}

/// Makes the kernel's socket buffers of a tcp or ipc socket small, so that ZeroMQ's own
/// queue is what fills; no effect on inproc.
pub fn small_kernel_buffers(s: &zmq::Socket, bytes: i32) -> Result<()> {
    s.set_sndbuf(bytes).map_err(zmq_err("setting ZMQ_SNDBUF"))?;
    s.set_rcvbuf(bytes).map_err(zmq_err("setting ZMQ_RCVBUF"))
}

static ENDPOINT_N: AtomicUsize = AtomicUsize::new(0);

/// Binds `s` to a fresh loopback endpoint of `t` and returns the endpoint to connect to:
/// `tcp://127.0.0.1:PORT`, an ipc name (in Linux's abstract namespace, so no socket file
/// is left in the temp folder), or a fresh inproc name.
pub fn bind(s: &zmq::Socket, t: Transport) -> Result<String> {
    let n = ENDPOINT_N.fetch_add(1, Ordering::Relaxed);
    let want = match t {
        Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
        // Linux: a name in the abstract namespace, which leaves no file behind.
        Transport::Ipc if cfg!(target_os = "linux") => {
            format!("ipc://@zmqperf-diag-{}-{n}", std::process::id())
        }
        Transport::Ipc => format!(
            "ipc://{}/zmqperf-diag-{}-{n}.sock",
            std::env::temp_dir().display(),
            std::process::id()
        ),
        Transport::Inproc => format!("inproc://zmqperf-diag-{n}"),
    };
    s.bind(&want).map_err(|e| Error::Endpoint {
        endpoint: want.clone(),
        reason: format!("cannot bind ({e})"),
    })?;
    Ok(match t {
        Transport::Tcp => s
            .get_last_endpoint()
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or(want),
        _ => want,
    })
}

/// Connects `s` to `endpoint`.
pub fn connect(s: &zmq::Socket, endpoint: &str) -> Result<()> {
    s.connect(endpoint).map_err(|e| Error::Endpoint {
        endpoint: endpoint.to_string(),
        reason: format!("cannot connect ({e})"),
    })
}

/// A message of `size` bytes (at least the header) carrying sequence `seq`, the send time
/// and `flags`, ready to send.
pub fn message(size: usize, seq: u64, flags: u8) -> Result<RawMsg> {
    let mut m = RawMsg::zeroed(size.max(HEADER_LEN))?;
    let h = Header {
        flags: flags | FLAG_TIMESTAMP,
        stream_id: 0,
        sequence: seq,
        send_ns: now_ns(),
    };
    m.write_array(&h.to_bytes());
    Ok(m)
}

/// Sends message `seq` on `s`; the zmq error as is (EAGAIN: timed out or would block).
pub fn send(
    s: &mut zmq::Socket,
    size: usize,
    seq: u64,
    flags: u8,
    zmq_flags: i32,
) -> Result<std::result::Result<(), zmq::Error>> {
    let mut m = message(size, seq, flags)?;
    Ok(m.send(s, zmq_flags))
}

/// Receives the next message; `Ok(None)` when the receive timed out.
pub fn recv(s: &mut zmq::Socket, msg: &mut RawMsg) -> Result<Option<Header>> {
    match msg.recv(s, 0) {
        Ok(()) => {}
        Err(zmq::Error::EAGAIN) => return Ok(None),
        Err(e) => {
            return Err(Error::Zmq {
                op: "receiving".into(),
                source: e,
            })
        }
    }
    match Header::decode(msg.prefix(HEADER_LEN)) {
        Ok(Some(h)) => Ok(Some(h)),
        Ok(None) => Err(Error::Protocol(
            "a message without the measurement header".into(),
        )),
        Err(e) => Err(Error::Protocol(e.to_string())),
    }
}

/// Resident memory of this process now (VmRSS) and at its peak (VmHWM), KiB.
pub fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
