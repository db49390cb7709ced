//! GSSAPI measured like CURVE, in a Kerberos realm the test makes and removes: a KDC of its
//! own (MIT's krb5kdc, on a loopback port, with its database, keytabs and ticket cache in
//! a temp folder), the service principal zmqperf/localhost and a client. On Debian's libzmq
//! (`--libzmq system`, built with GSSAPI): a run beside NULL with the cost table, a topology
//! with plaintext GSSAPI, and each missing credential named before any handshake. The
//! bundled libzmq, which has no GSSAPI, is refused with the library to use.
//!
//! The Kerberos programs missing is a failure, never a skip: .ci/run installs them
//! (krb5-kdc, krb5-admin-server, krb5-user).

mod common;

use common::{installed, run, with_watchdog, zp, Output};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a test may take.
const T: u64 = 300;
const REALM: &str = "ZMQPERF.TEST";
const KRB5: &str = "apt-get install krb5-kdc krb5-admin-server krb5-user";

/// A realm with its KDC running; the KDC is killed (by its PID) and the folder removed when
/// it is dropped, also when the test fails.
struct Realm {
    dir: PathBuf,
    kdc: Child,
}

impl Drop for Realm {
    fn drop(&mut self) {
        let _ = self.kdc.kill();
        let _ = self.kdc.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a Kerberos admin program to its end within 60 s; a missing program fails loudly.
fn admin(dir: &Path, program: &str, args: &[&str]) {
    let mut c = Command::new(installed(program, KRB5));
    c.args(args)
        .env("KRB5_CONFIG", dir.join("krb5.conf"))
        .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"));
    let o = run(c, 60);
    assert_eq!(o.code, Some(0), "{program} {args:?}: {o:?}");
}

impl Realm {
    /// Makes the realm and starts its KDC on a free loopback port (three tries, in case
    /// another process takes the port first).
    fn up(name: &str) -> Realm {
        let dir = std::env::temp_dir().join(format!("zmqperf-krb-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let d = dir.display();
            std::fs::write(
                dir.join("krb5.conf"),
                format!(
                    "[libdefaults]\n  default_realm = {REALM}\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n  dns_canonicalize_hostname = false\n  rdns = false\n[realms]\n  {REALM} = {{\n    kdc = 127.0.0.1:{port}\n  }}\n"
                ),
            )
            .unwrap();
            std::fs::write(
                dir.join("kdc.conf"),
                format!(
                    "[kdcdefaults]\n  kdc_listen = 127.0.0.1:{port}\n  kdc_tcp_listen = 127.0.0.1:{port}\n[realms]\n  {REALM} = {{\n    database_name = {d}/principal\n    key_stash_file = {d}/stash\n    acl_file = {d}/kadm5.acl\n  }}\n[logging]\n  kdc = FILE:{d}/kdc.log\n"
                ),
            )
            .unwrap();
            if !dir.join("principal").exists() {
                admin(
                    &dir,
                    "kdb5_util",
                    &["create", "-s", "-r", REALM, "-P", "pw"],
                );
                for q in [
                    "addprinc -randkey zmqperf/localhost".to_string(),
                    "addprinc -randkey client".to_string(),
                    format!("ktadd -k {d}/server.keytab zmqperf/localhost"),
                    format!("ktadd -k {d}/client.keytab client"),
                ] {
                    admin(&dir, "kadmin.local", &["-q", &q]);
                }
            }
            let kdc = Command::new(installed("krb5kdc", KRB5))
                .arg("-n")
                .env("KRB5_CONFIG", dir.join("krb5.conf"))
                .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start krb5kdc");
            let mut realm = Realm {
                dir: dir.clone(),
                kdc,
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && realm.kdc.try_wait().unwrap().is_none() {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    let mut kinit = Command::new(installed("kinit", KRB5));
                    kinit.args(["-k", "-t"]).arg(dir.join("client.keytab"));
                    kinit.arg("client");
                    realm.env(&mut kinit);
                    let o = run(kinit, 60);
                    assert_eq!(o.code, Some(0), "kinit: {o:?}");
                    return realm;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // The KDC could not listen there: forget it and try another port.
            let _ = realm.kdc.kill();
            let _ = realm.kdc.wait();
            std::mem::forget(realm);
        }
        let _ = std::fs::remove_dir_all(&dir);
        panic!("the test's KDC did not listen on a loopback port in three tries");
    }

    /// Sets a command's Kerberos environment: this realm, the server's keytab, the
    /// client's ticket cache.
    fn env<'a>(&self, c: &'a mut Command) -> &'a mut Command {
        c.env("KRB5_CONFIG", self.dir.join("krb5.conf"))
            .env(
                "KRB5_KTNAME",
                format!("FILE:{}", self.dir.join("server.keytab").display()),
            )
            .env(
                "KRB5CCNAME",
                format!("FILE:{}", self.dir.join("ccache").display()),
            )
    }

    /// A zmqperf command on Debian's libzmq in this realm.
    fn zp(&self, args: &[&str]) -> Command {
        let mut c = zp(&["--libzmq", "system"]);
        c.args(args);
        self.env(&mut c);
        c
    }
}

fn check_refused(o: &Output, words: &[&str]) {
    assert_eq!(o.code, Some(3), "{o:?}");
    for w in words {
        assert!(o.stderr.contains(w), "no {w:?} in {}", o.stderr);
    }
}

/// GSSAPI beside NULL in one run, with the cost table; then plaintext GSSAPI from a
/// topology file, every message delivered.
#[test]
fn gssapi_beside_null_in_one_run_and_from_a_topology() {
    with_watchdog(T, || {
        let realm = Realm::up("run");
        let o = run(
            realm.zp(&[
                "run",
                "--security",
                "null,gssapi",
                "--patterns",
                "pushpull,reqrep",
                "--transports",
                "tcp",
                "--sizes",
                "1KiB",
                "--count",
                "2000",
                "--repetitions",
                "2",
                "--no-floor",
                "--no-history",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        for id in [
            "throughput/pushpull[gssapi]/tcp/1024",
            "latency/reqrep[gssapi]/tcp/1024",
            "Security cost",
            "GSSAPI",
        ] {
            assert!(o.stdout.contains(id), "no {id} in {}", o.stdout);
        }
        // The KDC issued the client a ticket to the service: GSSAPI really ran.
        let log = std::fs::read_to_string(realm.dir.join("kdc.log")).unwrap();
        assert!(
            log.contains(&format!("client@{REALM} for zmqperf/localhost@{REALM}")),
            "{log}"
        );

        let opts = "security = \"gssapi\", gssapi_plaintext = true";
        let topo = realm.dir.join("plaintext.toml");
        std::fs::write(
            &topo,
            format!(
                "name = \"gssapi-plaintext\"\n\n[[node]]\nname = \"sink\"\nrole = \"sink\"\nsocket = {{ type = \"PULL\", bind = [\"auto\"], {opts} }}\n\n[[node]]\nname = \"source\"\nrole = \"source\"\nsocket = {{ type = \"PUSH\", connect = [\"sink\"], {opts}, gssapi_principal = \"zmqperf/localhost@{REALM}\" }}\n"
            ),
        )
        .unwrap();
        let o = run(
            realm.zp(&[
                "run",
                topo.to_str().unwrap(),
                "--transports",
                "tcp",
                "--count",
                "20000",
                "--repetitions",
                "1",
                "--format",
                "json",
                "--no-history",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = common::results(&o.stdout);
        assert_eq!(v["cases"][0]["summary"]["lost"], 0, "{}", o.stdout);
        assert_eq!(v["cases"][0]["edges"][0]["messages"], 20000, "{}", o.stdout);
        assert!(v["cases"][0]["error"].is_null(), "{}", o.stdout);
    });
}

/// Each missing credential is refused before any handshake, in Kerberos's words with the
/// fix: a client without a ticket, a server without a keytab, a service the realm lacks.
#[test]
fn each_missing_credential_is_named_before_the_handshake() {
    with_watchdog(T, || {
        let realm = Realm::up("missing");
        let ep = common::free_tcp_endpoint();
        let mut c = realm.zp(&["remote_lat", &ep, "64", "100", "--security", "gssapi"]);
        c.env(
            "KRB5CCNAME",
            format!("FILE:{}", realm.dir.join("none").display()),
        );
        check_refused(
            &run(c, 60),
            &[
                "cannot get a Kerberos ticket to the service zmqperf@localhost",
                "No Kerberos credentials available",
                "kinit",
            ],
        );
        let mut c = realm.zp(&["local_lat", &ep, "64", "100", "--security", "gssapi"]);
        c.env(
            "KRB5_KTNAME",
            format!("FILE:{}", realm.dir.join("none.keytab").display()),
        );
        check_refused(
            &run(c, 60),
            &["has no Kerberos key", "nonexistent or empty", "KRB5_KTNAME"],
        );
        let c = realm.zp(&[
            "remote_lat",
            &ep,
            "64",
            "100",
            "--security",
            "gssapi",
            "--gssapi-principal",
            "nobody/localhost",
        ]);
        check_refused(
            &run(c, 60),
            &[&format!(
                "nobody/localhost@{REALM} not found in Kerberos database"
            )],
        );
    });
}

/// The bundled libzmq has no GSSAPI: refused with the library to use, and a GSSAPI field
/// without `security = "gssapi"` is refused naming node and field.
#[test]
fn the_bundled_library_and_stray_fields_are_refused() {
    with_watchdog(T, || {
        let ep = common::free_tcp_endpoint();
        let o = run(
            zp(&["local_lat", &ep, "64", "100", "--security", "gssapi"]),
            60,
        );
        check_refused(&o, &["zmq_has(\"gssapi\") is false", "--libzmq system"]);
        let topo = std::env::temp_dir().join(format!("zmqperf-gss-{}.toml", std::process::id()));
        std::fs::write(
            &topo,
            "name = \"stray\"\n\n[[node]]\nname = \"sink\"\nrole = \"sink\"\nsocket = { type = \"PULL\", bind = [\"auto\"], gssapi_plaintext = true }\n\n[[node]]\nname = \"source\"\nrole = \"source\"\nsocket = { type = \"PUSH\", connect = [\"sink\"] }\n",
        )
        .unwrap();
        let o = run(zp(&["topology", "check", topo.to_str().unwrap()]), 60);
        let _ = std::fs::remove_file(&topo);
        check_refused(
            &o,
            &[
                "node 'sink'",
                "socket.gssapi_plaintext",
                "used only with `security = \"gssapi\"`",
            ],
        );
    });
}
