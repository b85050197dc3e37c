"""The commands a refusal's ways out print, for what the person ran.

Each refusal says what the person can do ``now:`` and which ``accept:`` entry lets it
through; both are commands for the operation at hand, with the release's own name and
namespace, which the person can type as printed (CHART is the chart as they gave it to
helm; ``[your flags]`` the flags they gave it, which Helm does not keep from a refused
run):

- the hook of an upgrade: the upgrade again with ``--reset-then-reuse-values``: the new
  chart's defaults under the last release's own values. ``--reuse-values`` would keep the
  old chart's values whole, with which a chart that needs a new value does not render;
- the hook of an install: the same, as ``helm upgrade --install``: Helm keeps a refused
  install's release (failed) and ``helm install`` will not re-use its name, while an
  upgrade of it reuses the install's own values;
- the hook of a rollback: a rollback restores its revision's values and takes none, so the
  way is an upgrade to that revision's chart with its values (``helm get values
  --revision N``), once the refused rollback's pending record is gone (its own way out);
- the plugin: ``helm guard`` again, with ``--run`` to run helm once it passes; a chart that
  did not adopt the guard takes the acceptances as ``--accept``, one adopted in its values;
- the kubectl apply of a chart's ``crds/``: ``helm guard crds`` again, then the apply.
"""

from __future__ import annotations

from dataclasses import dataclass

APPLY = "apply"  # a chart's crds/, by kubectl apply: ``helm guard crds``
_ENTRIES = "'upgrade-guard.accept=[ENTRY,...]'"
_ENTRY = "--accept 'ENTRY'"
_NONE = "--set-json 'upgrade-guard.accept=[]'"


@dataclass(frozen=True)
class Asked:
    """What the person ran: the operation (install, upgrade, rollback, or APPLY), the
    release and its namespace, the chart version being applied, the revision a rollback
    restores; through the plugin or Helm's own hook, and whether acceptances are the
    chart's values (it adopted the guard) or the plugin's ``--accept``."""

    operation: str = "upgrade"
    release: str | None = None
    namespace: str | None = None
    chart_version: str | None = None
    revision: int | None = None
    plugin: bool = False
    in_values: bool = True

    @property
    def _release(self) -> str:
        namespace = f" -n {self.namespace}" if self.namespace else ""
        return f"{self.release or 'RELEASE'}{namespace}"


UNASKED = Asked()  # nothing known of what was run: the commands name RELEASE and CHART


def again(asked: Asked, settings: str) -> str:
    """The command that runs ``asked`` again with ``settings`` (helm flags that set values)."""
    release = asked._release
    version = f"--version {asked.chart_version or 'VERSION'}"
    if asked.operation == APPLY:
        words = ["helm guard crds CHART", version, settings]
    elif asked.plugin and asked.operation != "rollback":
        words = [f"helm guard {asked.operation} {release} CHART [your flags]", settings, "--run"]
    elif asked.plugin and not asked.in_values:
        words = [f"helm guard rollback {release} {asked.revision or 'REVISION'}", settings, "--run"]
    elif asked.operation == "rollback":
        revision = asked.revision or "REVISION"
        values = f"revision-{revision}-values.yaml"
        helm = "helm guard upgrade" if asked.plugin else "helm upgrade"
        words = [
            f"helm get values {release} --revision {revision} --output yaml > {values} &&",
            f"{helm} {release} CHART {version} --values {values}",
            settings,
            "--run" if asked.plugin else "",
        ]
    else:
        install = " --install" if asked.operation == "install" else ""
        words = [
            f"helm upgrade{install} {release} CHART --reset-then-reuse-values [your flags]",
            settings,
        ]
    return " ".join(word for word in words if word)


def accepting(asked: Asked) -> str:
    """The command that passes the acceptances: ENTRY the refusals' accept: entries."""
    if asked.in_values and asked.operation != APPLY:
        return f"`{again(asked, '--set-json ' + _ENTRIES)}`"
    return f"`{again(asked, _ENTRY)}` (--accept once per entry)"


def dropping_acceptances(asked: Asked) -> str:
    """The command that runs ``asked`` again without the acceptances it carries."""
    if asked.in_values and asked.operation != APPLY:
        return f"`{again(asked, _NONE)}`"
    return f"`{again(asked, '')}` (no --accept)"
