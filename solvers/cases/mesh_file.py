"""The [mesh] file of a case: its path relative to the case file, read by a mesh reader, every
failure a CaseError at mesh.file."""

from pathlib import Path

from ..mesh.unstructured import MeshError


def read_mesh_file(case, reader):
    """reader(path) of the case's mesh.file (relative to the case file's folder)."""
    path = Path(case.data["mesh"]["file"])
    if not path.is_absolute():
        path = Path(case.path).parent / path
    if not path.is_file():  # missing, a folder, a FIFO or a device
        raise case.error("mesh", "file", f"{path}: not found or not a regular file")
    try:
        return reader(path)
    except (MeshError, ValueError) as error:
        raise case.error("mesh", "file", str(error)) from None
