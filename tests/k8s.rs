//! `zmqperf k8s manifest` and `zmqperf __idle`: the manifests pass Kubernetes' own schemas
//! offline (kubernetes-validate --strict, from PyPI, in a venv under target/), the hosts file
//! is the TOML the runner reads, and the pods' idle process ends on SIGTERM and SIGINT.

mod common;

use common::{pip_venv, run, with_watchdog, zp, Proc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// kubernetes-validate, installed once into a venv under target/ (about 10 s to 2 min from
/// PyPI on a fresh machine); the test fails, with pip's words, when it cannot be installed.
fn kubernetes_validate() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = pip_venv("kubernetes-validate-venv", "kubernetes-validate")
            .join("bin/kubernetes-validate");
        assert!(bin.exists(), "pip installed no {}", bin.display());
        bin
    })
    .clone()
}

/// Runs kubernetes-validate --strict on `files` against Kubernetes `version`.
fn validate(version: &str, files: &[&Path]) -> common::Output {
    let mut c = Command::new(kubernetes_validate());
    c.args(["--strict", "-k", version]).args(files);
    run(c, 120)
}

/// `zmqperf k8s manifest ARGS -o DIR`.
fn manifest_into(dir: &Path, args: &[&str]) -> common::Output {
    let mut c = zp(&["k8s", "manifest"]);
    c.args(args).arg("-o").arg(dir);
    run(c, 30)
}

fn fresh_dir(name: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("k8s-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn manifests_pass_kubernetes_schemas_strictly_and_a_broken_one_does_not() {
    with_watchdog(900, || {
        let dir = fresh_dir("valid");
        let args = [
            "--replicas",
            "3",
            "--image",
            "registry.example/zmqperf:0.1.0",
            "--namespace",
            "bench",
            "--name",
            "zp",
        ];
        let o = manifest_into(&dir, &args);
        assert_eq!(o.code, Some(0), "{o:?}");
        let yaml = dir.join("zp.yaml");
        assert!(o.stdout.contains(&yaml.display().to_string()), "{o:?}");
        // The oldest Kubernetes still common and the newest the validator knows.
        for version in ["1.27.0", "1.37.0"] {
            let v = validate(version, &[&yaml]);
            assert_eq!(v.code, Some(0), "kubernetes {version}: {v:?}");
            for resource in ["service/zp ", "statefulset/zp "] {
                assert!(
                    v.stdout
                        .contains(&format!("passed for resource {resource}")),
                    "{v:?}"
                );
            }
        }
        // The validator is not a rubber stamp: an unknown field fails it.
        let text = std::fs::read_to_string(&yaml).unwrap();
        let broken = dir.join("broken.yaml");
        std::fs::write(
            &broken,
            text.replace("podManagementPolicy:", "podManagmentPolicy:"),
        )
        .unwrap();
        let v = validate("1.37.0", &[&broken]);
        assert_eq!(v.code, Some(1), "a misspelt field passed: {v:?}");
        assert!(
            v.stdout.contains("'podManagmentPolicy' was unexpected"),
            "{v:?}"
        );
        // Printed on stdout: the same manifests, ready for `kubectl apply -f -`.
        let mut c = zp(&["k8s", "manifest"]);
        c.args(args);
        let o = run(c, 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert_eq!(o.stdout, text);
        assert!(o.stderr.contains("-o DIR"), "{o:?}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// The manifests' essentials, read as YAML by Python (what kubectl would see).
#[test]
fn the_statefulset_spreads_idle_pods_over_nodes_behind_a_headless_service() {
    with_watchdog(900, || {
        let dir = fresh_dir("shape");
        let o = manifest_into(&dir, &["--replicas", "2"]);
        assert_eq!(o.code, Some(0), "{o:?}");
        // kubernetes-validate brings PyYAML into its venv.
        let python = kubernetes_validate().parent().unwrap().join("python");
        let script = r#"
import json, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
svc, sts = docs
pod = sts["spec"]["template"]["spec"]
print(json.dumps({
  "kinds": [d["kind"] for d in docs],
  "cluster_ip": svc["spec"]["clusterIP"],
  "service_name": sts["spec"]["serviceName"],
  "replicas": sts["spec"]["replicas"],
  "selector_matches": sts["spec"]["selector"]["matchLabels"] == sts["spec"]["template"]["metadata"]["labels"] == svc["spec"]["selector"],
  "anti": pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"],
  "anti_matches": pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchLabels"] == svc["spec"]["selector"],
  "command": pod["containers"][0]["command"],
  "image": pod["containers"][0]["image"],
  "namespace": [d["metadata"]["namespace"] for d in docs],
}))
"#;
        let mut c = Command::new(python);
        c.args(["-c", script]).arg(dir.join("zmqperf.yaml"));
        let o = run(c, 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(v["kinds"], serde_json::json!(["Service", "StatefulSet"]));
        assert_eq!(v["cluster_ip"], "None");
        assert_eq!(v["service_name"], "zmqperf");
        assert_eq!(v["replicas"], 2);
        assert_eq!(v["selector_matches"], true);
        assert_eq!(v["anti"], "kubernetes.io/hostname");
        assert_eq!(v["anti_matches"], true);
        assert_eq!(v["command"], serde_json::json!(["/zmqperf", "__idle"]));
        assert_eq!(v["image"], format!("zmqperf:{}", env!("CARGO_PKG_VERSION")));
        assert_eq!(v["namespace"], serde_json::json!(["default", "default"]));
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn the_hosts_file_names_a_kubectl_exec_launcher_and_dns_address_per_pod() {
    with_watchdog(60, || {
        let dir = fresh_dir("hosts");
        let args = [
            "--replicas",
            "3",
            "--namespace",
            "bench",
            "--name",
            "zp",
            "--binary",
            "/usr/local/bin/zmqperf",
        ];
        let o = manifest_into(&dir, &args);
        assert_eq!(o.code, Some(0), "{o:?}");
        let text = std::fs::read_to_string(dir.join("zp-hosts.toml")).unwrap();
        let t: toml::Table = text
            .parse()
            .unwrap_or_else(|e| panic!("not TOML: {e}\n{text}"));
        let hosts = t["hosts"].as_table().unwrap();
        assert_eq!(hosts.keys().collect::<Vec<_>>(), ["zp-0", "zp-1", "zp-2"]);
        for (i, (name, h)) in hosts.iter().enumerate() {
            let exec: Vec<&str> = h["exec"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(
                exec,
                ["kubectl", "exec", "-i", "-n", "bench", name.as_str(), "--"]
            );
            assert_eq!(
                h["addr"].as_str(),
                Some(format!("zp-{i}.zp.bench.svc.cluster.local").as_str())
            );
            assert_eq!(h["zmqperf"].as_str(), Some("/usr/local/bin/zmqperf"));
            assert_eq!(h.as_table().map(|t| t.len()), Some(3), "{h:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn bad_names_are_refused_naming_the_flag() {
    with_watchdog(60, || {
        common::fails_within(20, &["k8s", "manifest", "--name", "Zmq_Perf"], 3, "--name");
        common::fails_within(
            20,
            &["k8s", "manifest", "--namespace", "a.b"],
            3,
            "--namespace",
        );
        common::fails_within(20, &["k8s", "manifest", "--replicas", "0"], 3, "--replicas");
        common::fails_within(
            20,
            &["k8s", "manifest", "--binary", "zmqperf"],
            3,
            "--binary",
        );
        let o = run(zp(&["k8s", "manifest", "--help"]), 20);
        assert!(o.stdout.contains("kubectl apply -f"), "{o:?}");
    });
}

#[test]
fn idle_ends_on_sigterm_and_on_sigint_and_not_before() {
    with_watchdog(60, || {
        for sig in [libc::SIGTERM, libc::SIGINT] {
            let p = Proc::spawn(zp(&["__idle"]), 20);
            // The line comes once the signals are caught: no race with the kill below.
            p.wait_stderr("idle until SIGTERM");
            // Still there a while later: it idles, it does not just end.
            std::thread::sleep(std::time::Duration::from_millis(200));
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", p.pid())).unwrap();
            let state = stat.rsplit_once(") ").unwrap().1.split(' ').next().unwrap();
            assert!(state == "S" || state == "R", "__idle is in state {state}");
            // SAFETY: a signal to the child this test started, by its PID.
            assert_eq!(unsafe { libc::kill(p.pid() as i32, sig) }, 0);
            let o = p.finish();
            assert_eq!(o.code, Some(0), "signal {sig}: {o:?}");
        }
    });
}
