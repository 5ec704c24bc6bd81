"""The case-file reference of docs/case-files.md, generated from the schemas (a test keeps the
file in step): `python -m solvers.cases.reference` prints it."""

from .loader import adapters
from .schema import COMMON_SECTIONS, REQUIRED

KIND_NAMES = {"int": "integer", "float": "number", "bool": "true/false", "str": "string",
              "choice": "one of", "range": "[lo, hi]", "list_str": "list of strings",
              "list_int": "list of integers",
              "table_float": "table of numbers", "expr": "number or expression", "any": "see text"}


def _default(spec):
    if spec.default is REQUIRED:
        return "required"
    if spec.default is None:
        return "-"
    if isinstance(spec.default, bool):
        return str(spec.default).lower()
    if isinstance(spec.default, str):
        return f'"{spec.default}"'
    if isinstance(spec.default, tuple):
        return "[" + ", ".join(f"{v:g}" for v in spec.default) + "]"
    return f"{spec.default}" if spec.default != {} else "{}"


def _kind(spec):
    if spec.kind == "choice":
        return " / ".join(f"`{c}`" for c in spec.choices) or "one of the solvers"
    return KIND_NAMES[spec.kind]


def section_table(title, keys):
    lines = [f"#### `[{title}]`", "", "| key | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{key}` | {_kind(spec)} | {_default(spec)} | {spec.help} |"
              for key, spec in keys.items()]
    return "\n".join(lines) + "\n"


def reference():
    parts = ["### Sections of every case", ""]
    parts += [section_table(name, keys) for name, keys in COMMON_SECTIONS.items()]
    for solver, adapter in adapters().items():
        parts += [f"### Sections of `solver = \"{solver}\"`", ""]
        parts += [section_table(name, keys) for name, keys in adapter.SECTIONS.items()
                  if keys is not None]
        dropped = [name for name, keys in adapter.SECTIONS.items() if keys is None]
        if dropped:
            parts += ["No " + ", ".join(f"`[{name}]`" for name in dropped) + " section.", ""]
    return "\n".join(parts)


if __name__ == "__main__":
    print(reference(), end="")
