//! Kubernetes: the manifests of a set of idle zmqperf pods (a headless Service and a
//! StatefulSet whose pods avoid each other's nodes) and the hosts file of `kubectl exec -i`
//! launchers into them; and `idle`, the pods' main process. zmqperf creates no cluster and
//! talks to none: the user applies the manifests, the runner reaches the pods through kubectl.

use crate::error::{Error, Result};

/// Where the image puts the binary unless told otherwise: a `FROM scratch` image of the
/// stripped binary and its shared libraries (docs/kubernetes.md builds one).
pub const DEFAULT_BINARY: &str = "/zmqperf";
/// The container's name in every pod (and `kubectl exec`'s default container).
pub const CONTAINER: &str = "zmqperf";

/// What `zmqperf k8s manifest` writes, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Pods, at most one per node (pod anti-affinity on the node name).
    pub replicas: u32,
    /// The container image that holds zmqperf at `binary`.
    pub image: String,
    /// The Kubernetes namespace of the Service, the StatefulSet and their pods.
    pub namespace: String,
    /// The name of the Service and the StatefulSet; pods are NAME-0, NAME-1, ...
    pub name: String,
    /// The path of zmqperf inside the image.
    pub binary: String,
}

/// A Kubernetes name that must be a DNS label (RFC 1123): lowercase letters, digits and
/// '-', starting with a letter (RFC 1035, as Service names must), ending with a letter or
/// digit, at most `max` characters.
fn check_label(flag: &str, value: &str, max: usize) -> Result<()> {
    let bytes = value.as_bytes();
    let ok_chars = bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-');
    let ok = !value.is_empty()
        && value.len() <= max
        && ok_chars
        && bytes[0].is_ascii_lowercase()
        && !value.ends_with('-');
    if ok {
        return Ok(());
    }
    Err(Error::invalid(
        flag,
        value,
        format!(
            "a Kubernetes name is 1 to {max} lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (e.g. zmqperf)"
        ),
    ))
}

impl Manifest {
    /// Checks every field: names that Kubernetes accepts (a StatefulSet name of at most 52
    /// characters, pod names NAME-N within 63), at least one replica, an image and an
    /// absolute binary path.
    pub fn new(
        replicas: u32,
        image: &str,
        namespace: &str,
        name: &str,
        binary: &str,
    ) -> Result<Manifest> {
        if replicas == 0 {
            return Err(Error::invalid(
                "--replicas",
                "0",
                "at least 1 pod (one per node that takes part, e.g. --replicas 2)",
            ));
        }
        // The StatefulSet controller labels each revision NAME-HASH (11 characters more than
        // NAME) within 63, hence 52 at most; pod names NAME-ORDINAL (a u32) then fit too.
        check_label("--name", name, 52)?;
        check_label("--namespace", namespace, 63)?;
        if image.is_empty() || image.chars().any(|c| c.is_whitespace() || c == '"') {
            return Err(Error::invalid(
                "--image",
                image,
                "an image reference without spaces or quotes, e.g. registry.example/zmqperf:0.1.0",
            ));
        }
        if !binary.starts_with('/') || binary.chars().any(|c| c.is_whitespace() || c == '"') {
            return Err(Error::invalid(
                "--binary",
                binary,
                "the absolute path of zmqperf inside the image, e.g. /zmqperf",
            ));
        }
        Ok(Manifest {
            replicas,
            image: image.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            binary: binary.to_string(),
        })
    }

    /// The name of pod `i`.
    pub fn pod(&self, i: u32) -> String {
        format!("{}-{i}", self.name)
    }

    /// The stable DNS name of pod `i` through the headless Service (cluster.local domain).
    pub fn pod_dns(&self, i: u32) -> String {
        format!(
            "{}.{}.{}.svc.cluster.local",
            self.pod(i),
            self.name,
            self.namespace
        )
    }

    /// The labels that tie the pods to the Service and the StatefulSet, indented by `pad`.
    fn labels(&self, pad: &str) -> String {
        format!(
            "{pad}app.kubernetes.io/name: zmqperf\n{pad}app.kubernetes.io/instance: {}\n",
            self.name
        )
    }

    /// The headless Service (it gives each pod its DNS name) and the StatefulSet, as one YAML
    /// stream for `kubectl apply -f`.
    pub fn yaml(&self) -> String {
        let Manifest {
            replicas,
            image,
            namespace,
            name,
            binary,
        } = self;
        let version = crate::VERSION;
        format!(
            "\
# zmqperf {version} on Kubernetes (zmqperf k8s manifest): {replicas} idle zmqperf pods, at most one
# per node, that the runner enters with `kubectl exec -i` (the hosts file beside this one).
# Apply with `kubectl apply -f`; remove with `kubectl delete -f`. docs/kubernetes.md.
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {namespace}
  labels:
{svc_labels}spec:
  # Headless: no virtual IP; each pod gets NAME-N.{name}.{namespace}.svc.cluster.local.
  clusterIP: None
  publishNotReadyAddresses: true
  selector:
{svc_labels}---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
  namespace: {namespace}
  labels:
{svc_labels}spec:
  serviceName: {name}
  replicas: {replicas}
  podManagementPolicy: Parallel
  selector:
    matchLabels:
{sel_labels}  template:
    metadata:
      labels:
{pod_labels}      annotations:
        kubectl.kubernetes.io/default-container: {CONTAINER}
    spec:
      # The measured sockets bind in the pod; one zmqperf pod per node keeps hosts apart.
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchLabels:
{anti_labels}              topologyKey: kubernetes.io/hostname
      terminationGracePeriodSeconds: 5
      enableServiceLinks: false
      containers:
        - name: {CONTAINER}
          image: {image}
          imagePullPolicy: IfNotPresent
          # Idles (and reaps orphans) until SIGTERM; the runner execs `{binary} __node` here.
          command: [\"{binary}\", \"__idle\"]
",
            svc_labels = self.labels("    "),
            sel_labels = self.labels("      "),
            pod_labels = self.labels("        "),
            anti_labels = self.labels("                  "),
        )
    }

    /// The hosts file (`zmqperf run --hosts FILE`): one host per pod, named like it, entered
    /// with `kubectl exec -i`, reached at its stable DNS name.
    pub fn hosts_toml(&self) -> String {
        let mut t = format!(
            "\
# zmqperf hosts file for the pods of StatefulSet {name} in namespace {ns} (zmqperf k8s manifest).
# Each host is entered with `kubectl exec -i` (kubectl's current context must reach the cluster)
# and reached on the data plane at its pod's DNS name through the headless Service {name}.
# zmqperf is {binary} in image {image}.
",
            name = self.name,
            ns = self.namespace,
            binary = self.binary,
            image = self.image
        );
        for i in 0..self.replicas {
            let pod = self.pod(i);
            t.push_str(&format!(
                "\n[hosts.{pod}]\nexec = [\"kubectl\", \"exec\", \"-i\", \"-n\", \"{ns}\", \"{pod}\", \"--\"]\naddr = \"{addr}\"\nzmqperf = \"{binary}\"\n",
                ns = self.namespace,
                addr = self.pod_dns(i),
                binary = self.binary,
            ));
        }
        t
    }

    /// The files `-o DIR` writes: NAME.yaml (the manifests) and NAME-hosts.toml.
    pub fn files(&self) -> [(String, String); 2] {
        [
            (format!("{}.yaml", self.name), self.yaml()),
            (format!("{}-hosts.toml", self.name), self.hosts_toml()),
        ]
    }

    /// Writes [`Manifest::files`] into `dir` (made when missing) and returns their paths.
    pub fn write(&self, dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            op: format!("creating folder {}", dir.display()),
            source: e,
        })?;
        let mut paths = Vec::new();
        for (file, text) in self.files() {
            let p = dir.join(file);
            // Whole or not at all, and never over the history (a link of that name).
            crate::report::file::write_output(
                "-o",
                &p.to_string_lossy(),
                text.as_bytes(),
                Some(&crate::store::default_db_path()),
            )?;
            paths.push(p);
        }
        Ok(paths)
    }
}

/// The main process of a zmqperf pod: does nothing until SIGTERM or SIGINT (returns 0 then),
/// reaping any child that ends meanwhile (as a container's PID 1 it adopts the orphans of
/// exec'd processes). `ready` is called once the signals are caught, before the wait.
pub fn idle(ready: impl FnOnce()) -> i32 {
    // SAFETY: plain libc calls on a signal set owned here; the signals are blocked in this
    // thread (the only one that matters: __idle starts none) and taken with sigwait, so no
    // handler runs asynchronously.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGCHLD] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return 1;
        }
        ready();
        loop {
            let mut sig: libc::c_int = 0;
            if libc::sigwait(&set, &mut sig) != 0 {
                return 1;
            }
            if sig != libc::SIGCHLD {
                return 0;
            }
            let mut status = 0;
            while libc::waitpid(-1, &mut status, libc::WNOHANG) > 0 {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Manifest {
        Manifest::new(3, "zmqperf:0.1.0", "bench", "zp", DEFAULT_BINARY).unwrap()
    }

    #[test]
    fn pods_are_named_and_reached_by_the_headless_service() {
        let m = m();
        assert_eq!(m.pod(2), "zp-2");
        assert_eq!(m.pod_dns(0), "zp-0.zp.bench.svc.cluster.local");
        let h = m.hosts_toml();
        assert!(h.contains(
            "[hosts.zp-1]\nexec = [\"kubectl\", \"exec\", \"-i\", \"-n\", \"bench\", \"zp-1\", \"--\"]\naddr = \"zp-1.zp.bench.svc.cluster.local\"\nzmqperf = \"/zmqperf\"\n"
        ), "{h}");
        assert!(!h.contains("zp-3"), "{h}");
        let y = m.yaml();
        assert!(y.contains("replicas: 3\n"), "{y}");
        assert!(y.contains("command: [\"/zmqperf\", \"__idle\"]"), "{y}");
        assert!(y.contains("clusterIP: None"), "{y}");
        assert!(y.contains("topologyKey: kubernetes.io/hostname"), "{y}");
    }

    #[test]
    fn names_kubernetes_would_refuse_are_refused_naming_the_flag() {
        let bad = [
            (1, "img", "ns", "Zp", "/zmqperf", "--name"),
            (1, "img", "ns", "1zp", "/zmqperf", "--name"),
            (1, "img", "ns", "zp-", "/zmqperf", "--name"),
            (1, "img", "ns", "z_p", "/zmqperf", "--name"),
            (1, "img", "n.s", "zp", "/zmqperf", "--namespace"),
            (1, "img", "", "zp", "/zmqperf", "--namespace"),
            (0, "img", "ns", "zp", "/zmqperf", "--replicas"),
            (1, "", "ns", "zp", "/zmqperf", "--image"),
            (1, "a b", "ns", "zp", "/zmqperf", "--image"),
            (1, "img", "ns", "zp", "zmqperf", "--binary"),
        ];
        for (r, img, ns, name, bin, flag) in bad {
            let e = Manifest::new(r, img, ns, name, bin)
                .unwrap_err()
                .to_string();
            assert!(e.contains(flag), "{name} {ns}: {e}");
        }
        // A StatefulSet name has 52 characters at most; NAME-ORDINAL, a pod's host name, 63.
        assert!(Manifest::new(1, "i", "ns", &"z".repeat(53), "/z").is_err());
        let m = Manifest::new(u32::MAX, "i", "ns", &"z".repeat(52), "/z").unwrap();
        assert_eq!(m.pod(u32::MAX - 1).len(), 63);
    }
}
