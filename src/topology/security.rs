//! The security options of a socket: the mechanism (NULL, PLAIN, CURVE) and CURVE's keys,
//! generated for a run or given in a topology file.

use crate::error::{Error, Result};
use crate::zmq;
use serde::{Deserialize, Serialize};
use std::ffi::{c_char, CStr};

/// A security mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// No security (libzmq's default).
    #[default]
    Null,
    /// User name and password, sent in clear.
    Plain,
    /// CurveZMQ.
    Curve,
}

impl Mechanism {
    /// Its name as written in options and case labels: `null`, `plain`, `curve`.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Null => "null",
            Mechanism::Plain => "plain",
            Mechanism::Curve => "curve",
        }
    }

    /// Parses `null`, `plain` or `curve` (any case).
    pub fn parse(what: &str, s: &str) -> Result<Mechanism> {
        match s.to_ascii_lowercase().as_str() {
            "null" | "none" => Ok(Mechanism::Null),
            "plain" => Ok(Mechanism::Plain),
            "curve" => Ok(Mechanism::Curve),
            _ => Err(Error::invalid(
                what,
                s,
                "expected null, plain or curve (ZeroMQ's security mechanisms)",
            )),
        }
    }
}

/// The four CURVE keys of a server and one client, Z85-encoded (40 characters each).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveKeys {
    pub server_public: String,
    pub server_secret: String,
    pub client_public: String,
    pub client_secret: String,
}

impl CurveKeys {
    /// Fresh keys from libzmq (`zmq_curve_keypair`), for one run.
    pub fn generate() -> Result<CurveKeys> {
        let pair = || -> Result<(String, String)> {
            let (mut public, mut secret) = ([0 as c_char; 41], [0 as c_char; 41]);
            // SAFETY: both buffers hold the 40 Z85 characters and the terminating NUL.
            let rc =
                unsafe { (zmq::api().zmq_curve_keypair)(public.as_mut_ptr(), secret.as_mut_ptr()) };
            if rc != 0 {
                return Err(no_curve(zmq::Error::last()));
            }
            // SAFETY: libzmq wrote NUL-terminated strings.
            let text = |b: &[c_char; 41]| {
                unsafe { CStr::from_ptr(b.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            };
            Ok((text(&public), text(&secret)))
        };
        let (server_public, server_secret) = pair()?;
        let (client_public, client_secret) = pair()?;
        Ok(CurveKeys {
            server_public,
            server_secret,
            client_public,
            client_secret,
        })
    }

    /// The fixed keys of libzmq's perf tools (local_thr.cpp, remote_thr.cpp), so the
    /// compatible commands and the C tools can talk CURVE to each other.
    pub fn libzmq_perf_tools() -> CurveKeys {
        CurveKeys {
            server_public: "DX4nh=yUn{-9ugra0X3Src4SU-4xTgqxcYY.+<SH".into(),
            server_secret: "{X}#>t#jRGaQ}gMhv=30r(Mw+87YGs+5%kh=i@f8".into(),
            client_public: "<n^oA}I:66W+*ds3tAmi1+KJzv-}k&fC2aA5Bj0K".into(),
            client_secret: "9R9bV}[6z6DC-%$!jTVTKvWc=LEL{4i4gzUe$@Zx".into(),
        }
    }

    /// Checks that every key is 40 Z85 characters.
    pub fn check(&self, what: &str) -> Result<()> {
        const Z85: &str =
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
        for (name, k) in [
            ("server_public", &self.server_public),
            ("server_secret", &self.server_secret),
            ("client_public", &self.client_public),
            ("client_secret", &self.client_secret),
        ] {
            if k.len() != 40 || !k.chars().all(|c| Z85.contains(c)) {
                return Err(Error::invalid(
                    &format!("{what}.{name}"),
                    k,
                    "a CURVE key is 40 characters of Z85 (as zmq_curve_keypair prints them)",
                ));
            }
        }
        Ok(())
    }
}

/// The error for a CURVE set-up that failed: the library's lack of CURVE, if that is why.
pub fn no_curve(e: zmq::Error) -> Error {
    let lib = zmq::library();
    if !lib.has("curve") {
        Error::invalid(
            "security",
            "curve",
            format!(
                "the libzmq measured ({}, {}) was built without CURVE (zmq_has(\"curve\") is false); use a libzmq built with libsodium, such as zmqperf's own (--libzmq bundled)",
                lib.version, lib.path
            ),
        )
    } else {
        crate::error::zmq_err("setting up CURVE")(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_z85_and_differ() {
        let a = CurveKeys::generate().unwrap();
        a.check("keys").unwrap();
        let b = CurveKeys::generate().unwrap();
        assert_ne!(a, b);
        assert_ne!(a.server_public, a.client_public);
        CurveKeys::libzmq_perf_tools().check("keys").unwrap();
        let mut bad = a.clone();
        bad.client_secret.pop();
        assert!(bad.check("keys").is_err());
    }

    #[test]
    fn the_perf_tools_server_public_key_belongs_to_its_secret_key() {
        let k = CurveKeys::libzmq_perf_tools();
        let mut public = [0 as c_char; 41];
        let secret = std::ffi::CString::new(k.server_secret.clone()).unwrap();
        // SAFETY: a 41-byte buffer and a NUL-terminated Z85 secret.
        let rc = unsafe { (zmq::api().zmq_curve_public)(public.as_mut_ptr(), secret.as_ptr()) };
        assert_eq!(rc, 0);
        let derived = unsafe { CStr::from_ptr(public.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        assert_eq!(derived, k.server_public);
    }

    #[test]
    fn names_parse_back() {
        for m in [Mechanism::Null, Mechanism::Plain, Mechanism::Curve] {
            assert_eq!(Mechanism::parse("x", m.name()).unwrap(), m);
        }
        assert!(Mechanism::parse("--security", "gssapi").is_err());
    }
}
