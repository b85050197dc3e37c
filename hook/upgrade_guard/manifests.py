"""The objects of a rendered chart besides its CRDs that carry a contract, as plain data: the
operator's ClusterRoles and Roles (the permissions a GitOps repository may pin) and its
Validating- and MutatingWebhookConfigurations (which may carry the chart's counters).

Permissions are matched as the apiserver's RBAC authorizer matches a request against a rule
(``pkg/apis/rbac/v1/evaluation_helpers.go``): ``*`` in verbs, apiGroups or resources matches
anything, ``*/SUB`` any resource's subresource SUB, no resourceNames any name, and a
nonResourceURL ending in ``*`` any URL with that prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from upgrade_guard.crd import Source, annotations_in

RBAC_GROUP = "rbac.authorization.k8s.io"
ADMISSION_GROUP = "admissionregistration.k8s.io"
ROLE_KINDS = ("ClusterRole", "Role")
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
ADMISSION_POLICY = "ValidatingAdmissionPolicy"
# The resource (plural) of each kind, as RBAC rules and the apiserver's paths name it.
RESOURCES = {
    "ClusterRole": "clusterroles",
    "Role": "roles",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
}
ALL_NAMES = None  # a rule without resourceNames: every object


@dataclass(frozen=True)
class Permission:
    """One thing a rule allows: a verb on a resource (``resource`` may be ``RES/SUB``) of an
    API group, of one name or all (``name`` None), or a verb on a non-resource URL."""

    verb: str
    group: str = ""
    resource: str = ""
    name: str | None = ALL_NAMES
    url: str = ""

    def __str__(self) -> str:
        if self.url:
            return f"{self.verb} {self.url}"
        resource, slash, subresource = self.resource.partition("/")
        where = f"{resource}.{self.group}" if self.group else resource
        where += slash + subresource  # as kubectl writes it: RESOURCE.GROUP/SUBRESOURCE
        named = f" {self.name!r}" if self.name is not None else ""
        return f"{self.verb} {where}{named}"


@dataclass(frozen=True)
class PolicyRule:
    """One entry of a role's ``rules``."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def permissions(self) -> Iterable[Permission]:
        names: tuple[str | None, ...] = self.resource_names or (ALL_NAMES,)
        for verb in self.verbs:
            for url in self.non_resource_urls:
                yield Permission(verb, url=url)
            for group in self.api_groups:
                for resource in self.resources:
                    for name in names:
                        yield Permission(verb, group, resource, name)

    def allows(self, wanted: Permission) -> bool:
        """Whether a request for exactly ``wanted`` (its ``*`` taken literally, so only a
        ``*`` allows a ``*``) passes this rule, as the authorizer decides."""
        if not _matches(self.verbs, wanted.verb):
            return False
        if wanted.url:
            return any(
                url == "*"
                or url == wanted.url
                or (url.endswith("*") and wanted.url.startswith(url.rstrip("*")))
                for url in self.non_resource_urls
            )
        if not _matches(self.api_groups, wanted.group):
            return False
        if not any(_resource_matches(r, wanted.resource) for r in self.resources):
            return False
        if not self.resource_names:
            return True
        return wanted.name is not None and wanted.name in self.resource_names


def _matches(values: tuple[str, ...], wanted: str) -> bool:
    return "*" in values or wanted in values


def _resource_matches(rule_resource: str, wanted: str) -> bool:
    if rule_resource in ("*", wanted):
        return True
    _, _, subresource = wanted.partition("/")
    return bool(subresource) and rule_resource == "*/" + subresource


@dataclass(frozen=True)
class Role:
    """A ClusterRole or Role: its rules, and whether an aggregationRule fills them in (the
    controller-manager then owns them, so they are not the chart's to compare)."""

    kind: str
    name: str
    namespace: str
    rules: tuple[PolicyRule, ...]
    aggregated: bool
    source: Source

    @property
    def key(self) -> str:
        """How reports name it: ``ClusterRole NAME``, ``Role NAMESPACE/NAME``."""
        if self.namespace:
            return f"{self.kind} {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"

    def allows(self, wanted: Permission) -> bool:
        return any(rule.allows(wanted) for rule in self.rules)

    def permissions(self) -> list[Permission]:
        """Every permission its rules name, each once, in rule order."""
        return list(dict.fromkeys(p for rule in self.rules for p in rule.permissions()))


def removed_permissions(old: Role, new: Role) -> list[Permission]:
    """The permissions old grants that new no longer does (additions are not looked at)."""
    return [wanted for wanted in old.permissions() if not new.allows(wanted)]


@dataclass(frozen=True)
class WebhookConfiguration:
    """A Validating- or MutatingWebhookConfiguration: only its metadata matters here (the
    counters it carries as annotations)."""

    kind: str
    raw: Mapping[str, Any]
    source: Source

    @property
    def name(self) -> str:
        return str(self.raw["metadata"]["name"])

    @property
    def key(self) -> str:
        return f"{self.kind} {self.name}"

    @property
    def annotations(self) -> Mapping[str, Any]:
        return annotations_in(self.raw)


@dataclass(frozen=True)
class Manifests:
    """The roles and webhook configurations of a rendered chart, each by its ``key``, and
    whether it applies the library's admission policy (a ValidatingAdmissionPolicy labelled
    ``app.kubernetes.io/name: upgrade-guard``), which holds the listed CRDs' counters in the
    apiserver, accepted by the hook or not."""

    roles: Mapping[str, Role] = field(default_factory=dict)
    webhooks: Mapping[str, WebhookConfiguration] = field(default_factory=dict)
    admission_policy: bool = False
