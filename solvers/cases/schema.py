"""Case files: TOML, validated against a schema, with overrides from the CLI or Python.

Every error is a CaseError whose message is one line naming the file, line, section and key
and what was expected, e.g.
    cases/sod.toml:14: [scheme] limiter: expected one of minmod, van_leer, mc, got 'mm'
The sections common to all solvers are defined here; each solver's adapter module adds its own
(solvers/cases/<solver>.py, found by loader.py).
"""

import copy
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path


class CaseError(ValueError):
    """Invalid case input; the message is one line."""


REQUIRED = object()


@dataclass(frozen=True)
class Key:
    """One case-file key: its kind, default (REQUIRED if none), and constraints."""

    kind: str  # int, float, bool, str, choice, range, list_str, list_int, table_float, expr,
    # any
    default: object = REQUIRED
    choices: tuple = ()
    minimum: float = None
    exclusive_minimum: bool = False
    help: str = ""
    maximum: float = None
    exclusive_maximum: bool = False


COMMON_SECTIONS = {
    "case": {
        "name": Key("str", None, help="run name: output files are DIR/NAME.h5, .xdmf, .png "
                    "(default: the case file's stem)"),
        "description": Key("str", "", help="free text, stored in the output"),
    },
    "physics": {
        "solver": Key("choice", REQUIRED, help="which solver runs (the names of the adapters "
                      "in solvers/cases/)"),
    },
    "time": {
        "end": Key("float", REQUIRED, minimum=0, exclusive_minimum=True,
                   help="simulated end time"),
        "max_steps": Key("int", None, minimum=1, help="stop with an error after this many steps "
                         "(checked between graph replays)"),
    },
    "output": {
        "dir": Key("str", "out", help="output folder (relative to the working directory)"),
        "interval": Key("float", 0.0, minimum=0,
                        help="simulated time between snapshots (0: initial and final only)"),
        "fields": Key("list_str", None, help="fields to write (default: all the solver has)"),
        "plot": Key("bool", True, help="write NAME.png of the final state"),
        "plot_fields": Key("list_str", None, help="fields in the PNG (default: all written)"),
        "checkpoint_interval": Key("float", 0.0, minimum=0, help="simulated time between "
                                   "checkpoints DIR/NAME.checkpoint.h5, the state a run restarts "
                                   "from (`solvers run --restart`); 0: none"),
        "checkpoint_wall_seconds": Key("float", 0.0, minimum=0, help="wall-clock seconds "
                                       "between checkpoints (also); 0: none"),
    },
    "run": {
        "backend": Key("choice", "auto", choices=("auto", "cuda", "host"),
                       help="auto: cuda if a GPU is available, else host"),
        "precision": Key("choice", "fp32", choices=("fp32", "fp64"), help="floating type"),
        "graph": Key("bool", True, help="replay captured CUDA graphs (false: eager launches)"),
        "steps_per_graph": Key("int", 20, minimum=1, maximum=10000,
                               help="time steps per graph replay (the host checks the clock "
                               "between replays), at most 10000"),
        "decomposition": Key("list_int", [], help="under mpiexec: the process grid, ranks "
                             "along x, y (, z) (empty: chosen from the rank count and the "
                             "grid)"),
        "halo_exchange": Key("choice", "auto", choices=("auto", "nccl", "host"),
                             help="under mpiexec: how blocks swap halos (auto: NCCL inside the "
                             "step graph where every rank has a GPU of its own, else host: "
                             "MPI through page-locked host memory; nccl on the host backend: "
                             "MPI calls as launches in the graph)"),
    },
}


@dataclass
class Case:
    """A validated case: `data[section][key]` holds every key, defaults filled in."""

    path: Path
    text: str
    data: dict
    adapter: object
    locator: object
    overrides: dict = None  # as given to load(): {'section.key': value} or {section: {...}}

    @property
    def name(self) -> str:
        return self.data["case"]["name"]

    def __repr__(self):
        return f"<Case {self.name}: {self.data['physics']['solver']} from {self.path}>"

    def error(self, section, key, message):
        """A CaseError about a key: 'file:line: [section] key: message'."""
        return CaseError(f"{self.locator.at(section, key)}: {message}")


class _Locator:
    """Finds the line of `key` in `[section]` of the case text, for error messages."""

    def __init__(self, path, text, overridden):
        self.path = path
        self.lines = text.splitlines()
        self.overridden = overridden

    def at(self, section, key=None):
        label = f"[{_plain(section)}]" + (f" {_plain(key)}" if key else "")
        if key and f"{section}.{key}" in self.overridden:
            return f"--set {_plain(section)}.{_plain(key)}"
        current, header_line = None, None
        for number, line in enumerate(self.lines, 1):
            stripped = line.strip()
            header = re.match(r"^\[\s*([\w.]+)\s*\]", stripped)
            if header:
                current = header.group(1)
                if current == section:
                    header_line = number
            elif current == section and key and re.match(rf"^{re.escape(key)}\s*=", stripped):
                return f"{self.path}:{number}: {label}"
        if header_line and not key:
            return f"{self.path}:{header_line}: {label}"
        return f"{self.path}: {label}"


def _plain(name):
    """A section or key name for a message: as it is if plain, else its short repr."""
    return name if re.fullmatch(r"[\w.-]{1,40}", str(name)) else short(name, 40)


def parse_override(text):
    """'section.key=value' -> ('section', 'key', value); value parsed as TOML, else a string."""
    if "=" not in text:
        raise CaseError(f"--set {text}: expected section.key=value")
    path, raw = text.split("=", 1)
    parts = path.strip().split(".")
    if len(parts) != 2 or not all(parts):
        raise CaseError(f"--set {text}: expected section.key=value (e.g. mesh.nx=200)")
    return parts[0], parts[1], parse_value(raw)


def parse_value(raw):
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return raw.strip()


def _check_value(spec, value, where):
    """The validated value, or a CaseError saying what was expected."""
    def fail(expected):
        return CaseError(f"{where}: expected {expected}, got {short(value)}")

    kind = spec.kind
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an integer")
    elif kind == "float":
        if not _finite(value):
            raise fail("a finite number")
        value = float(value)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise fail("true or false")
    elif kind == "str":
        if not isinstance(value, str):
            raise fail("a string")
    elif kind == "choice":
        if not any(type(value) is type(c) and value == c for c in spec.choices):
            raise fail(f"one of {', '.join(str(c) for c in spec.choices)}")
    elif kind == "range":
        if (not isinstance(value, list) or len(value) != 2 or not all(map(_finite, value))
                or not value[1] > value[0]):
            raise fail("[lo, hi] with lo < hi")
        lo, hi = float(value[0]), float(value[1])
        if max(abs(lo), abs(hi)) > RANGE_BOUND or hi - lo < max(
                RANGE_BOUND ** -1, 1e-9 * max(abs(lo), abs(hi))):
            raise fail(f"[lo, hi] within +-{RANGE_BOUND:g} and hi - lo at least 1e-9 max(|lo|, "
                       f"|hi|) and {RANGE_BOUND ** -1:g} (cell sizes, their squares and "
                       "inverses finite)")
        value = (lo, hi)
    elif kind == "list_str":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or not value:
            raise fail("a non-empty list of strings")
    elif kind == "list_int":
        if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
            raise fail("a list of positive integers")
    elif kind == "expr":
        if not isinstance(value, str) and not _finite(value):
            raise fail("a finite number or an expression string")
    elif kind == "table_float":
        if not isinstance(value, dict) or not all(map(_finite, value.values())):
            raise fail("a table of finite numbers")
    if spec.minimum is not None and kind in ("int", "float"):
        if value < spec.minimum or (spec.exclusive_minimum and value == spec.minimum):
            relation = ">" if spec.exclusive_minimum else ">="
            raise fail(f"a value {relation} {spec.minimum:g}")
    if spec.maximum is not None and kind in ("int", "float"):
        if value > spec.maximum or (spec.exclusive_maximum and value == spec.maximum):
            raise fail(f"a value {'<' if spec.exclusive_maximum else '<='} {spec.maximum:g}")
    return value


RANGE_BOUND = 1e100


def _finite(value):
    """A TOML number (not a boolean) that is finite."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def short(value, limit=60):
    """repr(value) for a one-line message: at most `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def validate(data, schema, locator):
    """Check every section and key of `data` against `schema`; fill defaults."""
    out = {}
    for section in data:
        if section not in schema:
            raise CaseError(f"{locator.at(section)}: unknown section (expected one of "
                            f"{', '.join(schema)})")
        if not isinstance(data[section], dict):
            raise CaseError(f"{locator.at(section)}: expected a table [{section}]")
    for section, keys in schema.items():
        given = data.get(section, {})
        for key in given:
            if key not in keys:
                raise CaseError(f"{locator.at(section, key)}: unknown key (expected one of "
                                f"{', '.join(keys)})")
        out[section] = {}
        for key, spec in keys.items():
            if key in given:
                out[section][key] = _check_value(spec, given[key], locator.at(section, key))
            elif spec.default is REQUIRED:
                raise CaseError(f"{locator.at(section)}: missing required key '{key}'")
            else:
                out[section][key] = copy.deepcopy(spec.default)
    return out


def _merge(data, overrides):
    """Apply {section: {key: value}} and {'section.key': value} overrides; returns the set of
    'section.key' names that were overridden."""
    touched = set()
    for name, value in overrides.items():
        if "." in name:
            section, key = name.split(".", 1)
            items = {key: value}
        elif isinstance(value, dict):
            section, items = name, value
        else:
            raise CaseError(f"override {name}={short(value)}: expected section.key=value or "
                            "section={key: value}")
        data.setdefault(section, {})
        if not isinstance(data[section], dict):
            raise CaseError(f"override {name}: [{section}] is not a table")
        for key, item in items.items():
            data[section][key] = item
            touched.add(f"{section}.{key}")
    return touched
