//! ZeroMQ's security mechanisms set on a socket: NULL (none, libzmq's default), PLAIN (user
//! name and password in clear) and CURVE (CurveZMQ: encryption and authentication, through
//! libsodium). The binding side is the server, the connecting side the client. The
//! mechanisms and keys themselves are socket options of the topology model.

use crate::error::{Error, Result};
pub use crate::topology::security::{
    holds_secrets, no_curve, redact_secrets, CurveKeys, Mechanism, REDACTED,
};
use crate::zmq;

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
                .ok_or_else(|| Error::Protocol("a PLAIN server socket without its context".into()))?
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
                Error::Protocol(
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
