"""Everything the hook reads from the cluster, in one place, inside one deadline."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from upgrade_guard.cluster.client import Api, ClusterError, load_configuration
from upgrade_guard.cluster.state import read_written_state
from upgrade_guard.counters.live import WrittenState, live_state
from upgrade_guard.crd import Crd, Source
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import Document, LoadError
from upgrade_guard.policy import Policy


@dataclass(frozen=True)
class LiveCluster:
    server_version: tuple[int, int]
    crds: dict[str, Crd]  # the chart's CRDs the cluster has, by name
    written_state: list[WrittenState]
    requests: int


def read_live(
    names: Iterable[str],
    policy: Policy,
    *,
    kubeconfig: str | None,
    context: str | None,
    deadline: float,
) -> LiveCluster:
    """The server version, the named CRDs (absent ones left out) and the written state."""
    api = Api(load_configuration(kubeconfig, context), deadline)
    try:
        version = api.server_version()
        bodies = api.get_crds(names)
        documents = [
            Document(Source(f"cluster: customresourcedefinitions/{name}"), 0, body)
            for name, body in bodies.items()
            if body is not None
        ]
        try:
            crds = crds_from(documents, validate=False)
        except LoadError as error:
            raise ClusterError(f"cannot read a live CRD: {error}") from None
        written = live_state(crds, policy) + read_written_state(api, policy.stored_state, crds)
        return LiveCluster(version, crds, written, api.attempts)
    finally:
        api.close()
