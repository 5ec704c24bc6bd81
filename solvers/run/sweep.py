"""`solvers sweep`: run the cartesian product of case values and tabulate the results.

Every combination is validated before the first run, so a typo fails at once. Run k is named
<case name>-<k> (three digits) and writes its usual files; the summary table
<out>/<case name>-sweep.csv is rewritten atomically after each run, so an interrupted sweep
keeps the rows of the runs that finished.
"""

import csv
import itertools
import math
import os
import sys
from pathlib import Path

from ..cases import CaseError, load, parse_override, parse_value
from ..solver import RunError
from .progress import progress_for
from .runner import CaseRun

MAX_RUNS = 10_000


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


def sweep_axes(sets):
    """--set options as [('section.key', [values...]), ...]."""
    axes = []
    for text in sets:
        section, key, _ = parse_override(text)
        raw = text.split("=", 1)[1]
        values = [parse_value(v) for v in split_values(raw)]
        if any(v == "" for v in values):
            raise CaseError(f"--set {text}: empty value in the list")
        axes.append((f"{section}.{key}", values))
    return axes


def _write_csv(path, rows):
    columns = list(dict.fromkeys(key for row in rows for key in row))
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def run_sweep(case_path, sets, base_overrides, quiet=False):
    axes = sweep_axes(sets)
    names = [name for name, _ in axes]
    count = math.prod(len(values) for _, values in axes)
    if count > MAX_RUNS:
        raise CaseError(f"--set: {count:.3g} combinations, at most {MAX_RUNS} runs in a sweep")
    combos = list(itertools.product(*[values for _, values in axes]))
    base_name = load(case_path, base_overrides).name
    cases = []
    for k, combo in enumerate(combos):
        values = dict(zip(names, combo))
        overrides = {**base_overrides, **values, "case.name": f"{base_name}-{k:03d}"}
        cases.append((values, load(case_path, overrides)))

    out_dir = Path(cases[0][1].data["output"]["dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    table = out_dir / f"{base_name}-sweep.csv"
    rows, failures, first_failure = [], 0, None
    for k, (values, case) in enumerate(cases):
        row = {"run": case.name, **values}
        if not quiet:
            print(f"[{k + 1}/{len(cases)}] {case.name}: "
                  + ", ".join(f"{n}={v}" for n, v in values.items()), file=sys.stderr)
        try:
            run = CaseRun(case)
            result = run.run(progress=progress_for(run, quiet))
            row.update(status="ok", wall_seconds=round(result.wall_seconds, 4),
                       **run.solver.report(result).figures, output=str(result.files[0]))
        except (RunError, CaseError) as error:
            failures += 1
            first_failure = first_failure or f"{case.name}: {error}"
            row.update(status=f"failed: {error}")
        rows.append(row)
        _write_csv(table, rows)
    if not quiet:
        print(f"sweep: {len(rows) - failures} of {len(rows)} runs ok; table {table}")
    if failures:  # on stderr, --quiet or not: the exit status alone does not say why
        print(f"solvers: sweep: {failures} of {len(rows)} runs failed (the first, "
              f"{first_failure}); table {table}", file=sys.stderr)
    return 1 if failures else 0
