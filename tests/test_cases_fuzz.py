"""Fuzzing the command line with hostile case files, overrides and options (issue 18).

Every shipped case is mutated (keys dropped, duplicated, replaced; types changed; huge, tiny,
nan and inf numbers; expressions from a small grammar with the nasty ones; byte flips and
non-UTF-8; for the finite elements also a mutated mesh file from tests/mesh_mutations.py),
given fuzzed `--set` overrides and options, and run through `solvers.cli.main` on
the host backend with a tiny mesh, in a fresh folder whose output folder already holds a good
result of the same name. Whatever the input:
- the exit status is 0, 1 or 2 and no exception escapes (no traceback);
- stderr has at most 3 lines;
- no file outside the output folder is created or changed;
- a pre-existing file in the output folder is unchanged, unless the run succeeded and wrote
  its own result of that name (then a readable HDF5 file).

A bounded number of examples per run (FUZZ_EXAMPLES, default 60), derandomized so CI is
repeatable; raise FUZZ_EXAMPLES locally to search further.
"""

import contextlib
import io
import json
import math
import os
import re
import shutil
import signal
import tempfile
import tomllib
from pathlib import Path

import h5py
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from mesh_mutations import mutated_meshes

from solvers.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES = {path.stem: path for path in sorted((ROOT / "cases").glob("*.toml"))}
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
SECONDS_PER_RUN = 60  # a run over this is a hang (SIGALRM fails the example)
FE_SOLVERS = ("poisson", "heat", "elasticity")
SEEN = {}  # inputs tried: hypothesis repeats some, and each should count

NUMBERS = [0, -1, 1, 2, 3, 7, 2**31, 2**40, 2**63 - 1, -(2**63), 0.5, -0.5, 1e-320, 1e-30,
           1e30, -1e30, 1e308, math.nan, math.inf, -math.inf]
NASTY = ["1/0", "sin", "~x", "sin(1,2)", "sin(x, x)", "where()", "10**400", "9**9**9", "1e999",
         "(" * 300 + "x" + ")" * 300, "-" * 3000 + "x", "x+" * 3000 + "x", "__import__('os')",
         "x.real", "[1][0]", "lambda: 1", "'a'", "x if x else y", "q", "t", "log(x - x)",
         "sqrt(-1 - x)", "exp(1000 * x)", "arctan2(x)", "x\x00", "1" * 5000, "x ** y ** 1e10",
         "where(x < 0.5, 1/0, 1)", "maximum(x, y, x)", "abs(x)//0 % 0", "e ** 1000"]
ODD_VALUES = ["", "x", "wall", "periodic", "inflow", "rectangle", "fp16", "../../x", "\n", "é",
              [], [1], [0, 1e-320], [1, 2, 3], ["a"], [[0, 0], [0, 0], [0, 0], [0, 0]],
              {}, {"inflow": {}}, {"wall": "x"}, {"inflow": "y"}, {"inflow": [1, 2]},
              {"x": {"y": {}}}, True, False]


# --- expressions: a small grammar, and the nasty ones --------------------------------------

def expressions():
    leaves = st.one_of(st.sampled_from(["x", "y", "z", "t", "pi", "e", "q", "sin", "1", "0",
                                        "0.5", "2", "1e308", "1e-320", "10"]),
                       st.sampled_from(NASTY))
    functions = ["sin", "exp", "log", "sqrt", "where", "arctan2", "minimum", "abs", "tanh"]

    def extend(children):
        binary = st.tuples(children, st.sampled_from(
            ["+", "-", "*", "/", "**", "%", "//", "&", "|", "^", "<", "==", "<<"]), children)
        call = st.tuples(st.sampled_from(functions), st.lists(children, max_size=3))
        return st.one_of(binary.map(lambda b: f"({b[0]} {b[1]} {b[2]})"),
                         children.map(lambda c: f"-{c}"), children.map(lambda c: f"~{c}"),
                         call.map(lambda c: f"{c[0]}({', '.join(c[1])})"))
    return st.recursive(leaves, extend, max_leaves=8)


def rnd_free(text):
    """Whether an expression uses no name a case might not define (only x and numbers)."""
    return not re.search(r"\b(?!x\b)[a-wyz_]\w*", text.replace("e+", "").replace("e-", ""))


def values(like=None):
    """A hostile value, mostly of the kind of `like` (the value it replaces), so that many
    inputs get past the schema to the solvers."""
    anything = st.one_of(st.sampled_from(NUMBERS), st.sampled_from(ODD_VALUES), expressions())
    if isinstance(like, bool) or like is None:
        return anything
    if isinstance(like, int):
        typed = st.sampled_from(NUMBERS + [like * 2, like // 2, like + 1, like * 100])
    elif isinstance(like, float):
        typed = st.sampled_from(NUMBERS + [like * 2, like / 2, like * 10, like / 10, -like])
    elif isinstance(like, str):
        typed = st.one_of(expressions(), expressions().map(
            lambda other: f"{like} + {other}" if rnd_free(other) else f"({like}) * 2"))
    elif isinstance(like, list):
        typed = st.lists(st.one_of(st.sampled_from(NUMBERS), expressions()), max_size=4)
        if like and all(isinstance(v, list) for v in like):  # corners
            typed = st.lists(st.lists(st.sampled_from(NUMBERS), min_size=2, max_size=2),
                             min_size=4, max_size=4)
    else:
        typed = st.sampled_from(sorted(like) or ["k"]).flatmap(
            lambda key: values(like.get(key)).map(lambda value: {**like, key: value}))
    return st.one_of(typed, typed, typed, anything)


def extreme(like):
    """A value of the kind and sign of `like` but extreme: what passes the schema and reaches
    the solvers (tiny and huge scales, expressions scaled or made singular)."""
    if isinstance(like, bool):
        return st.just(not like)
    if isinstance(like, int):
        return st.sampled_from([1, 2, 3, like + 1, 2**31, 2**62])
    if isinstance(like, float):
        return st.sampled_from([like * f for f in (1e-300, 1e-30, 1e-6, 0.5, 2, 1e6, 1e30,
                                                   1e300)])
    if isinstance(like, str):
        return st.sampled_from([f"({like}) * 1e300", f"({like}) * 1e-300", f"({like}) / x",
                                f"where(x < 0.5, {like}, 1e-300)", f"({like}) ** 1e10",
                                f"sqrt({like} - 1)", like.upper(), like + "x"])
    if isinstance(like, list):
        if not like:
            return st.lists(st.sampled_from(NUMBERS), max_size=3)
        return st.one_of(st.lists(st.sampled_from(like), max_size=len(like) + 1),
                         *[extreme(v).map(lambda v, k=k: [*like[:k], v, *like[k + 1:]])
                           for k, v in enumerate(like)])
    return st.sampled_from(sorted(like) or ["k"]).flatmap(
        lambda key: extreme(like.get(key, 1.0)).map(lambda value: {**like, key: value}))


# --- TOML text of a case ---------------------------------------------------------------------

def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if value != value else "inf" if value == math.inf else \
            "-inf" if value == -math.inf else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_key(key):
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_text(data):
    top = [f"{toml_key(k)} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    tables = [f"[{toml_key(k)}]\n" + "".join(f"{toml_key(key)} = {toml_value(value)}\n"
                                             for key, value in v.items())
              for k, v in data.items() if isinstance(v, dict)]
    return "\n".join(top) + "\n" + "\n".join(tables)


def tiny(data):
    """The case on a tiny mesh, without a PNG; the final overrides that keep every run short
    (a time-dependent case stops after a few steps)."""
    mesh = data.get("mesh", {})
    for key in ("nx", "ny"):
        if key in mesh:
            mesh[key] = 8
    if isinstance(mesh.get("cells"), list):
        mesh["cells"] = [2] * len(mesh["cells"])
    data.setdefault("output", {})["plot"] = False
    steady = data["physics"]["solver"] in ("poisson", "elasticity")
    final = [] if steady else ["--set", "time.max_steps=2"]
    if "file" in mesh:  # a mesh of its own size: cap the solve (an rtol of 1e-300 is allowed)
        final += ["--set", "solver.maxiter=100"]
    return final


# --- mutations ---------------------------------------------------------------------------
# The shape of an input (how many mutations, of which kind) comes from `rnd`, a Random that
# hypothesis seeds, with the weights below; the values come from hypothesis strategies.

def mutate(data, rnd, draw, gentle):
    """Apply 0-3 data mutations (gentle: 1-2 extreme values of the right kind); returns the
    data."""
    for _ in range(rnd.choice([1, 1, 2] if gentle else [0, 1, 1, 1, 2, 3])):
        sections = [s for s in data if isinstance(data[s], dict)]
        if gentle:
            table = data[rnd.choice(sections)]
            key = rnd.choice([k for k in table if k != "solver"] or [None])
            if key is not None:
                table[key] = draw(extreme(table[key]))
            continue
        if not sections or rnd.random() < 0.03:
            data[rnd.choice(list(data) + ["bogus"])] = rnd.choice([1, "x", [], {}])
            continue
        table = data[rnd.choice(sections)]
        key = rnd.choice(list(table) or ["bogus_key"])
        if key == "solver" and rnd.random() < 0.8:
            continue  # a case of another solver fails at once; mostly keep the solver
        kind = rnd.choices(["replace", "drop", "duplicate", "bogus"], [80, 8, 8, 4])[0]
        if kind == "replace":
            table[key] = draw(values(table.get(key)))
        elif kind == "drop":
            table.pop(key, None)
        elif kind == "duplicate":
            table[key] = table[rnd.choice(list(table) or [key])] if table else 1
        else:
            table["bogus_key"] = 1
    return data


def mutate_bytes(raw, rnd):
    kind = rnd.choices(["none", "flip", "truncate", "latin1", "insert"], [90, 3, 3, 2, 2])[0]
    if kind == "none" or not raw:
        return raw
    at = rnd.randrange(len(raw))
    if kind == "flip":
        return raw[:at] + bytes([raw[at] ^ rnd.randrange(1, 256)]) + raw[at + 1:]
    if kind == "truncate":
        return raw[:at]
    if kind == "latin1":
        return raw.decode().encode("latin-1", "replace") + "# é\n".encode("latin-1")
    return raw[:at] + rnd.choice([b"\xff\xfe", b"\x00", b"[[[[", b"\n[x]\n"]) + raw[at:]


OVERRIDDEN = ["mesh.nx", "mesh.ny", "mesh.x", "time.end", "output.interval",
              "run.steps_per_graph", "physics.degree", "initial.rho", "initial.p", "initial.u",
              "initial.c", "source.f", "source.exact", "boundary.x_lo", "boundary.dirichlet",
              "solver.rtol", "pressure.rtol", "physics.gamma", "scheme.cfl", "case.name",
              "run.graph", "output.fields", "physics.nu", "physics.velocity", "time.dt",
              "mesh.cells", "mesh.y", "initial.constants", "material.default_young"]


def overrides(case, rnd, draw):
    """--set options: of the case's own keys or of OVERRIDDEN, some malformed."""
    own = [f"{section}.{key}" for section, table in case.items() if isinstance(table, dict)
           for key in table if key != "solver"]
    argv = []
    for _ in range(rnd.choice([0, 0, 0, 1, 1, 2])):
        if rnd.random() < 0.1:
            argv += ["--set", rnd.choice(["bogus.key=1", "nodot=1", "a.b.c=1", "=", "", "x",
                                          ".=1", "mesh.nx=[[[[", "case.name=a/b"])]
            continue
        text = draw(values().map(toml_value)) if rnd.random() < 0.9 else \
            rnd.choice(["", "[[[[", "nan", "inf", "1e999", '"', "{"])
        argv += ["--set", f"{rnd.choice(own if own and rnd.random() < 0.7 else OVERRIDDEN)}"
                          f"={text}"]
    return argv


def options(rnd):
    argv = []
    if rnd.random() < 0.3:
        argv += ["--precision", rnd.choice(["fp32", "fp64"] * 5 + ["fp16"])]
    if rnd.random() < 0.3:
        argv.append("--no-graph")
    if rnd.random() < 0.05:
        argv.append(rnd.choice(["--bogus", "--backend=gpu", "--restart", "--version"]))
    return argv


# --- running and checking ---------------------------------------------------------------------

def _alarm(signum, frame):
    raise AssertionError(f"a run took over {SECONDS_PER_RUN} s (a hang)")


def run_cli(argv, cwd):
    """(exit status, stderr) of main(argv) run in `cwd`; an exception escaping main fails."""
    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                contextlib.chdir(cwd):
            try:
                code = main(argv)
            except SystemExit as exit_:
                code = exit_.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


def tree(root, skip):
    """{relative path: bytes (None for a folder)} of everything under root but `skip`."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path == skip or skip in path.parents:
            continue
        out[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return out


@pytest.fixture(scope="module")
def good_result(tmp_path_factory):
    """A complete result file (sod on a small grid)."""
    out = tmp_path_factory.mktemp("good")
    code, err = run_cli(["run", str(CASES["sod"]), "--backend", "host", "--quiet", "--out",
                         str(out), "--set", "mesh.nx=16", "--set", "output.plot=false"], out)
    assert code == 0, err
    return out / "sod.h5"


@pytest.fixture(scope="module")
def hostile_meshes(tmp_path_factory):
    """Mesh files emptied, truncated, byte-flipped, with broken connectivity (~150)."""
    return Files(sorted(mutated_meshes(tmp_path_factory.mktemp("meshes"))))


class Files(tuple):
    def __repr__(self):  # short, in a failure's report
        return f"<{len(self)} files>"


# No shrinking: a failure's message holds the whole command line, which is enough to rerun it.
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(st.data())
def test_hostile_case_files_overrides_and_options(good_result, hostile_meshes, data):
    draw = data.draw
    rnd = draw(st.randoms(use_true_random=True))
    name = rnd.choice(sorted(CASES))
    case = tomllib.loads(CASES[name].read_text())
    mesh_file = None
    if case["physics"]["solver"] in FE_SOLVERS and rnd.random() < 0.15:
        mesh_file = rnd.choice(hostile_meshes)  # a mutated mesh file (tests/mesh_mutations.py)
        case["mesh"] = {"file": f"../meshes/{mesh_file.name}"}
    final = tiny(case)
    gentle = rnd.random() < 0.5  # values that pass the schema, to reach the solvers
    raw = toml_text(mutate(case, rnd, draw, gentle)).encode()
    command = "sweep" if rnd.random() < 0.1 else "run"
    argv = [command, ""]
    if not gentle:
        raw = mutate_bytes(raw, rnd)
        argv += [*options(rnd), *overrides(case, rnd, draw)]
    if command == "sweep":
        argv += ["--set", rnd.choice(["scheme.cfl=0.4,0.5", "physics.nu=0.1,-1",
                                      "time.end=1,nan", "mesh.nx=8,9"])]
    assume(SEEN.setdefault((name, raw, tuple(argv)), len(SEEN)) == len(SEEN) - 1)  # new ones
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "cases").mkdir()
        shutil.copytree(ROOT / "meshes", root / "meshes")  # a case's mesh file is relative
        if mesh_file is not None:
            shutil.copy(mesh_file, root / "meshes")
        case_file = root / "cases" / f"{name}.toml"
        case_file.write_bytes(raw)
        out = root / "out"
        out.mkdir()
        good = good_result.read_bytes()
        earlier = {f"{name}.h5": good, f"{name}.xdmf": b"<Xdmf/>\n", "other.h5": good}
        for file, content in earlier.items():
            (out / file).write_bytes(content)
        (root / "work").mkdir()
        argv[1] = str(case_file)
        argv += ["--backend", "host", "--quiet", "--out", str(out), *final]
        before = tree(root, out)

        why = f"solvers {' '.join(argv)}\nwith the case file {raw[:4000]!r}"
        try:
            code, err = run_cli(argv, root / "work")
        except BaseException as error:  # a hang or a traceback: say what ran
            raise AssertionError(f"{type(error).__name__}: {error}\n{why}") from error

        lines = err.strip().splitlines()
        assert code in (0, 1, 2), (code, err, why)
        assert "Traceback" not in err and len(lines) <= 3, (err, why)
        assert tree(root, out) == before, why
        for file, content in earlier.items():
            if (out / file).read_bytes() != content:
                assert code == 0 and file in (f"{name}.h5", f"{name}.xdmf"), (file, err, why)
                if file.endswith(".h5"):
                    with h5py.File(out / file) as written:  # the run's own complete result
                        assert "fields" in written
