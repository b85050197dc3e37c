"""What every command shares: option types, policy and counter options, reporting, and the
one place where known input problems become exit 2 and anything else exit 4."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, ParamSpec, TypeVar

import typer

from upgrade_guard.findings import ExitCode, Outcome
from upgrade_guard.report import REPORTERS, Output, Terminal

if TYPE_CHECKING:
    from upgrade_guard.policy import Policy

# The policy and the readers (the rules, the YAML reader: most of a command's imports) are
# imported where used, not here: `helm guard` starts helm's render before they load.

P = ParamSpec("P")
R = TypeVar("R")


class UsageProblem(ValueError):
    """An option value the command cannot use."""


PolicyOption = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="Policy file; default: .upgrade-guard.yaml, searched up to the git root.",
    ),
]
TEXT = Output("text")
OutputOption = Annotated[Output, typer.Option(metavar="FORMAT", help=f"{', '.join(REPORTERS)}.")]
WitnessesOption = Annotated[
    bool,
    typer.Option(
        "--witnesses",
        help="Show each error's witness in the text report: an object the old CRD accepts"
        " that the new one refuses or reads back changed (--output json always carries it).",
    ),
]
MaxBytesOption = Annotated[
    int, typer.Option(metavar="N", help="Refuse more input than this per side.")
]
CounterOption = Annotated[
    list[str] | None,
    typer.Option(metavar="NAME=VALUE", help="A counter to stamp; repeatable."),
]


def fail(code: ExitCode, message: str) -> NoReturn:
    typer.echo(f"upgrade-guard: error: {message}", err=True)
    raise typer.Exit(int(code))


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Turn known input problems into one line and exit 2; anything else into exit 4."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except Exception as error:
            from upgrade_guard.load.documents import LoadError
            from upgrade_guard.policy import PolicyError

            if isinstance(error, LoadError | PolicyError | UsageProblem):
                fail(ExitCode.BAD_INPUT, str(error))
            # fail closed, but say it is our fault
            if os.environ.get("UPGRADE_GUARD_DEBUG"):
                raise
            fail(
                ExitCode.INTERNAL_ERROR,
                f"internal error: {type(error).__name__}: {error}"
                " (set UPGRADE_GUARD_DEBUG=1 for the traceback)",
            )

    return run


def policy_from(path: str | None) -> Policy:
    """The policy given with --policy, else .upgrade-guard.yaml found from here, else none."""
    from upgrade_guard.load.policy_file import chosen_policy

    return chosen_policy(path, Path.cwd())


def parse_kube_version(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", value.strip())
    if match is None:
        raise UsageProblem(f"--kube-version {value!r}: expected MAJOR.MINOR, such as 1.31")
    return int(match.group(1)), int(match.group(2))


def canonical_option(option: str, value: str) -> int:
    from upgrade_guard.policy import canonical_number

    number = canonical_number(value)
    if number is None:
        raise UsageProblem(
            f"{option} {value!r}: expected a canonical positive decimal such as 1 or 12"
            " (no sign, no leading zero, no fraction)"
        )
    return number


def counter_options(values: list[str] | None, policy: Policy) -> dict[str, str]:
    """--counter NAME=V options as annotation key -> canonical value."""
    from upgrade_guard.policy import SCHEMA_DIGEST, SCHEMA_VERSION

    result: dict[str, str] = {}
    for item in values or []:
        name, equals, value = item.partition("=")
        name = name.strip()
        if not equals or not re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?", name):
            raise UsageProblem(f"--counter {item!r}: expected NAME=VALUE, such as state=3")
        if name in (SCHEMA_VERSION, SCHEMA_DIGEST):
            raise UsageProblem(f"--counter {item!r}: use --schema-version for {name}")
        result[policy.annotation(name)] = str(canonical_option(f"--counter {name}", value))
    return result


def terminal() -> Terminal:
    """Standard output as a report sees it: a terminal (coloured, its width up to 120
    columns) unless piped or NO_COLOR is set."""
    if sys.stdout.isatty() and "NO_COLOR" not in os.environ:
        return Terminal(color=True, width=min(typer.get_terminal_size()[0], 120))
    return Terminal()


def write_report(outcome: Outcome, output: str, witnesses: bool = False) -> None:
    sys.stdout.write(REPORTERS[output](outcome, replace(terminal(), witnesses=witnesses)))
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if output == "github" and summary_file:
        write_step_summary(Path(summary_file), REPORTERS["markdown"](outcome))


STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a larger job summary for a step
_CUT_NOTE = "\n_Report cut at 1 MiB, GitHub's limit; `--output json` has every finding._\n"


def write_step_summary(path: Path, report: str) -> None:
    """Append the whole markdown report to the job summary, so nothing the annotations
    drop (GitHub keeps 10 error annotations a step) is lost; cut at a line to fit 1 MiB."""
    data = report.encode()
    if len(data) > STEP_SUMMARY_LIMIT:
        note = _CUT_NOTE.encode()
        data = data[: STEP_SUMMARY_LIMIT - len(note)]
        data = data[: data.rfind(b"\n") + 1] + note
    try:
        with path.open("ab") as summary:
            summary.write(data)
    except OSError as error:  # the report is out already: say so, keep the verdict's exit
        typer.echo(
            f"upgrade-guard: warning: GITHUB_STEP_SUMMARY {path}: cannot write: {error.strerror}",
            err=True,
        )
