//! `zmqperf k8s manifest`: the Kubernetes manifests of idle zmqperf pods and their hosts file.

use clap::{Args, Subcommand};
use std::path::PathBuf;
use zmqperf::error::Result;
use zmqperf::k8s::{Manifest, DEFAULT_BINARY};

/// `zmqperf k8s ...`.
#[derive(Subcommand)]
pub enum K8sCmd {
    /// Write a headless Service and a StatefulSet of idle zmqperf pods (at most one per node)
    /// and the hosts file of `kubectl exec -i` launchers into them. Creates nothing in a
    /// cluster: apply the manifests with kubectl.
    #[command(after_help = MANIFEST_EXAMPLES)]
    Manifest(ManifestArgs),
}

/// The flags of `zmqperf k8s manifest`.
#[derive(Args)]
pub struct ManifestArgs {
    /// Pods in the StatefulSet, each on its own node (pod anti-affinity): the cluster needs
    /// that many schedulable nodes.
    #[arg(long, default_value = "2", value_name = "N")]
    replicas: u32,
    /// The container image holding zmqperf at --binary (docs/kubernetes.md builds one).
    #[arg(long, default_value = concat!("zmqperf:", env!("CARGO_PKG_VERSION")), value_name = "IMG")]
    image: String,
    /// The Kubernetes namespace of the Service, the StatefulSet and the pods.
    #[arg(long, default_value = "default", value_name = "NS")]
    namespace: String,
    /// The name of the Service and the StatefulSet; the pods are NAME-0, NAME-1, ...
    #[arg(long, default_value = "zmqperf")]
    name: String,
    /// Where the image puts zmqperf.
    #[arg(long, default_value = DEFAULT_BINARY, value_name = "PATH")]
    binary: String,
    /// Write NAME.yaml and NAME-hosts.toml into DIR (made when missing) instead of printing
    /// the manifests on standard output.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
}

const MANIFEST_EXAMPLES: &str = "\
Examples:
  zmqperf k8s manifest --replicas 3 --image registry.example/zmqperf:0.1 -o k8s/
  kubectl apply -f k8s/zmqperf.yaml
  kubectl rollout status statefulset/zmqperf
  zmqperf run topology.toml --hosts k8s/zmqperf-hosts.toml
  kubectl delete -f k8s/zmqperf.yaml

  zmqperf k8s manifest --namespace bench | kubectl apply -f -

The pods run `zmqperf __idle` until deleted; the runner starts nodes in them with
`kubectl exec -i POD -- /zmqperf __node`. Each host's addr is its pod's DNS name,
NAME-N.NAME.NS.svc.cluster.local. docs/kubernetes.md has the image and the details.";

/// Runs `zmqperf k8s ...`.
pub fn run(cmd: &K8sCmd) -> Result<()> {
    match cmd {
        K8sCmd::Manifest(a) => manifest(a),
    }
}

fn manifest(a: &ManifestArgs) -> Result<()> {
    let m = Manifest::new(a.replicas, &a.image, &a.namespace, &a.name, &a.binary)?;
    match &a.output {
        Some(dir) => {
            for p in m.write(dir)? {
                println!("wrote {}", p.display());
            }
        }
        None => {
            print!("{}", m.yaml());
            zmqperf::errln!(
                "zmqperf: the hosts file for these pods: zmqperf k8s manifest ... -o DIR writes it beside the manifests"
            );
        }
    }
    Ok(())
}
