//! The raw-socket floor: a plain TCP or Unix-socket ping-pong of the same size, so a
//! latency case shows what ZeroMQ adds to what the kernel costs anyway.

use crate::clock::now_ns;
use crate::model::Floor;
use std::io::{Read, Write};
use std::time::Duration;

fn ping_pong<S: Read + Write + Send + 'static>(
    mut client: S,
    mut server: S,
    size: usize,
    roundtrips: u64,
) -> std::io::Result<u64> {
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let mut buf = vec![0u8; size];
        for _ in 0..roundtrips {
            server.read_exact(&mut buf)?;
            server.write_all(&buf)?;
        }
        Ok(())
    });
    let mut buf = vec![0u8; size];
    let start = now_ns();
    for _ in 0..roundtrips {
        client.write_all(&buf)?;
        client.read_exact(&mut buf)?;
    }
    let elapsed = now_ns() - start;
    echo.join()
        .map_err(|_| std::io::Error::other("echo thread panicked"))??;
    Ok(elapsed)
}

/// TCP over loopback, Nagle off.
pub fn tcp(size: usize, roundtrips: u64) -> std::io::Result<Floor> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    let client = std::net::TcpStream::connect(l.local_addr()?)?;
    let (server, _) = l.accept()?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
    }
    let ns = ping_pong(client, server, size, roundtrips)?;
    Ok(Floor {
        socket: "tcp".into(),
        latency_us: ns as f64 / 1000.0 / (2.0 * roundtrips as f64),
        roundtrips,
        p50_us: None,
        p99_us: None,
    })
}

/// A Unix stream socket pair (what ipc:// runs on).
pub fn unix(size: usize, roundtrips: u64) -> std::io::Result<Floor> {
    let (client, server) = std::os::unix::net::UnixStream::pair()?;
    for s in [&client, &server] {
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
    }
    let ns = ping_pong(client, server, size, roundtrips)?;
    Ok(Floor {
        socket: "unix".into(),
        latency_us: ns as f64 / 1000.0 / (2.0 * roundtrips as f64),
        roundtrips,
        p50_us: None,
        p99_us: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn floors_measure_something() {
        let t = super::tcp(64, 200).unwrap();
        let u = super::unix(1024, 200).unwrap();
        assert!(t.latency_us > 0.0 && u.latency_us > 0.0);
        assert_eq!(t.roundtrips, 200);
    }
}
