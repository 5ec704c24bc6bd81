"""A sweep's plan: the runs of the cartesian product of parameter values, every one validated
before the first starts, each identified by a stable key.

A run's key is a short hash of the case file's text and its canonical override set (the base
overrides and its swept values as {'section.key': value}, sorted, JSON; the output folder left
out: it says where a run writes, not what it computes), and the run is named <case
name>-<key>. Two sweeps into one folder so never share a name unless they run the same thing,
a sweep run again finds its runs by name, and after an edit of the case file it runs them
anew.
"""

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..cases import Case, CaseError, load, parse_override, parse_value
from ..cases.resolved import flat_overrides

MAX_RUNS = 10_000
KEY_DIGITS = 12  # 48 bits: a collision among 10,000 runs has odds of about 2e-7
UNKEYED = ("output.dir",)  # overrides that do not change what a run computes


def split_values(text):
    """'a,b,[1,2]' -> ['a', 'b', '[1,2]']: commas inside brackets, braces or quotes stay."""
    parts, depth, quote, current = [], 0, None, ""
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return [part.strip() for part in parts]


def parameters_from_sets(sets):
    """--set options ('section.key=a,b,c') as the parameters of sweep(): {'section.key': [...]}."""
    parameters = {}
    for text in sets:
        section, key, _ = parse_override(text)
        values = [parse_value(v) for v in split_values(text.split("=", 1)[1])]
        if any(v == "" for v in values):
            raise CaseError(f"--set {text}: empty value in the list")
        parameters[f"{section}.{key}"] = values
    return parameters


def run_key(case_text, keyed):
    """The key of a run: the first KEY_DIGITS hex digits of the SHA-256 of the case file's text
    and its canonical override set as JSON (sorted keys; values without a JSON form by their
    str)."""
    text = json.dumps({"case": case_text, "overrides": keyed}, sort_keys=True,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_DIGITS]


@dataclass
class PlannedRun:
    """One run of a sweep: its key and name, its swept values (`parameters`), the override set
    its key hashes (`keyed`) and the task a worker runs it from (plain, picklable data)."""

    key: str
    name: str
    parameters: dict
    keyed: dict
    task: dict


@dataclass
class Plan:
    """The runs of a sweep in its order, the case name, the output folder, the swept keys and
    the runs' run.backend values (a set)."""

    name: str
    folder: Path
    runs: list
    swept: list
    backends: set


def _axes(parameters):
    """{'section.key': values or one value} as [(name, [values...])], names checked."""
    if not isinstance(parameters, dict):
        raise CaseError(f"parameters: expected {{'section.key': [values...]}}, got "
                        f"{type(parameters).__name__}")
    axes = []
    for name, values in parameters.items():
        if not isinstance(name, str) or len(name.split(".")) != 2 or not all(name.split(".")):
            raise CaseError(f"parameters: expected 'section.key' names, got {name!r}")
        if name in UNKEYED:
            raise CaseError(f"parameters: {name} cannot be swept (a sweep's runs share a folder)")
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if not values:
            raise CaseError(f"parameters: {name} has no values")
        axes.append((name, values))
    return axes


def make_plan(case, parameters, overrides, out=None):
    """The plan of a sweep of `case` (a case file's path or a Case from solvers.cases.load,
    swept from its file and the overrides it was loaded with) over `parameters`, with
    `overrides` applied to every run; out: the output folder (default: the case's output.dir).
    Every run's case is loaded and validated here: a CaseError names the first bad one."""
    if isinstance(case, Case):
        path, base = case.path, {**flat_overrides(case.overrides), **flat_overrides(overrides)}
    else:
        path, base = case, flat_overrides(overrides)
    path = Path(path).absolute()
    axes = _axes(parameters)
    count = math.prod(len(values) for _, values in axes)
    if count > MAX_RUNS:
        raise CaseError(f"--set: {count:.3g} combinations, at most {MAX_RUNS} runs in a sweep")
    if out is not None:
        base["output.dir"] = str(out)
    first = load(path, base)
    folder = Path(first.data["output"]["dir"]).absolute()
    runs, keys, backends = [], set(), set()
    for combo in itertools.product(*[values for _, values in axes]):
        values = dict(zip([name for name, _ in axes], combo))
        keyed = {k: v for k, v in {**base, **values}.items() if k not in UNKEYED}
        key = run_key(first.text, keyed)
        if key in keys:  # a value listed twice: one run
            continue
        keys.add(key)
        name = f"{first.name}-{key}"
        overrides = {**keyed, "output.dir": str(folder), "case.name": name}
        # Validated now, so that a typo fails before the first run.
        backends.add(load(path, overrides).data["run"]["backend"])
        task = {"case": str(path), "overrides": overrides, "key": key, "name": name,
                "parameters": values, "keyed": keyed}
        runs.append(PlannedRun(key, name, values, keyed, task))
    return Plan(first.name, folder, runs, [name for name, _ in axes], backends)
