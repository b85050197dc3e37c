"""The hook's call path through the package, counted: which functions of upgrade_guard one
`upgrade-guard hook` run calls, in how many modules, how many calls climb from a lower layer
to a higher one, and how often the run returns to a module it had left.

    PYTHONPATH=tools .venv/bin/python tools/call_path.py [--tree DIR]

starts a throw-away control plane (tools/testenv), applies a CRD stamped schema version 1,
and runs the hook in-process on a chart at schema version 2 that removes a field (one
refusal, UG201; no evidence read: --evidence-limit 0) with a policy declaring that break
for schema version 3 (so the judgement notes it): the tree's own code (``--tree``: another
checkout, such as a worktree at an older commit) under a profiler that sees every Python
call, threads included.

Counted over the calls whose callee is a function of upgrade_guard (comprehensions and
lambdas folded into their function), for the whole run and for the calls that receive the
chart's CRDs (the --crds path, a Crd, a document, a mapping of CRDs, the hook's facts, the
schema comparison's subjects: CrdSets, CrdPair):
- stops: the distinct functions called, in the order the run first reaches each;
- modules: the distinct modules they are in;
- climbs: in that order's sequence of modules (repeats in a row folded), the steps from a
  module to one in a higher layer, by the layer order of pyproject.toml's contract (the
  same order for any tree, so trees compare; top-level parts of an older tree that are no
  layer now count as their package);
- returns: in the same sequence, the steps back to a module it had left.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

from testenv import ControlPlane, find_binaries

REPO = Path(__file__).resolve().parents[1]
# The layer order of pyproject.toml's contract, lowest first.
_CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
_LAYERS = next(c for c in _CONTRACTS["contracts"] if c["type"] == "layers")["layers"]
RANK = {
    name.strip().removeprefix("upgrade_guard."): rank
    for rank, layer in enumerate(reversed(_LAYERS))
    for name in layer.split("|")
}

# Runs in the child: the profiler, then the hook's command line.
_TRACED = """
import sys, threading, json
package = sys.argv.pop(1)
out = sys.argv.pop(1)
calls = []
def where(frame):
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(package) and not frame.f_code.co_name.startswith("<"):
            return name[len(package) + 1:], frame.f_code.co_qualname
        frame = frame.f_back
    return None
crds = sys.argv[sys.argv.index("--crds") + 1]
CARRIERS = {"Crd", "Document", "HookSubject", "LiveFacts", "CrdSets", "CrdPair"}
# Whether a value is the chart's CRDs or holds them: the --crds path, a Crd, a document, a
# mapping of CRDs, the hook's facts, the schema comparison's subjects.
def carries(value):
    if isinstance(value, str):
        return value == crds
    if type(value).__name__ in CARRIERS:
        return True
    if isinstance(value, dict) and value:
        return type(next(iter(value.values()))).__name__ == "Crd"
    return False
def profile(frame, event, arg):
    if event != "call" or not frame.f_code.co_filename.startswith(package):
        return
    code = frame.f_code
    if code.co_name.startswith("<"):
        return
    count = code.co_argcount + code.co_kwonlyargcount
    arguments = [frame.f_locals.get(name) for name in code.co_varnames[:count]]
    callee = (code.co_filename[len(package) + 1:], code.co_qualname)
    calls.append((where(frame.f_back), callee, any(carries(a) for a in arguments)))
sys.path.insert(0, package.rsplit("/", 1)[0])
sys.setprofile(profile)
threading.setprofile(profile)
from upgrade_guard.cli import main
try:
    main()
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    json.dump(calls, open(out, "w"))
"""


def _crd(fields: list[str], schema_version: str) -> dict[str, object]:
    properties = {name: {"type": "string"} for name in fields}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "widgets.path.example.com",
            "annotations": {"upgrade-guard.io/crd-schema-version": schema_version},
        },
        "spec": {
            "group": "path.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": properties}},
                        }
                    },
                }
            ],
        },
    }


def _part(module: str) -> str:
    return module.split("/")[0].removesuffix(".py")


def count(calls: list[tuple[tuple[str, str] | None, tuple[str, str]]]) -> dict[str, object]:
    """stops, modules, climbs and returns over the calls (see the module docstring)."""
    stops: list[tuple[str, str]] = []
    for _, callee in calls:
        if tuple(callee) not in stops:
            stops.append(tuple(callee))  # type: ignore[arg-type]
    modules = [module for module, _ in stops]
    folded = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    ranks = [RANK[_part(m)] for m in folded]
    return {
        "stops": len(stops),
        "modules": len(set(modules)),
        "climbs": sum(1 for a, b in itertools.pairwise(ranks) if b > a),
        "returns": sum(1 for i, m in enumerate(folded) if m in folded[:i]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout to trace")
    parser.add_argument(
        "--path",
        action="store_true",
        help="also print, in order, the functions that receive the chart's CRDs",
    )
    args = parser.parse_args()
    package = str((args.tree / "hook" / "upgrade_guard").resolve())
    binaries = find_binaries()
    with ControlPlane(binaries) as plane, tempfile.TemporaryDirectory() as work:
        root = Path(work)
        live = root / "live.yaml"
        live.write_text(yaml.safe_dump(_crd(["a", "b"], "1")))
        subprocess.run(
            [
                str(binaries.bin_dir / "kubectl"),
                "--kubeconfig",
                str(plane.admin_kubeconfig),
                "apply",
                "-f",
                str(live),
            ],
            check=True,
            capture_output=True,
        )
        (root / "chart").mkdir()
        (root / "chart" / "crds.yaml").write_text(yaml.safe_dump(_crd(["a"], "2")))
        policy = root / "policy.yaml"
        declared = {"crd": "widgets.path.example.com", "rule": "UG201", "path": "spec.b"}
        policy.write_text(
            yaml.safe_dump({"declared-breaks": [{**declared, "schema-version": 3, "reason": "x"}]})
        )
        trace = root / "calls.json"
        subprocess.run(
            [sys.executable, "-c", _TRACED, package, str(trace), "hook", "--crds",
             str(root / "chart"), "--policy", str(policy), "--kubeconfig",
             str(plane.admin_kubeconfig), "--termination-log", str(root / "log"),
             "--evidence-limit", "0"],
            check=False,
        )  # fmt: skip
        calls = json.loads(trace.read_text())
    result = {
        "whole run": count([(caller, callee) for caller, callee, _ in calls]),
        "carrying the chart's CRDs": count(
            [(caller, callee) for caller, callee, carried in calls if carried]
        ),
    }
    print(json.dumps(result, indent=2))
    if args.path:
        seen: list[str] = []
        for _, (module, function), carried in calls:
            if carried and f"{module}:{function}" not in seen:
                seen.append(f"{module}:{function}")
        print("\n".join(seen))


if __name__ == "__main__":
    main()
