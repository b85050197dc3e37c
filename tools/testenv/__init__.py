"""Real Kubernetes parts for upgrade-guard's cluster tests (issue 3).

Build the binaries once with ``tools/kube-testenv/build.sh`` (``tools/cluster.sh`` starts all
of it by hand); then:

* :class:`ControlPlane` starts etcd + kube-apiserver (RBAC, token users, SA tokens), whose
  calls to webhooks, aggregated APIs and kubelets reach loopback only (:mod:`.egress`);
* :class:`FakeKubelet` lets ``pods/log`` read what the Job runner recorded;
* :class:`JobRunner` runs hook Jobs' containers from their images under bwrap and writes
  their status; :mod:`.podspec` is what it runs, worked out from the Pod spec (pure);
* :class:`FaultProxy` relays to the apiserver and answers what a test tells it to itself
  (429, 5xx), :class:`TcpProxy` cuts or holds connections;
* :class:`CRDTrial` / :func:`evolve` record what the apiserver does with a CRD change.
"""

from .binaries import (
    BIN_ENV,
    BUILD_COMMAND,
    MINORS,
    NEWEST_MINOR,
    OLDEST_BUILD_COMMAND,
    OLDEST_MINOR,
    Binaries,
    find_binaries,
    find_oldest_binaries,
    kubernetes_version,
    minor_of,
)
from .cluster import Cluster, ToolRunner
from .controlplane import ADMIN_USER, RESTRICTED_USERS, ControlPlane, ServiceAccount, User
from .crds import Attempt, CRDTrial, Evolution, evolve, storage_version
from .faults import Fault, FaultProxy, Seen
from .jobrunner import JobHandle, JobOutcome, JobRun, JobRunner
from .kube import JSON, Kube, KubeError, api_path, create_when_served, objects_of, wait_for
from .kubelet import FakeKubelet
from .proxy import TcpProxy
from .sandbox import GUARD_IMAGE, HOST_IMAGE, Image, built_guard_image

__all__ = [
    "ADMIN_USER",
    "BIN_ENV",
    "BUILD_COMMAND",
    "GUARD_IMAGE",
    "HOST_IMAGE",
    "JSON",
    "MINORS",
    "NEWEST_MINOR",
    "OLDEST_BUILD_COMMAND",
    "OLDEST_MINOR",
    "RESTRICTED_USERS",
    "Attempt",
    "Binaries",
    "CRDTrial",
    "Cluster",
    "ControlPlane",
    "Evolution",
    "FakeKubelet",
    "Fault",
    "FaultProxy",
    "Image",
    "JobHandle",
    "JobOutcome",
    "JobRun",
    "JobRunner",
    "Kube",
    "KubeError",
    "Seen",
    "ServiceAccount",
    "TcpProxy",
    "ToolRunner",
    "User",
    "api_path",
    "built_guard_image",
    "create_when_served",
    "evolve",
    "find_binaries",
    "find_oldest_binaries",
    "kubernetes_version",
    "minor_of",
    "objects_of",
    "storage_version",
    "wait_for",
]
