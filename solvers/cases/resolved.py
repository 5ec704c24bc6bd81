"""The resolved case: validated case data (every override and default applied) written back as
TOML, so that a run file records exactly what ran. Loading the text gives the same validated
data (keys whose value is None, an unset optional, are left out and come back as defaults).

    text = dumps(case.data)          # [case] name = "sod" ...
"""

import datetime
import json
import math
import re

BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
# Characters a TOML basic string must escape: ", \ and the control characters except tab.
ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text):
    out = []
    for char in text:
        if char in ESCAPES:
            out.append(ESCAPES[char])
        elif (ord(char) < 0x20 and char != "\t") or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key(key):
    key = str(key)
    return key if BARE_KEY.match(key) else _string(key)


def _value(value):
    """A TOML value: strings, booleans, numbers (inf and nan too), dates, arrays and inline
    tables (None inside an array or table has no TOML form: a ValueError)."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{" + ", ".join(items) + "}" if items else "{}"
    raise ValueError(f"no TOML form for {type(value).__name__} {value!r}")


def dumps(data):
    """TOML text of {section: {key: value}}; keys whose value is None are left out."""
    lines = []
    for section, keys in data.items():
        lines.append(f"[{_key(section)}]")
        for key, value in keys.items():
            if value is not None:
                lines.append(f"{_key(key)} = {_value(value)}")
        lines.append("")
    return "\n".join(lines)


def flat_overrides(overrides):
    """Overrides in either form load() takes ({section: {key: value}} or {'section.key':
    value}) as {'section.key': value}."""
    flat = {}
    for name, value in (overrides or {}).items():
        if "." not in name and isinstance(value, dict):
            flat.update({f"{name}.{key}": item for key, item in value.items()})
        else:
            flat[name] = value
    return flat


def overrides_json(overrides):
    """The overrides as JSON {'section.key': value}, whichever form they were given in."""
    return json.dumps(flat_overrides(overrides), default=str)
