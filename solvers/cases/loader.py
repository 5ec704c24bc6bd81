"""Reading a case file: TOML, overrides, the solver's adapter, validation.

An adapter is a module of this package that names the solver class it builds (`SOLVER`) and
has `SECTIONS` (its case-file sections: a solver's section replaces the common one of that
name; None drops it), `check(case)` (everything that can be checked before a backend exists)
and `build(case)` (the solver with its initial state). A new solver's adapter is found by its
file alone: no table here lists them.
"""

import pkgutil
import re
import stat
import tomllib
from dataclasses import replace
from functools import cache
from importlib import import_module
from pathlib import Path

from .bounds import check_times
from .schema import COMMON_SECTIONS, Case, CaseError, _Locator, _merge, short, validate


@cache
def adapters():
    """{solver name: adapter module} of every adapter in this package."""
    found = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        module = import_module(f"{__package__}.{info.name}")
        solver = getattr(module, "SOLVER", None)
        if solver is not None:
            found[solver.name] = module
    return dict(sorted(found.items()))


def solver_class(name):
    """The solver class called `name`: the SOLVER of its adapter."""
    known = adapters()
    if name not in known:
        raise ValueError(f"no solver named '{name}' (known: {', '.join(known)})")
    return known[name].SOLVER


def schema_of(adapter):
    """The sections of a case of this adapter's solver: the common ones, replaced or dropped
    by the adapter's, and physics.solver naming every known solver."""
    sections = {**COMMON_SECTIONS, **adapter.SECTIONS}
    schema = {name: dict(keys) for name, keys in sections.items() if keys is not None}
    common_physics = COMMON_SECTIONS["physics"]
    solver_key = replace(common_physics["solver"], choices=tuple(adapters()))
    schema["physics"] = {**common_physics, "solver": solver_key,
                         **adapter.SECTIONS.get("physics", {})}
    return schema


MAX_CASE_BYTES = 4 * 2**20


def _read(path):
    """The text of a case file: a regular file (not a FIFO or device) of at most
    MAX_CASE_BYTES, in UTF-8."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise CaseError(f"{path}: not a regular file (a case file is a .toml file)")
        with open(path, "rb") as stream:
            data = stream.read(MAX_CASE_BYTES + 1)
    except FileNotFoundError:
        raise CaseError(f"{path}: case file not found") from None
    except OSError as error:
        raise CaseError(f"{path}: cannot read case file ({error.strerror})") from None
    if len(data) > MAX_CASE_BYTES:
        raise CaseError(f"{path}: larger than {MAX_CASE_BYTES // 2**20} MB; not a case file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CaseError(f"{path}: not UTF-8 text (byte {error.start}); a case file is TOML, "
                        "in UTF-8") from None


def load(path, overrides=None):
    """Read, override and validate a case file; returns a Case."""
    path = Path(path)
    text = _read(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CaseError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise CaseError(f"{path}: invalid TOML: nested too deeply") from None
    touched = _merge(data, overrides or {})
    locator = _Locator(path, text, touched)

    known = adapters()
    physics = data.get("physics")
    solver = physics.get("solver") if isinstance(physics, dict) else None
    if not isinstance(solver, str) or solver not in known:
        where = locator.at("physics", "solver") if solver is not None else locator.at("physics")
        raise CaseError(f"{where}: expected solver one of {', '.join(known)}, got "
                        f"{short(solver)}")
    adapter = known[solver]
    validated = validate(data, schema_of(adapter), locator)
    if validated["case"]["name"] is None:
        validated["case"]["name"] = path.stem
    if not re.fullmatch(r"[\w.-]{1,200}", validated["case"]["name"]):
        raise CaseError(f"{locator.at('case', 'name')}: expected letters, digits, '.', '_' or "
                        f"'-' (it names the output files), got {short(validated['case']['name'])}")
    case = Case(path=path, text=text, data=validated, adapter=adapter, locator=locator,
                overrides=dict(overrides or {}))
    check_times(case)
    adapter.check(case)
    return case
