"""Webhook configurations carry counters too: `stamp --counter` writes them beside the CRDs'
(byte for byte elsewhere), and verify-history holds a webhook configuration that carries a
counter as it holds the CRDs: every counter, the CRDs' value. Paired: each refusal beside
the nearest history that passes."""

from __future__ import annotations

import pytest
from history_kit import GitRepo, refusals, widget

CONTRACT = "upgrade-guard.io/admission-contract"
POLICY = "counters:\n  - name: admission-contract\n    rule: monotonic\n"
WEBHOOKS = """\
# both configurations of the operator's webhook (they share a name, as cert-manager's do)
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: operator-webhook
  labels: {app: operator}
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: operator-webhook
webhooks: []
---
apiVersion: v1
kind: Service
metadata: {name: operator-webhook}
"""


def stamped_release(repo: GitRepo, contract: int, commit: bool = True) -> None:
    repo.write(".upgrade-guard.yaml", POLICY)
    repo.write_crd(widget())
    if not (repo.root / "crds" / "webhooks.yaml").exists():
        repo.write("crds/webhooks.yaml", WEBHOOKS)
    repo.stamp(1, "--counter", f"admission-contract={contract}")
    if commit:
        repo.commit(f"contract {contract}")


def test_stamp_writes_the_counters_on_webhook_configurations(repo: GitRepo) -> None:
    stamped_release(repo, 2, commit=False)
    text = (repo.root / "crds" / "webhooks.yaml").read_text()
    assert text.count(f'{CONTRACT}: "2"') == 2
    assert text == WEBHOOKS.replace(
        "  name: operator-webhook\n  labels",
        f'  annotations:\n    {CONTRACT}: "2"\n  name: operator-webhook\n  labels',
    ).replace(
        "  name: operator-webhook\nwebhooks: []\n---\napiVersion: v1",
        f'  annotations:\n    {CONTRACT}: "2"\n  name: operator-webhook\nwebhooks: []\n'
        "---\napiVersion: v1",
    )
    check = repo.ug("stamp", "crds", "--check", "--counter", "admission-contract=2")
    assert check.returncode == 0, check.stdout
    stale = repo.ug("stamp", "crds", "--check", "--counter", "admission-contract=3")
    assert stale.returncode == 1
    assert (
        f"crds/webhooks.yaml: MutatingWebhookConfiguration operator-webhook: would set {CONTRACT}"
        in stale.stdout
    )


def _edit_webhooks(repo: GitRepo, old: str, new: str) -> None:
    path = repo.root / "crds" / "webhooks.yaml"
    path.write_text(path.read_text().replace(old, new, 1))


@pytest.mark.parametrize(
    ("edit", "refused"),
    [
        pytest.param(None, set(), id="stamped with the CRDs: held, passes"),
        pytest.param(
            (f'{CONTRACT}: "3"', f'{CONTRACT}: "2"'),
            {("UG708", None)},
            id="one configuration behind the CRDs: refused",
        ),
        pytest.param(
            (f'    {CONTRACT}: "3"\n', ""),
            {("UG708", "ValidatingWebhookConfiguration operator-webhook")},
            id="the annotation dropped by a regeneration: refused",
        ),
    ],
)
def test_verify_history_holds_stamped_webhook_configurations(
    repo: GitRepo, edit: tuple[str, str] | None, refused: set[tuple[str, str | None]]
) -> None:
    stamped_release(repo, 2)
    stamped_release(repo, 3, commit=False)
    if edit is not None:
        _edit_webhooks(repo, *edit)
    code, report = repo.verify()
    assert refusals(report) == refused
    assert code == (1 if refused else 0)


@pytest.mark.parametrize(
    ("contract", "refused"),
    [
        pytest.param(2, set(), id="kept"),
        pytest.param(1, {("UG709", None)}, id="went down on CRDs and webhooks"),
    ],
)
def test_a_monotonic_contract_on_webhooks_may_not_go_down(
    repo: GitRepo, contract: int, refused: set[tuple[str, str | None]]
) -> None:
    stamped_release(repo, 2)
    stamped_release(repo, contract, commit=False)
    code, report = repo.verify()
    assert refusals(report) == refused
    assert code == (1 if refused else 0)


def test_webhook_configurations_without_counters_are_not_held(repo: GitRepo) -> None:
    repo.write(".upgrade-guard.yaml", POLICY)
    repo.write_crd(widget())
    repo.write("crds/webhooks.yaml", WEBHOOKS)
    repo.stamp(1, "--counter", "admission-contract=1")
    _edit_webhooks(repo, f'  annotations:\n    {CONTRACT}: "1"\n', "")
    _edit_webhooks(repo, f'  annotations:\n    {CONTRACT}: "1"\n', "")
    repo.commit()
    repo.write_crd(widget(size={"type": "string"}, color={"type": "string"}))
    repo.stamp(2)
    code, report = repo.verify()
    assert refusals(report) == set() and code == 0
