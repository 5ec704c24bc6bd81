"""Case files: every shipped case validates, overrides apply, and bad input gives one-line
errors that name the file, line, section and key."""

from pathlib import Path

import pytest

from solvers.cases import CaseError, load
from solvers.expressions import ExpressionError, evaluate

CASES = sorted(Path(__file__).parent.parent.joinpath("cases").glob("*.toml"))

SOD = """\
[physics]
solver = "euler"

[mesh]
nx = 50

[initial]
rho = "where(x < 0.5, 1.0, 0.125)"
p = "where(x < 0.5, 1.0, 0.1)"

[boundary]
x_lo = "transmissive"
x_hi = "transmissive"

[time]
end = 0.2
"""


def write(tmp_path, text, name="case.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_shipped_cases_validate(path):
    assert load(path).name == path.stem


def test_defaults_and_overrides(tmp_path):
    path = write(tmp_path, SOD)
    case = load(path)
    assert case.data["scheme"]["limiter"] == "mc" and case.data["run"]["precision"] == "fp32"
    case = load(path, {"mesh.nx": 80, "scheme": {"limiter": "minmod"}})
    assert case.data["mesh"]["nx"] == 80 and case.data["scheme"]["limiter"] == "minmod"


@pytest.mark.parametrize("edit, overrides, message", [
    (("nx = 50", "nx = 50.5"), {}, r"case.toml:5: \[mesh\] nx: expected an integer, got 50.5"),
    (("nx = 50", "nx = 1"), {}, r"case.toml:5: \[mesh\] nx: expected a value >= 2, got 1"),
    (("[time]", "[time]\nstart = 0"), {}, r"case.toml:16: \[time\] start: unknown key"),
    (("[time]", "[tiem]"), {}, r"case.toml:15: \[tiem\]: unknown section"),
    (("end = 0.2", ""), {}, r"case.toml:15: \[time\]: missing required key 'end'"),
    (("", ""), {"scheme.limiter": "mm"},
     r"--set scheme.limiter: expected one of minmod, van_leer, mc, got 'mm'"),
    (('x_hi = "transmissive"', 'x_hi = "wall"'), {},
     r"case.toml:13: \[boundary\] x_hi: expected periodic, transmissive, reflective"),
    (('x_hi = "transmissive"', 'x_hi = "periodic"'), {},
     r"\[boundary\] x_lo: periodic must be set on both x_lo and x_hi"),
    (('p = "where(x < 0.5, 1.0, 0.1)"', 'p = "where(x < 0.5, 1.0, -0.1)"'), {},
     r"case.toml:9: \[initial\] p: must be > 0 in every cell"),
    (('p = "where(x < 0.5, 1.0, 0.1)"', 'p = "sinn(x)"'), {},
     r"case.toml:9: \[initial\] p: 'sinn\(x\)': unknown function"),
    (('p = "where(x < 0.5, 1.0, 0.1)"', 'p = "xx + 1"'), {},
     r"\[initial\] p: 'xx \+ 1': unknown name 'xx' "
     r"\(known: deposit, dx, dy, dz, e, gamma, pi, x, y, z\)"),
    (('solver = "euler"', 'solver = "navier"'), {},
     r"case.toml:2: \[physics\] solver: expected solver one of (\w+, )*euler, .*got 'navier'"),
    (("", ""), {"initial.vy": 1.0}, r"--set initial.vy: a 1D grid has no y velocity"),
    (("", ""), {"scheme.cfl": 1.5}, r"--set scheme.cfl: expected a value in \(0, 1\]"),
    (("", ""), {"case.name": "a b"}, r"--set case.name: expected letters, digits"),
])
def test_errors_name_file_line_and_key(tmp_path, edit, overrides, message):
    path = write(tmp_path, SOD.replace(*edit) if edit[0] else SOD)
    with pytest.raises(CaseError, match=message) as error:
        load(path, overrides)
    assert "\n" not in str(error.value)


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(CaseError, match=r"nope.toml: case file not found"):
        load(tmp_path / "nope.toml")
    with pytest.raises(CaseError, match=r"bad.toml: invalid TOML"):
        load(write(tmp_path, "[mesh\nnx = 1", "bad.toml"))


def test_expressions_evaluate_and_refuse_code():
    assert evaluate("2 * pi", {}) == pytest.approx(6.283185307179586)
    assert evaluate("where(x < 1, 3, 4)", {"x": 0.5}) == 3
    for text in ("__import__('os')", "x.real", "[1, 2][0]", "lambda: 1", "'a'"):
        with pytest.raises(ExpressionError):
            evaluate(text, {"x": 1.0})
