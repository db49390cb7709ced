//! The security options of a socket: the mechanism (NULL, PLAIN, CURVE, GSSAPI) and CURVE's keys,
//! generated for a run (by libzmq, in `net/security.rs`) or given in a topology file,
//! and how secret keys are kept out of what is stored and shown.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

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
    /// Kerberos through GSSAPI (a libzmq built with it, such as Debian's, and a realm).
    Gssapi,
}

impl Mechanism {
    /// Its name as written in options and case labels: `null`, `plain`, `curve`, `gssapi`.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Null => "null",
            Mechanism::Plain => "plain",
            Mechanism::Curve => "curve",
            Mechanism::Gssapi => "gssapi",
        }
    }

    /// Parses `null`, `plain`, `curve` or `gssapi` (any case).
    pub fn parse(what: &str, s: &str) -> Result<Mechanism> {
        match s.to_ascii_lowercase().as_str() {
            "null" | "none" => Ok(Mechanism::Null),
            "plain" => Ok(Mechanism::Plain),
            "curve" => Ok(Mechanism::Curve),
            "gssapi" | "kerberos" => Ok(Mechanism::Gssapi),
            _ => Err(Error::invalid(
                what,
                s,
                "expected null, plain, curve or gssapi (ZeroMQ's security mechanisms)",
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
                // A secret key is never echoed, even a wrong one: say what is wrong with it.
                let (shown, why) = if name.ends_with("_secret") {
                    let n = k.chars().count();
                    let bad = k.chars().filter(|c| !Z85.contains(*c)).count();
                    (
                        REDACTED.to_string(),
                        format!(
                            "a CURVE key is 40 characters of Z85 (as zmq_curve_keypair prints them); this one (not shown: it is secret) has {n} characters, {bad} of them not Z85"
                        ),
                    )
                } else {
                    (
                        k.clone(),
                        "a CURVE key is 40 characters of Z85 (as zmq_curve_keypair prints them)"
                            .to_string(),
                    )
                };
                return Err(Error::invalid(&format!("{what}.{name}"), &shown, why));
            }
        }
        Ok(())
    }
}

/// What a secret value is replaced with wherever text is kept or shown.
pub const REDACTED: &str = "<redacted>";

/// `text` (a topology or workload file, TOML or JSON) with the value of every key whose
/// name ends in `_secret` replaced by [`REDACTED`]: `server_secret = "..."`,
/// `"client_secret": "..."`, `x_secret = '...'`. What is stored in the history or printed
/// in a report goes through this; the keys themselves are used from the parsed file.
pub fn redact_secrets(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find("_secret").map(|i| i + from) {
        let mut i = at + "_secret".len();
        from = i;
        // The key's name must end there (not `_secrets`, not `_secret_x`).
        if b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
        {
            continue;
        }
        // Optional closing quote of a JSON or quoted TOML key, spaces, `=` or `:`, spaces.
        if matches!(b.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if !matches!(b.get(i), Some(b'=' | b':')) {
            continue;
        }
        i += 1;
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let Some(&quote @ (b'"' | b'\'')) = b.get(i) else {
            continue;
        };
        // The value runs to the next unescaped quote of the same kind on the line.
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j] != quote && b[j] != b'\n' {
            j += if b[j] == b'\\' && quote == b'"' { 2 } else { 1 };
        }
        let end = j.min(b.len());
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
        from = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether a JSON value holds a non-empty value under a key ending in `_secret`.
pub fn holds_secrets(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => m.iter().any(|(k, v)| {
            (k.ends_with("_secret") && v.as_str().is_some_and(|s| !s.is_empty() && s != REDACTED))
                || holds_secrets(v)
        }),
        serde_json::Value::Array(a) => a.iter().any(holds_secrets),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_in_toml_and_json_and_nothing_else_changes() {
        let k = CurveKeys::libzmq_perf_tools();
        let toml_text = format!(
            "[sockets.a]\nsecurity = \"curve\"\ncurve_keys = {{ server_public = {:?}, server_secret = {:?}, client_public = {:?}, client_secret = '{}' }}\nmy_secret=\"x\\\"y\"\nnot_secrets = \"keep\"\n",
            k.server_public, k.server_secret, k.client_public, k.client_secret
        );
        let json_text =
            serde_json::to_string_pretty(&serde_json::json!({ "keys": k, "n_secret": 3 })).unwrap();
        for text in [toml_text, json_text] {
            let r = redact_secrets(&text);
            for secret in [&k.server_secret, &k.client_secret] {
                assert!(!r.contains(secret.as_str()), "{r}");
            }
            assert!(!r.contains("x\\\"y"), "{r}");
            assert!(
                r.contains(&k.server_public) && r.contains(&k.client_public),
                "{r}"
            );
            assert!(r.matches(REDACTED).count() >= 2, "{r}");
        }
        let r = redact_secrets("not_secrets = \"keep\"\nn_secret = 3\n");
        assert_eq!(r, "not_secrets = \"keep\"\nn_secret = 3\n");
        let v = serde_json::to_value(&k).unwrap();
        assert!(holds_secrets(&serde_json::json!({ "a": [v] })));
        assert!(!holds_secrets(&serde_json::json!({ "server_public": "k" })));
    }

    #[test]
    fn a_bad_secret_is_not_echoed() {
        let mut k = CurveKeys::libzmq_perf_tools();
        k.server_secret.replace_range(0..1, "~");
        let e = k.check("node a").unwrap_err().to_string();
        assert!(!e.contains(&k.server_secret[1..]), "{e}");
        assert!(
            e.contains("node a.server_secret") && e.contains("1 of them not Z85"),
            "{e}"
        );
    }

    #[test]
    fn names_parse_back() {
        for m in [
            Mechanism::Null,
            Mechanism::Plain,
            Mechanism::Curve,
            Mechanism::Gssapi,
        ] {
            assert_eq!(Mechanism::parse("x", m.name()).unwrap(), m);
        }
        let e = Mechanism::parse("--security", "tls")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--security") && e.contains("gssapi"), "{e}");
    }
}
