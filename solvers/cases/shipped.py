"""The case files shipped with the package (`solvers cases`): listed with their descriptions
and copied, with the mesh files they read, into a folder of the user's.

Installed from a wheel they live in solvers/_data/cases and solvers/_data/meshes (the build
maps the repository's top-level cases/ and meshes/ there, see setup.py); in a checkout or an
editable install they are those top-level folders. Either way a case names its mesh relative
to itself (`../meshes/heated_block.msh`)."""

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .schema import CaseError

PACKAGE = Path(__file__).resolve().parents[1]  # solvers/


def data_dir() -> Path:
    """The folder holding cases/ and meshes/: solvers/_data when installed, else the
    checkout's top level."""
    installed = PACKAGE / "_data"
    return installed if (installed / "cases").is_dir() else PACKAGE.parent


@dataclass(frozen=True)
class ShippedCase:
    name: str
    path: Path
    description: str


def shipped_cases() -> dict[str, ShippedCase]:
    """{name: ShippedCase} of every shipped case file, by name."""
    found = {}
    for path in sorted((data_dir() / "cases").glob("*.toml")):
        try:
            description = tomllib.loads(path.read_text())["case"].get("description", "")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, AttributeError):
            description = ""
        found[path.stem] = ShippedCase(path.stem, path, " ".join(str(description).split()))
    return found


def _mesh_copy(case, text, target_dir):
    """(source, target, new text) for a case that reads a mesh file relative to itself: the
    mesh is copied beside the case and the case's [mesh] file names the copy."""
    mesh_file = tomllib.loads(text).get("mesh", {}).get("file")
    if not isinstance(mesh_file, str) or Path(mesh_file).is_absolute():
        return None
    source = case.path.parent / mesh_file
    target = target_dir / Path(mesh_file).name
    for quote in ('"', "'"):
        literal = f"{quote}{mesh_file}{quote}"
        if literal in text:
            text = text.replace(literal, f'"{target.name}"', 1)
            break
    if tomllib.loads(text).get("mesh", {}).get("file") != target.name:
        raise CaseError(f"{case.path}: cannot rewrite [mesh] file {mesh_file!r} for the copy")
    return source, target, text


def copy_case(name: str, target_dir) -> list[Path]:
    """Copy the shipped case `name` into target_dir (made if missing) with the mesh files it
    reads, so that `solvers run target_dir/NAME.toml` works; returns the files written. An
    unknown name or a file already at a target is a CaseError, and then nothing is written."""
    cases = shipped_cases()
    if name not in cases:
        known = ", ".join(cases) or "none found"
        raise CaseError(f"no shipped case named '{name}' (known: {known})")
    case = cases[name]
    target_dir = Path(target_dir)
    text = case.path.read_text()
    copies = []  # (source, target) of the files copied unchanged
    mesh = _mesh_copy(case, text, target_dir)
    if mesh is not None:
        source, target, text = mesh
        copies.append((source, target))
    case_target = target_dir / case.path.name
    for target in (case_target, *(target for _, target in copies)):
        if target.exists():
            raise CaseError(f"{target}: already exists (not overwritten)")
    target_dir.mkdir(parents=True, exist_ok=True)
    for source, target in copies:
        shutil.copyfile(source, target)
    case_target.write_text(text)
    return [case_target, *(target for _, target in copies)]
