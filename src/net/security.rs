//! ZeroMQ's security mechanisms set on a socket: NULL (none, libzmq's default), PLAIN (user
//! name and password in clear), CURVE (CurveZMQ: encryption and authentication, through
//! libsodium) and GSSAPI (Kerberos; a libzmq built with it, such as Debian's). The binding
//! side is the server, the connecting side the client. The
//! mechanisms and keys themselves are socket options of the topology model; fresh CURVE keys
//! for a run come from libzmq here.

use crate::error::{Error, Result};
pub use crate::topology::security::{
    holds_secrets, redact_secrets, CurveKeys, Mechanism, REDACTED,
};
use crate::topology::SocketOptions;
use crate::zmq;
use std::ffi::{c_char, CStr};

/// The PLAIN credentials used when none are given.
pub const PLAIN_USER: &str = "zmqperf";
pub const PLAIN_PASSWORD: &str = "zmqperf";

/// Sets the mechanism of `o` on a socket before it binds or connects: `server` for the
/// binding side. CURVE needs keys; PLAIN uses the given credentials or zmqperf's; a GSSAPI
/// client asks for a ticket to the service's principal (or zmqperf's), and both sides find
/// their keys and tickets where Kerberos looks (KRB5_KTNAME, KRB5CCNAME, KRB5_CONFIG).
pub fn apply(s: &zmq::Socket, o: &SocketOptions, server: bool) -> Result<()> {
    let Some(mechanism) = o.security else {
        return Ok(());
    };
    let set = |what: &str, r: zmq::Result<()>| {
        r.map_err(|e| match mechanism {
            Mechanism::Curve | Mechanism::Gssapi => no_mechanism(mechanism, e),
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
            let user = o.plain_username.as_deref().unwrap_or(PLAIN_USER);
            let password = o.plain_password.as_deref().unwrap_or(PLAIN_PASSWORD);
            set(
                "setting ZMQ_PLAIN_USERNAME",
                s.set_bytes(zmq::ZMQ_PLAIN_USERNAME, user.as_bytes()),
            )?;
            set(
                "setting ZMQ_PLAIN_PASSWORD",
                s.set_bytes(zmq::ZMQ_PLAIN_PASSWORD, password.as_bytes()),
            )
        }
        Mechanism::Curve => {
            let k = o.curve_keys.as_ref().ok_or_else(|| {
                Error::Internal(
                    "CURVE asked for without keys (zmqperf fills them in per run)".into(),
                )
            })?;
            let keys: &[(i32, &str)] = if server {
                &[(zmq::ZMQ_CURVE_SECRETKEY, &k.server_secret)]
            } else {
                &[
                    (zmq::ZMQ_CURVE_SERVERKEY, &k.server_public),
                    (zmq::ZMQ_CURVE_PUBLICKEY, &k.client_public),
                    (zmq::ZMQ_CURVE_SECRETKEY, &k.client_secret),
                ]
            };
            if server {
                set(
                    "setting ZMQ_CURVE_SERVER",
                    s.set_int(zmq::ZMQ_CURVE_SERVER, 1),
                )?;
            }
            for (opt, key) in keys {
                set("setting a CURVE key", s.set_bytes(*opt, key.as_bytes()))?;
            }
            Ok(())
        }
        Mechanism::Gssapi => {
            // The library first: without GSSAPI in it, Kerberos is beside the point.
            if !zmq::library().has("gssapi") {
                return Err(no_mechanism(mechanism, zmq::Error::last()));
            }
            if server {
                crate::net::kerberos::check_server()?;
                // The server names no principal of its own: it accepts a ticket to any key in
                // its keytab. Named, libzmq would ask for initiator credentials too
                // (GSS_C_BOTH), which a keytab alone does not give.
                set(
                    "setting ZMQ_GSSAPI_SERVER",
                    s.set_int(zmq::ZMQ_GSSAPI_SERVER, 1),
                )?;
            } else {
                let name = o.gssapi_principal.as_deref().unwrap_or(GSSAPI_PRINCIPAL);
                crate::net::kerberos::check_client(name)?;
                set(
                    "setting ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE",
                    s.set_int(
                        zmq::ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE,
                        gssapi_name_type(name),
                    ),
                )?;
                set(
                    "setting ZMQ_GSSAPI_SERVICE_PRINCIPAL",
                    s.set_bytes(zmq::ZMQ_GSSAPI_SERVICE_PRINCIPAL, name.as_bytes()),
                )?;
            }
            if o.gssapi_plaintext == Some(true) {
                set(
                    "setting ZMQ_GSSAPI_PLAINTEXT",
                    s.set_int(zmq::ZMQ_GSSAPI_PLAINTEXT, 1),
                )?;
            }
            Ok(())
        }
    }
}

/// The principal GSSAPI uses when a socket names none: the host-based service
/// `zmqperf@localhost`, which Kerberos knows as `zmqperf/localhost@REALM`.
pub const GSSAPI_PRINCIPAL: &str = "zmqperf@localhost";

/// How libzmq is to read a principal's name ([`kerberos::is_krb5_principal`]).
///
/// [`kerberos::is_krb5_principal`]: crate::net::kerberos::is_krb5_principal
pub fn gssapi_name_type(name: &str) -> i32 {
    if crate::net::kerberos::is_krb5_principal(name) {
        zmq::ZMQ_GSSAPI_NT_KRB5_PRINCIPAL
    } else {
        zmq::ZMQ_GSSAPI_NT_HOSTBASED
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
                return Err(no_mechanism(Mechanism::Curve, zmq::Error::last()));
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

/// The error for a mechanism's set-up that failed: the library's lack of it (`zmq_has`), if
/// that is why, with the library to use.
pub fn no_mechanism(m: Mechanism, e: zmq::Error) -> Error {
    let lib = zmq::library();
    let (name, upper) = (m.name(), m.name().to_uppercase());
    if lib.has(name) {
        return crate::error::zmq_err(&format!("setting up {upper}"))(e);
    }
    let fix = match m {
        Mechanism::Curve => {
            "use a libzmq built with libsodium, such as zmqperf's own (--libzmq bundled)"
        }
        _ => "use --libzmq system (Debian's libzmq5 has it: `apt-get install libzmq5`) or a libzmq built with --with-libgssapi_krb5 (--libzmq PATH)",
    };
    Error::invalid(
        "security",
        name,
        format!(
            "the libzmq measured ({} {}, {}) was built without {upper} (zmq_has(\"{name}\") is false); {fix}",
            lib.source, lib.version, lib.path
        ),
    )
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
