"""Documents to CRDs: keep apiextensions.k8s.io/v1 CRDs, refuse those the apiserver refuses."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from upgrade_guard.apiserver import crd_validation, minors
from upgrade_guard.crd import Crd, CrdHead, Source
from upgrade_guard.load.documents import Document, LoadError

API_VERSION = "apiextensions.k8s.io/v1"


def is_crd(body: Any) -> bool:
    return (
        isinstance(body, Mapping)
        and body.get("kind") == "CustomResourceDefinition"
        and str(body.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
    )


def _where(source: Source, name: str | None = None) -> str:
    return f"{source}: CRD {name}" if name else str(source)


def _check_crd(
    body: Mapping[str, Any],
    source: Source,
    validate: bool,
    beside: Mapping[str, Crd] | None,
    passed: crd_validation.Passed,
    normalize: bool,
    stored: bool = False,
) -> Crd:
    if body.get("apiVersion") != API_VERSION:
        raise LoadError(
            f"{source}: {body.get('apiVersion')} CustomResourceDefinitions are not"
            f" supported (served until Kubernetes 1.22); convert to {API_VERSION}"
        )
    metadata = body.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        raise LoadError(f"{source}: CustomResourceDefinition without metadata.name")
    name = str(metadata["name"])
    if validate:
        try:
            checked = (beside or {}).get(name)
            crd_validation.check(body, None if checked is None else checked.raw, passed, stored)
        except crd_validation.CrdInvalid as invalid:
            version = f" version {invalid.version}" if invalid.version is not None else ""
            raise LoadError(
                f"{_where(source, name)}{version}: the apiserver refuses this CRD:"
                f" {invalid.where}: {invalid.problem}"
            ) from None
    if normalize:
        from upgrade_guard.counters import digest  # (the hook's and history's; decimal with it)

        if validate:
            crd_validation.forget(body, passed)
        body = {**body, "spec": digest.normalized_spec(body["spec"])}
    return Crd(body, source)


def crds_from(
    documents: Iterable[Document],
    *,
    validate: bool = True,
    beside: Mapping[str, Crd] | None = None,
    passed: crd_validation.Passed | None = None,
    normalize: bool = False,
    stored: bool = False,
) -> dict[str, Crd]:
    """The CRDs among documents, by name. Other kinds are ignored; a List is looked into.

    ``validate=False`` is for CRDs an apiserver serves: it validated them when they were
    written, and decoded them into its Go types, so their shape needs no second check.
    ``beside`` is the other side of a diff, validated already: what a CRD shares with its
    namesake there is not validated twice (most of a schema is the same between releases).
    ``passed`` holds schema subtrees validated already; repeated ones (across versions,
    CRDs, the sides of a diff) are validated once. ``normalize``: each spec as the digest
    sees it (``counters.digest.normalized_spec``: the apiserver's defaults, no
    documentation), which is what the hook's checks compare and its evidence judges by.
    ``stored``: CRDs the apiserver holds (the old side of a diff): their CEL rules are not
    compiled or costed (``crd_validation.check``)."""
    found: dict[str, Crd] = {}
    passed = crd_validation.Passed() if passed is None else passed
    for crd in crds_of(documents, validate, beside, passed, normalize=normalize, stored=stored):
        if crd.name in found:
            raise defined_twice(crd, found[crd.name])
        found[crd.name] = crd
    return found


def crds_of(
    documents: Iterable[Document],
    validate: bool,
    beside: Mapping[str, Crd] | None,
    passed: crd_validation.Passed,
    *,
    normalize: bool = False,
    stored: bool = False,
) -> Iterator[Crd]:
    """``crds_from``'s CRDs one at a time, a name defined twice included."""
    for document in documents:
        body = document.body
        if body is None:
            continue
        if not isinstance(body, Mapping):
            raise LoadError(
                f"{document.source} (line {document.line}): a document must be a"
                f" mapping, not a {type(body).__name__}"
            )
        items = body.get("items") if body.get("kind") == "List" else [body]
        for item in items if isinstance(items, list) else []:
            if is_crd(item):
                yield _check_crd(item, document.source, validate, beside, passed, normalize, stored)


def check_at(new: Mapping[str, Crd], old: Mapping[str, Crd], minor: minors.Minor) -> None:
    """Raise LoadError for the first CRD of ``new`` (validated, or served) that the apiserver
    of ``minor`` refuses to apply over its namesake in ``old`` (to create, where none), as
    ``crds_from`` raises for one any apiserver refuses (``crd_validation.check_at``)."""
    for name, crd in new.items():
        before = old.get(name)
        with _refused_at(crd, name, minor):
            crd_validation.check_at(crd.raw, None if before is None else before.raw, minor)


def costed_at(new: Mapping[str, Crd], minor: minors.Minor) -> None:
    """Raise LoadError for the first CRD of ``new`` whose CEL rules the apiserver of
    ``minor`` costs over its budgets, where its estimator is not the newest's (before
    ``minors.ENTRY_SIZES``): each CRD is checked again, costed by that estimator."""
    if minor >= minors.ENTRY_SIZES:
        return
    for name, crd in new.items():
        with _refused_at(crd, name, minor):
            crd_validation.check(crd.raw, None, crd_validation.Passed(minor))


@contextmanager
def _refused_at(crd: Crd, name: str, minor: minors.Minor) -> Iterator[None]:
    """A CrdInvalid raised inside as the LoadError naming the CRD and the minor refusing it."""
    try:
        yield
    except crd_validation.CrdInvalid as invalid:
        raise LoadError(
            f"{_where(crd.source, name)} version {invalid.version}: the apiserver of"
            f" Kubernetes {minor[0]}.{minor[1]} refuses this CRD: {invalid.where}:"
            f" {invalid.problem}"
        ) from None


def defined_twice(crd: Crd | CrdHead, first: Crd | CrdHead) -> LoadError:
    return LoadError(f"{crd.source}: CRD {crd.name} is defined twice (also in {first.source})")


def diff_sides(
    old: Iterable[Document], new: Iterable[Document], minor: minors.Minor = minors.NEWEST
) -> tuple[dict[str, Crd], dict[str, Crd]]:
    """The CRDs of both sides of a diff. The first problem is reported, in this order: the
    old side's reading, the new side's reading and CRDs (in document order), the old side's
    CRDs. The new side is read and validated first; the old side is then read a file at a
    time and validated beside it, taking over what it shares with the new side, so that
    what the two share is held once. Rules are costed as the apiserver of ``minor`` costs
    them."""
    passed = crd_validation.Passed(minor)
    try:
        after = crds_from(new, passed=passed)
    except LoadError:
        for _ in old:  # a problem reading the old side comes first
            pass
        raise
    old_documents = iter(old)
    try:
        before = crds_from(old_documents, beside=after, passed=passed, stored=True)
    except LoadError:
        for _ in old_documents:  # as does one further on (a generator that raised is done)
            pass
        raise
    return before, after
