//! Tests of the raw publisher: its framing on the wire, its accept loop and its report.

use super::super::RawAddr;
use super::*;

#[test]
fn a_frame_goes_whole_and_a_closed_peer_is_gone() {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let a: OwnedFd = a.into();
    let f = frame_buffer(100);
    assert!(matches!(send_frame(a.as_raw_fd(), &f), Ok(Wrote::All)));
    let mut got = vec![0u8; 104];
    std::io::Read::read_exact(&mut &b, &mut got).unwrap();
    assert_eq!(got, f);
    drop(b);
    assert!(matches!(send_frame(a.as_raw_fd(), &f), Ok(Wrote::Gone)));
}

#[test]
fn a_full_socket_times_out() {
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let a: OwnedFd = a.into();
    set_send_timeout(&a, Duration::from_millis(20)).unwrap();
    let big = vec![0u8; 1 << 16];
    let e = loop {
        match send_frame(a.as_raw_fd(), &big) {
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
}

#[test]
fn the_acceptor_takes_every_connection_or_says_how_many() {
    let (l, bound) = Listener::bind("tcp://127.0.0.1:*", 128).unwrap();
    let addr = RawAddr::parse(&bound).unwrap();
    let acc = Acceptor::spawn(l, 3);
    let c: Vec<OwnedFd> = (0..3)
        .map(|_| addr.connect(Duration::from_secs(5)).unwrap())
        .collect();
    assert_eq!(acc.wait(Duration::from_secs(10)).unwrap().unwrap().len(), 3);
    drop(c);
    let (l, bound) = Listener::bind("ipc://*", 128).unwrap();
    let addr = RawAddr::parse(&bound).unwrap();
    let acc = Acceptor::spawn(l, 2);
    let _one = addr.connect(Duration::from_secs(5)).unwrap();
    assert_eq!(
        acc.wait(Duration::from_millis(300)).unwrap().unwrap_err(),
        1
    );
    // The socket file went with the listener.
    let RawAddr::Unix(Some(p)) = addr else {
        panic!("a path")
    };
    assert!(!p.exists());
}
