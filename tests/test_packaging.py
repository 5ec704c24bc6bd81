"""The package as a user installs it: the wheel carries the kernels, the shipped cases and
meshes inside `solvers` (no top-level `raw_kernels`), the license and py.typed, under a
distribution name of its own; installed away from the checkout it lists its cases, copies one
with its mesh and runs it; `solvers --version` and `python -m solvers` work; `solvers cases`
errors are one line.

The wheel is built once per session, without build isolation (no network), from a copy of the
files the build reads, and installed with `pip install --target`; commands then run with only
that folder on PYTHONPATH, from a folder outside the repository."""

import configparser
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from solvers._metadata import DISTRIBUTION
from solvers.cases.shipped import copy_case, shipped_cases
from solvers.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUILD_INPUTS = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "LICENSE", "solvers",
                "raw_kernels", "cases", "meshes")
CONFIG = configparser.ConfigParser()
CONFIG.read(ROOT / "setup.cfg")
VERSION = CONFIG["metadata"]["version"]
CASE_NAMES = sorted(path.stem for path in (ROOT / "cases").glob("*.toml"))


def _pip(*args, cwd):
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, env=env, check=True,
                   capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the build's inputs (nothing written into the checkout)."""
    top = tmp_path_factory.mktemp("wheel")
    source = top / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    _pip("wheel", ".", "--no-deps", "--no-build-isolation", "-w", str(top / "dist"), cwd=source)
    (path,) = (top / "dist").glob("*.whl")
    return path


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory):
    """The wheel installed into a folder of its own."""
    target = tmp_path_factory.mktemp("site")
    _pip("install", "--no-deps", "--no-compile", "--target", str(target), str(wheel),
         cwd=target)
    return target


@pytest.fixture
def installed(site, tmp_path):
    """Run a command against the installed package from a folder outside the repository."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PYTHONSAFEPATH", None)

    def run(*args, check=True):
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
        if check:
            assert done.returncode == 0, done.stderr
        return done

    run.cwd = tmp_path
    return run


def test_the_wheel_holds_one_package_with_kernels_cases_meshes_and_license(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert wheel.name == f"{DISTRIBUTION.replace('-', '_')}-{VERSION}-py3-none-any.whl"
    assert {name.split("/")[0] for name in names} == {
        "solvers", f"{DISTRIBUTION.replace('-', '_')}-{VERSION}.dist-info"}
    kernels = {str(p.relative_to(ROOT / "raw_kernels")) for p in (ROOT / "raw_kernels").rglob("*")
               if p.suffix in (".cu", ".h")}
    assert {f"solvers/_kernels/{k}" for k in kernels} <= set(names) and len(kernels) > 20
    assert {f"solvers/_data/cases/{c}.toml" for c in CASE_NAMES} <= set(names)
    assert "solvers/_data/meshes/heated_block.msh" in names
    assert "solvers/py.typed" in names and "solvers/__main__.py" in names
    info = f"{DISTRIBUTION.replace('-', '_')}-{VERSION}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert f"Name: {DISTRIBUTION}\n" in metadata and "License: MIT" in metadata
    for requirement in ("matplotlib>=3.7", "numpy", "scipy", "h5py", "meshio"):
        assert f"Requires-Dist: {requirement}" in metadata  # every shipped case runs
    assert "Requires-Dist: pyamg>=5; extra == \"test\"" in metadata  # a cross-check only
    assert "Provides-Extra: cuda12" in metadata and "Provides-Extra: cuda13" in metadata


def test_the_distribution_name_is_not_the_taken_one():
    assert CONFIG["metadata"]["name"] == DISTRIBUTION != "solvers"
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "the solvers developers" in (ROOT / "LICENSE").read_text()


def test_installed_package_finds_its_kernels_and_cases_inside_itself(installed, site):
    out = installed(sys.executable, "-c", "import solvers\n"
                    "from solvers.backend.source import kernel_dir\n"
                    "from solvers.cases.shipped import data_dir\n"
                    "print(solvers.__file__, kernel_dir(), data_dir(), solvers.__version__)\n"
                    "import importlib.util\n"
                    "print(importlib.util.find_spec('raw_kernels'))").stdout.split()
    package = site / "solvers"
    assert out == [str(package / "__init__.py"), str(package / "_kernels"),
                   str(package / "_data"), VERSION, "None"]


def test_version_and_python_m_solvers(installed, site, capsys):
    assert installed(sys.executable, "-m", "solvers", "--version").stdout == f"solvers {VERSION}\n"
    script = site / "bin" / "solvers"  # the console script pip wrote
    assert installed(str(script), "--version").stdout == f"solvers {VERSION}\n"
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("solvers ")


def test_installed_cases_are_listed_copied_and_run(installed):
    listing = installed(sys.executable, "-m", "solvers", "cases").stdout.splitlines()
    assert [line.split()[0] for line in listing] == CASE_NAMES
    sod = next(line for line in listing if line.startswith("sod "))
    assert sod.split(None, 1)[1] == tomllib.loads(
        (ROOT / "cases" / "sod.toml").read_text())["case"]["description"]

    for name in ("sod", "poisson_block"):
        copied = installed(sys.executable, "-m", "solvers", "cases", "copy", name, "mine")
        assert f"solvers run mine/{name}.toml" in copied.stdout
    assert (installed.cwd / "mine" / "heated_block.msh").is_file()
    installed(sys.executable, "-m", "solvers", "run", "mine/sod.toml", "--backend", "host",
              "--set", "mesh.nx=32", "--out", "out", "--quiet")
    installed(sys.executable, "-m", "solvers", "run", "mine/poisson_block.toml", "--backend",
              "host", "--out", "out", "--quiet")  # AMG, without pyamg
    for name in ("sod", "poisson_block"):
        for suffix in (".h5", ".xdmf", ".png"):
            assert (installed.cwd / "out" / f"{name}{suffix}").is_file()


def test_cases_copy_errors_are_one_line(tmp_path, capsys):
    assert main(["cases", "copy", "poisson_block", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.startswith(f"copied {tmp_path / 'a' / 'poisson_block.toml'}, ")
    before = (tmp_path / "a" / "poisson_block.toml").read_text()
    assert main(["cases", "copy", "poisson_block", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert err == (f"solvers: error: {tmp_path / 'a' / 'poisson_block.toml'}: already exists "
                   "(not overwritten)\n")
    assert (tmp_path / "a" / "poisson_block.toml").read_text() == before
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "heated_block.msh").write_text("mine")  # a mesh in the way: nothing copied
    assert main(["cases", "copy", "poisson_block", str(tmp_path / "b")]) == 2
    assert "heated_block.msh: already exists" in capsys.readouterr().err
    assert not (tmp_path / "b" / "poisson_block.toml").exists()
    assert main(["cases", "copy", "nope", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("solvers: error: no shipped case named 'nope' (known: advection_")
    assert err.count("\n") == 1 and not (tmp_path / "c").exists()


def test_a_copied_case_reads_its_mesh_beside_it(tmp_path):
    files = copy_case("poisson_block", tmp_path)
    assert files == [tmp_path / "poisson_block.toml", tmp_path / "heated_block.msh"]
    copied = (tmp_path / "poisson_block.toml").read_text()
    assert tomllib.loads(copied)["mesh"]["file"] == "heated_block.msh"
    original = (ROOT / "cases" / "poisson_block.toml").read_text()
    assert copied == original.replace('"../meshes/heated_block.msh"', '"heated_block.msh"')
    assert (tmp_path / "heated_block.msh").read_bytes() == (
        ROOT / "meshes" / "heated_block.msh").read_bytes()
    assert copy_case("sod", tmp_path / "x") == [tmp_path / "x" / "sod.toml"]
    assert set(shipped_cases()) == set(CASE_NAMES)


def test_an_amg_case_runs_without_pyamg(tmp_path, capsys, monkeypatch):
    """pyamg is optional: algebraic multigrid builds its own hierarchy."""
    monkeypatch.setitem(sys.modules, "pyamg", None)  # `import pyamg` raises ImportError
    case = ROOT / "cases" / "poisson_square.toml"
    assert main(["run", str(case), "--backend", "host", "--quiet", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""
