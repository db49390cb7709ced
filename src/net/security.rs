//! ZeroMQ's security mechanisms set on a socket: NULL (none, libzmq's default), PLAIN (user
//! name and password in clear) and CURVE (CurveZMQ: encryption and authentication, through
//! libsodium). The binding side is the server, the connecting side the client. The
//! mechanisms and keys themselves are socket options of the topology model; fresh CURVE keys
//! for a run come from libzmq here.

use crate::error::{Error, Result};
pub use crate::topology::security::{
    holds_secrets, redact_secrets, CurveKeys, Mechanism, REDACTED,
};
use crate::zmq;
use std::ffi::{c_char, CStr};

/// The PLAIN credentials used when none are given.
pub const PLAIN_USER: &str = "zmqperf";
pub const PLAIN_PASSWORD: &str = "zmqperf";

/// Sets the mechanism on a socket before it binds or connects: `server` for the binding
/// side. CURVE needs keys (`keys`); PLAIN uses the given credentials or zmqperf's.
pub fn apply(
    s: &zmq::Socket,
    mechanism: Mechanism,
    server: bool,
    keys: Option<&CurveKeys>,
    plain: (&str, &str),
) -> Result<()> {
    let set = |what: &str, r: zmq::Result<()>| {
        r.map_err(|e| match mechanism {
            Mechanism::Curve => no_curve(e),
            _ => crate::error::zmq_err(what)(e),
        })
    };
    match mechanism {
        Mechanism::Null => Ok(()),
        Mechanism::Plain if server => {
            // libzmq's PLAIN server needs a ZAP handler in its context to accept anyone.
            s.context()
                .ok_or_else(|| Error::Internal("a PLAIN server socket without its context".into()))?
                .start_zap_handler()
                .map_err(crate::error::zmq_err("starting the ZAP handler for PLAIN"))?;
            set(
                "setting ZMQ_PLAIN_SERVER",
                s.set_int(zmq::ZMQ_PLAIN_SERVER, 1),
            )
        }
        Mechanism::Plain => {
            set(
                "setting ZMQ_PLAIN_USERNAME",
                s.set_bytes(zmq::ZMQ_PLAIN_USERNAME, plain.0.as_bytes()),
            )?;
            set(
                "setting ZMQ_PLAIN_PASSWORD",
                s.set_bytes(zmq::ZMQ_PLAIN_PASSWORD, plain.1.as_bytes()),
            )
        }
        Mechanism::Curve => {
            let k = keys.ok_or_else(|| {
                Error::Internal(
                    "CURVE asked for without keys (zmqperf fills them in per run)".into(),
                )
            })?;
            if server {
                set(
                    "setting ZMQ_CURVE_SERVER",
                    s.set_int(zmq::ZMQ_CURVE_SERVER, 1),
                )?;
                set(
                    "setting ZMQ_CURVE_SECRETKEY",
                    s.set_bytes(zmq::ZMQ_CURVE_SECRETKEY, k.server_secret.as_bytes()),
                )
            } else {
                set(
                    "setting ZMQ_CURVE_SERVERKEY",
                    s.set_bytes(zmq::ZMQ_CURVE_SERVERKEY, k.server_public.as_bytes()),
                )?;
                set(
                    "setting ZMQ_CURVE_PUBLICKEY",
                    s.set_bytes(zmq::ZMQ_CURVE_PUBLICKEY, k.client_public.as_bytes()),
                )?;
                set(
                    "setting ZMQ_CURVE_SECRETKEY",
                    s.set_bytes(zmq::ZMQ_CURVE_SECRETKEY, k.client_secret.as_bytes()),
                )
            }
        }
    }
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
}
