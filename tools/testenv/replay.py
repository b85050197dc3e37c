"""Witnesses replayed on the real apiserver (issue 33 item 2; the contract: /work/team/WITNESS.md).

For one CRD of one release pair, every error finding's witness is held to kube-apiserver in
one apply sequence: the old CRD is applied (and Established), each witness's ``stored`` object
is created at its version, the new CRD is applied, and each operation is performed: a CREATE of
a copy (or, read back changed, of ``object``, the body ``stored`` was written from), an UPDATE
to ``object``, a GET, a write of ``object`` through /status (``status``:
refused after the new CRD, or made before it and read back by a GET), or (``apply-crd``) the
new CRD's apply itself, or (``apply-old-crd``, after every other operation) the old CRD's
apply again, a rollback, or (``apply``) a server-side apply of ``object`` by the first of
the field managers whose applies (``applied``, instead of a CREATE; through /status where
the object holds status at a version with the subresource) stored the object; at
``read_version`` where the witness names one (UG110: stored at one served version, operated
on at another; with ``stored_under`` new, ``stored`` is created once the new CRD is
applied, not before). The
finding is **confirmed** when the apiserver refuses with ``message`` in its error or reads back
``read_back``, **refuted** otherwise (the detail says what the apiserver did), **no witness**
when the finding has none (``proven`` false), **not replayed** when the sequence could not
reach the operation (a CRD the apiserver refuses before it, a CRD absent from the old side).
A CRD absent from the new side is deleted in the new CRD's place, as a tool that prunes what
a chart no longer renders deletes it.

What the replay changes in the CRDs, and why:

* the group gets a prefix unique to the replay (``r7.cert-manager.io``): CRDs of every pair
  live side by side in one apiserver without waiting for the previous pair's CRD to be
  deleted; witnesses' ``apiVersion`` follow, and read-backs are compared under the original;
* ``conversion.strategy: Webhook`` becomes ``None`` on both sides: no conversion webhook runs
  here, and a write or read at the storage version never calls it;
* the CRD's metadata is its name only (helm's and cainjector's annotations mean nothing here).

A ``stored`` object with ``status`` at a version with the status subresource is created, then
its status written through ``/status``, as a controller stores one (a CREATE drops it).

Witness objects are named ``w<i>`` (copies ``w<i>-copy``) rather than ``witness``, since one
CRD holds many; a namespaced CRD's objects are put in the replay's namespace.
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jsonpatch

from .crds import CRDS, Attempt, CRDTrial
from .kube import JSON, Kube, KubeError, wait_for

OUTCOMES = ("confirmed", "refuted", "not replayed", "no witness")
COLUMNS = ("errors", *OUTCOMES)
# Set by the apiserver on every object; the contract leaves them out of ``read_back``.
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
# The custom-resource handler takes up a new schema asynchronously after the CRD is
# Established (CRDTrial waits, then SETTLE_SECONDS): a surprise is tried again for this long.
RETRY_SECONDS = 3.0
DETAIL_LIMIT = 300
# A GET at a version no longer served is 404 in one of two wordings: a Status where the
# group/version still serves another resource, discovery's plain text where it serves none.
# The replay applies one CRD pair at a time under its own group, so it takes either.
NOT_FOUND = ("the server could not find the requested resource", "404 page not found")


@dataclass(frozen=True)
class Outcome:
    """What the replay made of one error finding."""

    source: str  # the release pair, e.g. "cert-manager v1.5.0 -> v1.6.0"
    crd: str
    code: str
    version: str | None
    path: str | None
    result: str  # one of OUTCOMES
    detail: str = ""
    operation: str = ""


def errors_of(report: JSON) -> list[JSON]:
    """The findings of a JSON report that are errors."""
    return [f for f in report.get("findings", []) if f.get("severity") == "error"]


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 3] + "..."


def prepared(crd: JSON, group: str) -> JSON:
    """The CRD as the replay applies it: under ``group``, conversion None, name only."""
    spec = copy.deepcopy(crd["spec"])
    spec["group"] = group
    if (spec.get("conversion") or {}).get("strategy") == "Webhook":
        spec["conversion"] = {"strategy": "None"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{spec['names']['plural']}.{group}"},
        "spec": spec,
    }


def _has_status(crd: JSON, version: str) -> bool:
    """Whether the version has the status subresource (a CREATE or UPDATE then drops
    ``status``: only a /status write stores it)."""
    for entry in crd["spec"].get("versions", []):
        if entry.get("name") == version:
            return "status" in (entry.get("subresources") or {})
    return False


def _regrouped(obj: JSON, group: str, version: str, name: str, namespace: str | None) -> JSON:
    body = copy.deepcopy(obj)
    body["apiVersion"] = f"{group}/{version}"
    metadata = body.setdefault("metadata", {})
    metadata["name"] = name
    if namespace:
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)
    return body


def as_witnessed(read: JSON, group: str, replay_group: str) -> JSON:
    """A GET's object as the contract's ``read_back`` writes it: server metadata, the
    replay's name and namespace gone, the original group."""
    body = copy.deepcopy(read)
    api_version = str(body.get("apiVersion", ""))
    if api_version.startswith(f"{replay_group}/"):
        body["apiVersion"] = group + api_version[len(replay_group) :]
    metadata = body.get("metadata", {})
    for key in (*SERVER_METADATA, "namespace"):
        metadata.pop(key, None)
    metadata["name"] = "witness"
    return body


def _expected_read(read_back: JSON) -> JSON:
    body = copy.deepcopy(read_back)
    metadata = body.setdefault("metadata", {})
    metadata.pop("namespace", None)
    metadata["name"] = "witness"
    return body


def _operated_at(witness: JSON) -> str:
    """The version the operation is made at: ``read_version`` where the witness names one
    (UG110: written at one served version, read at another), else the one it was stored at."""
    return str(witness.get("read_version") or witness.get("version"))


def _stored_after_upgrade(witness: JSON) -> bool:
    """Whether ``stored`` is written once the new CRD is applied (UG110: a disagreement only
    objects written after the upgrade meet), not while the old CRD is live."""
    return witness.get("stored_under") == "new"


def _refusal(error: KubeError, witness: JSON) -> tuple[str, str]:
    message = str(witness.get("message") or "")
    if message in error.message:
        return "confirmed", ""
    return "refuted", _short(f"refused ({error.code}) without {message!r}: {error.message}")


@dataclass
class _Case:
    index: int
    finding: JSON
    witness: JSON

    @property
    def name(self) -> str:
        return f"w{self.index}"


class CRDReplay:
    """One CRD pair's apply sequence holding all its witnesses."""

    def __init__(
        self,
        kube: Kube,
        source: str,
        old: JSON | None,
        new: JSON | None,
        findings: Sequence[JSON],
        *,
        replay_group: str,
        namespace: str,
    ) -> None:
        self.kube = kube
        self.source = source
        self.old = old
        self.new = new
        self.findings = findings
        self.replay_group = replay_group
        self.namespace = namespace
        self.outcomes: dict[int, Outcome] = {}

    def _outcome(self, index: int, result: str, detail: str = "") -> None:
        finding = self.findings[index]
        witness = finding.get("witness") or {}
        self.outcomes[index] = Outcome(
            self.source,
            str(finding.get("crd")),
            str(finding.get("code")),
            finding.get("version"),
            finding.get("path"),
            result,
            _short(detail) if detail else "",
            str(witness.get("operation", "")),
        )

    def run(self) -> list[Outcome]:
        cases = []
        for index, finding in enumerate(self.findings):
            witness = finding.get("witness")
            if not witness:
                self._outcome(index, "no witness")
            else:
                cases.append(_Case(index, finding, witness))
        if cases:
            self._replay(cases)
        return [self.outcomes[i] for i in range(len(self.findings))]

    def _replay(self, cases: list[_Case]) -> None:
        if self.old is None:
            for case in cases:
                self._outcome(case.index, "not replayed", "the CRD is not on the old side")
            return
        group = str(self.old["spec"]["group"])
        trial = CRDTrial(self.kube, self.namespace)
        applied = trial.apply_crd(prepared(self.old, self.replay_group))
        if not applied.allowed:
            for case in cases:
                self._outcome(case.index, "not replayed", f"old CRD refused: {applied.message}")
            return
        try:
            later = [case for case in cases if _stored_after_upgrade(case.witness)]
            live = [case for case in cases if case not in later and self._store(trial, case)]
            if self.new is None:
                applied = self._removed(trial)
            else:
                applied = trial.apply_crd(prepared(self.new, self.replay_group))
            live += [case for case in later if not applied.allowed or self._store_new(trial, case)]
            # A rollback the apiserver allows puts the old CRD back: it comes last.
            live.sort(key=lambda case: case.witness.get("operation") == "apply-old-crd")
            for case in live:
                if case.witness.get("operation") == "apply-crd":
                    self._apply_crd(case, applied.allowed, applied.message)
                elif not applied.allowed:
                    self._outcome(case.index, "not replayed", f"new CRD refused: {applied.message}")
                elif case.witness.get("operation") == "apply-old-crd":
                    self._rolled_back(trial, case)
                else:
                    self._operate(trial, case, group)
        finally:
            trial.delete_crd()

    def _removed(self, trial: CRDTrial) -> Attempt:
        """The CRD is gone from the new side: deleted, as a tool that prunes what the chart
        no longer renders deletes it (with every object of it), and waited for."""
        trial.delete_crd()
        wait_for(
            lambda: self.kube.get_or_none(f"{CRDS}/{trial.name}") is None,
            timeout=60,
            what=f"CRD {trial.name} deleted",
        )
        return Attempt("DELETE CRD", True, 200)

    def _namespace_of(self, crd: JSON | None) -> str | None:
        crd = crd or self.old
        assert crd is not None
        return self.namespace if crd["spec"].get("scope", "Namespaced") == "Namespaced" else None

    def _store_new(self, trial: CRDTrial, case: _Case) -> bool:
        """``_store`` once the new CRD is applied (``stored_under`` new), when a dry-run
        CREATE at the version stores ``stored`` as it is: until the new schema is taken up
        (RETRY_SECONDS), one the old CRD served there may still decide."""
        assert self.new is not None
        version = str(case.witness.get("version"))
        namespace = self._namespace_of(self.new)
        body = _regrouped(case.witness["stored"], self.replay_group, version, case.name, namespace)
        expected = _expected_read(case.witness["stored"])
        if _has_status(self.new, version):
            expected.pop("status", None)
        group = str(self.new["spec"]["group"])
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            tried = trial.create(body, version=version, dry_run=True)
            got = tried.allowed and as_witnessed(tried.expect_allowed(), group, self.replay_group)
            if got == expected:
                return self._store(trial, case, self.new)
            if time.monotonic() > deadline:
                said = tried.message if not tried.allowed else "stored otherwise than stored"
                self._outcome(case.index, "refuted", f"the new CRD at {version}: {said}")
                return False
            time.sleep(0.5)

    def _store(self, trial: CRDTrial, case: _Case, crd: JSON | None = None) -> bool:
        """Create ``stored`` under the CRD (the old one unless given; and, for an update,
        check ``object`` passes it too, by a dry run); False with the case refuted where it
        does not."""
        crd = crd or self.old
        assert crd is not None
        side = "new" if crd is self.new else "old"
        version = str(case.witness.get("version"))
        namespace = self._namespace_of(crd)
        if case.witness.get("operation") == "apply":
            return self._applied_before(trial, case, version, namespace)
        body = _regrouped(case.witness["stored"], self.replay_group, version, case.name, namespace)
        created = trial.create(body, version=version)
        if not created.allowed:
            self._outcome(
                case.index,
                "refuted",
                f"the {side} CRD refused the stored object: {created.message}",
            )
            return False
        if "status" in body and _has_status(crd, version):
            stored = created.expect_allowed()
            stored["status"] = body["status"]
            try:
                self.kube.replace(trial.path(version, case.name) + "/status", stored)
            except KubeError as err:
                self._outcome(
                    case.index, "refuted", f"the {side} CRD refused the stored status: {err}"
                )
                return False
        if case.witness.get("operation") == "status":
            return self._status_before(trial, case, version, namespace)
        if case.witness.get("object") and case.witness.get("operation") == "create":
            return self._body_stored(trial, case, version, namespace)
        if case.witness.get("operation") != "update":
            return True
        target = self._update_body(trial, case, version, namespace)
        try:
            self.kube.replace(trial.path(version, case.name), target, dryRun="All")
        except KubeError as err:
            self._outcome(case.index, "refuted", f"the {side} CRD refused the update too: {err}")
            return False
        return True

    def _applied_before(
        self, trial: CRDTrial, case: _Case, version: str, namespace: str | None
    ) -> bool:
        """For an ``apply`` witness, while the old CRD is live: each of ``applied`` applied
        (server-side, its field manager, no force), which stores ``stored``; False with the
        case refuted where the old CRD refuses one, or stores another object."""
        path = trial.path(version, case.name)
        if self._applied_to_status(case, version):
            stored = {k: v for k, v in case.witness["stored"].items() if k != "status"}
            body = _regrouped(stored, self.replay_group, version, case.name, namespace)
            created = trial.create(body, version=version)
            if not created.allowed:
                self._outcome(case.index, "refuted", f"the old CRD refused: {created.message}")
                return False
            path += "/status"
        for entry in case.witness.get("applied") or []:
            body = _regrouped(entry["object"], self.replay_group, version, case.name, namespace)
            try:
                self.kube.apply(path, body, str(entry["manager"]))
            except KubeError as err:
                self._outcome(case.index, "refuted", f"the old CRD refused an apply: {err}")
                return False
        group = str(self.old["spec"]["group"]) if self.old else ""
        got = as_witnessed(trial.get(case.name, version=version), group, self.replay_group)
        if got != _expected_read(case.witness["stored"]):
            self._outcome(case.index, "refuted", "the applies stored another object than stored")
            return False
        return True

    def _applied_to_status(self, case: _Case, version: str) -> bool:
        """Whether an ``apply`` witness's applies are made through /status: its object
        holds status, at a version with the status subresource (created first without)."""
        held = "status" in (case.witness.get("object") or {})
        return held and self.old is not None and _has_status(self.old, version)

    def _status_before(
        self, trial: CRDTrial, case: _Case, version: str, namespace: str | None
    ) -> bool:
        """For a ``status`` witness, while the old CRD is live: ``object`` written through
        /status where the new CRD is to read it back changed, else (a refusal to come) the
        same write passes the old CRD, by a dry run. False with the case refuted where the
        old CRD refuses it."""
        target = self._update_body(trial, case, version, namespace)
        reads = case.witness.get("apiserver") == "reads back changed"
        try:
            if reads:
                self.kube.replace(trial.path(version, case.name) + "/status", target)
            else:
                self.kube.replace(trial.path(version, case.name) + "/status", target, dryRun="All")
        except KubeError as err:
            self._outcome(case.index, "refuted", f"the old CRD refused the status write: {err}")
            return False
        return True

    def _body_stored(
        self, trial: CRDTrial, case: _Case, version: str, namespace: str | None
    ) -> bool:
        """For a CREATE of ``object`` read back changed: the old CRD stores ``object`` as
        ``stored`` (a dry run); False with the case refuted where it does not."""
        name = f"{case.name}-old"
        body = _regrouped(case.witness["object"], self.replay_group, version, name, namespace)
        created = trial.create(body, version=version, dry_run=True)
        group = str(self.old["spec"]["group"]) if self.old else ""
        if not created.allowed:
            self._outcome(
                case.index, "refuted", f"the old CRD refused the object: {created.message}"
            )
            return False
        got = as_witnessed(created.expect_allowed(), group, self.replay_group)
        if got != _expected_read(case.witness["stored"]):
            self._outcome(
                case.index, "refuted", "the old CRD stores the object otherwise than stored"
            )
            return False
        return True

    def _update_body(
        self, trial: CRDTrial, case: _Case, version: str, namespace: str | None
    ) -> JSON:
        current = trial.get(case.name, version=version)
        obj = case.witness.get("object") or {}
        body = _regrouped(obj, self.replay_group, version, case.name, namespace)
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        return body

    def _apply_crd(self, case: _Case, allowed: bool, message: str) -> None:
        expected = str(case.witness.get("message") or "")
        if allowed:
            self._outcome(case.index, "refuted", "the new CRD was applied")
        elif expected in message:
            self._outcome(case.index, "confirmed")
        else:
            self._outcome(case.index, "refuted", f"new CRD refused without {expected!r}: {message}")

    def _rolled_back(self, trial: CRDTrial, case: _Case) -> None:
        """``apply-old-crd``: the old CRD applied again over the new one, as a rollback
        does: refused with ``message``."""
        assert self.old is not None
        again = trial.apply_crd(prepared(self.old, self.replay_group))
        expected = str(case.witness.get("message") or "")
        if again.allowed:
            self._outcome(case.index, "refuted", "the old CRD was applied again")
        elif expected in again.message:
            self._outcome(case.index, "confirmed")
        else:
            self._outcome(
                case.index,
                "refuted",
                f"old CRD refused again without {expected!r}: {again.message}",
            )

    def _operate(self, trial: CRDTrial, case: _Case, group: str) -> None:
        operation = case.witness.get("operation")
        if operation not in ("create", "update", "read", "status", "apply"):
            self._outcome(case.index, "refuted", f"operation {operation!r} is not in the contract")
            return
        deadline = time.monotonic() + RETRY_SECONDS
        attempt = 0
        while True:
            # A refusal of a CREATE or UPDATE is the new schema's (what was written passed the
            # old one): final. What was allowed, or read, may still be the old schema's.
            if operation == "create" and case.witness.get("apiserver") == "reads back changed":
                (result, detail), final = self._created(trial, case, group, attempt), False
            elif operation == "create":
                result, detail, final = self._create(trial, case, attempt)
            elif operation == "update":
                result, detail, final = self._update(trial, case)
            elif operation == "status" and case.witness.get("apiserver") == "refuses":
                result, detail, final = self._status(trial, case)
            elif operation == "apply":
                result, detail, final = self._apply(trial, case, group)
            else:
                (result, detail), final = self._read(trial, case, group), False
            if result == "confirmed" or final or time.monotonic() > deadline:
                break
            attempt += 1
            time.sleep(0.5)
        self._outcome(case.index, result, detail)

    def _create(self, trial: CRDTrial, case: _Case, attempt: int) -> tuple[str, str, bool]:
        version = _operated_at(case.witness)
        name = f"{case.name}-copy" + (f"-{attempt}" if attempt else "")
        body = _regrouped(
            case.witness["stored"],
            self.replay_group,
            version,
            name,
            self._namespace_of(self.new),
        )
        try:
            self.kube.create(trial.path(version), body)
        except KubeError as err:
            return (*_refusal(err, case.witness), True)
        return "refuted", "CREATE of the copy was allowed", False

    def _created(self, trial: CRDTrial, case: _Case, group: str, attempt: int) -> tuple[str, str]:
        """A CREATE of ``object`` (the body ``stored`` was written from) stores
        ``read_back``: what a GET of the new object returns."""
        version = _operated_at(case.witness)
        name = f"{case.name}-body" + (f"-{attempt}" if attempt else "")
        namespace = self._namespace_of(self.new)
        body = _regrouped(
            case.witness.get("object") or {}, self.replay_group, version, name, namespace
        )
        try:
            self.kube.create(trial.path(version), body)
        except KubeError as err:
            return "refuted", f"CREATE of the object refused ({err.code}): {err.message}"
        return self._compared(trial.get(name, version=version), case, group)

    def _update(self, trial: CRDTrial, case: _Case) -> tuple[str, str, bool]:
        version = _operated_at(case.witness)
        body = self._update_body(trial, case, version, self._namespace_of(self.new))
        try:
            self.kube.replace(trial.path(version, case.name), body)
        except KubeError as err:
            return (*_refusal(err, case.witness), True)
        return "refuted", "UPDATE to the object was allowed", False

    def _status(self, trial: CRDTrial, case: _Case) -> tuple[str, str, bool]:
        version = _operated_at(case.witness)
        body = self._update_body(trial, case, version, self._namespace_of(self.new))
        try:
            self.kube.replace(trial.path(version, case.name) + "/status", body)
        except KubeError as err:
            return (*_refusal(err, case.witness), True)
        return "refuted", "the /status write was allowed", False

    def _apply(self, trial: CRDTrial, case: _Case, group: str) -> tuple[str, str, bool]:
        """The first of ``applied``'s managers applies ``object`` (no force): refused with
        ``message``, or allowed and read back as ``read_back``."""
        version = _operated_at(case.witness)
        manager = str((case.witness.get("applied") or [{}])[0].get("manager"))
        body = _regrouped(
            case.witness.get("object") or {},
            self.replay_group,
            version,
            case.name,
            self._namespace_of(self.new),
        )
        path = trial.path(version, case.name)
        if self._applied_to_status(case, version):
            path += "/status"
        try:
            read = self.kube.apply(path, body, manager)
        except KubeError as err:
            if case.witness.get("apiserver") == "refuses":
                return (*_refusal(err, case.witness), True)
            return "refuted", f"the apply was refused ({err.code}): {err.message}", True
        if case.witness.get("apiserver") == "refuses":
            return "refuted", "the apply was allowed", False
        return (*self._compared(read, case, group), True)

    def _read(self, trial: CRDTrial, case: _Case, group: str) -> tuple[str, str]:
        version = _operated_at(case.witness)
        try:
            read = trial.get(case.name, version=version)
        except KubeError as err:
            if case.witness.get("apiserver") == "refuses":
                if err.code == 404 and case.witness.get("message") in NOT_FOUND:
                    return "confirmed", ""
                return _refusal(err, case.witness)
            return "refuted", f"GET failed ({err.code}): {err.message}"
        if case.witness.get("apiserver") == "refuses":
            return "refuted", "GET at the version succeeded"
        return self._compared(read, case, group)

    def _compared(self, read: JSON, case: _Case, group: str) -> tuple[str, str]:
        got = as_witnessed(read, group, self.replay_group)
        expected = _expected_read(case.witness.get("read_back") or {})
        if got == expected:
            return "confirmed", ""
        ops = jsonpatch.make_patch(expected, got).patch
        said = "; ".join(f"{op['op']} {op['path']}" for op in ops)
        return "refuted", f"read back differs from read_back (read_back -> GET): {said}"


def tally(outcomes: Iterable[Outcome]) -> dict[str, Counter[str]]:
    """Per rule code: errors, and how many of each outcome."""
    table: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        row = table.setdefault(outcome.code, Counter())
        row["errors"] += 1
        row[outcome.result] += 1
    return dict(sorted(table.items()))


def table_text(outcomes: Sequence[Outcome]) -> str:
    """The per-rule table, as Markdown."""
    header = ("rule", *COLUMNS)
    rows = [header, tuple("-" * len(h) for h in header)]
    counts = tally(outcomes)
    total: Counter[str] = Counter()
    for code, row in counts.items():
        total.update(row)
        rows.append((code, *(str(row[key]) for key in COLUMNS)))
    rows.append(("all", *(str(total[key]) for key in COLUMNS)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join(
        "| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |"
        for row in rows
    )


def detail_lines(outcomes: Sequence[Outcome], result: str) -> list[str]:
    """One line per outcome of that result: pair, CRD, version, path, code, what happened."""
    return [
        f"{o.source} | {o.crd} | {o.version} | {o.path} | {o.code} {o.operation} | {o.detail}"
        for o in outcomes
        if o.result == result
    ]


def findings_by_crd(errors: Sequence[JSON]) -> dict[str, list[JSON]]:
    grouped: dict[str, list[JSON]] = {}
    for finding in errors:
        grouped.setdefault(str(finding.get("crd")), []).append(finding)
    return grouped
