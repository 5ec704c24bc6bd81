"""Finite-element case files from the command line: the Poisson cases run and write nodal
fields, the mesh (points and cells), XDMF and PNG; wrong boundary or material names and bad
meshes are one-line errors with exit status 2."""

from pathlib import Path

import h5py
import meshio
import numpy as np
import pytest

from solvers.cli import main

CASES = Path(__file__).parent.parent / "cases"
FAST = ["--backend", "host", "--quiet"]


def test_poisson_square_writes_nodal_fields_mesh_xdmf_and_png(tmp_path):
    code = main(["run", str(CASES / "poisson_square.toml"), *FAST, "--out", str(tmp_path),
                 "--set", "mesh.cells=[8, 8]", "--precision", "fp64",
                 "--set", "solver.rtol=1e-10"])
    assert code == 0
    with h5py.File(tmp_path / "poisson_square.h5") as f:
        points, cells = f["mesh/points"][...], f["mesh/cells"][...]
        assert points.shape == (81, 2) and cells.shape == (128, 3)
        u = f["fields/u"][...]
        x, y = points.T
        exact = np.sin(np.pi * x) * np.sin(np.pi * y) + x * y
        np.testing.assert_array_equal(f["fields/exact"][...], exact)
        # P2 on 8 x 8 squares: the nodal error of this solution is about 1e-4 (it falls as
        # h^3 or faster; tests/test_fe_poisson.py checks the rates).
        assert abs(u - exact).max() < 5e-4
        assert f.attrs["solver"] == "poisson" and f.attrs["complete"]
    xdmf = (tmp_path / "poisson_square.xdmf").read_text()
    assert 'TopologyType="Triangle"' in xdmf and "/mesh/points" in xdmf
    assert (tmp_path / "poisson_square.png").stat().st_size > 0


def test_poisson_block_on_the_gmsh_mesh_is_piecewise_linear(tmp_path):
    """Copper/steel block: u is exactly piecewise linear in x, which P1 represents, so the
    nodal error is the CG tolerance's (1e-9 relative in fp64)."""
    code = main(["run", str(CASES / "poisson_block.toml"), *FAST, "--out", str(tmp_path),
                 "--precision", "fp64", "--set", "solver.rtol=1e-12"])
    assert code == 0
    with h5py.File(tmp_path / "poisson_block.h5") as f:
        assert abs(f["fields/error"][...]).max() < 1e-7
        assert f["mesh/cells"].shape[1] == 4
    assert 'TopologyType="Tetrahedron"' in (tmp_path / "poisson_block.xdmf").read_text()


@pytest.mark.parametrize("args, message", [
    (["--set", "boundary.dirichlet={inlet = 1.0}"],
     "dirichlet: boundary 'inlet' is not in the mesh (its boundaries: cold, hot, "
     "sides)"),
    (["--set", "material.conductivity={wood = 1.0}"],
     "conductivity: material 'wood' is not in the mesh (its materials: copper, "
     "steel)"),
    (["--set", "mesh.file=missing.msh"], "mesh.file: "),
    (["--set", "boundary.neumann={}", "--set", "boundary.robin={sides = {alpha = -1}}"],
     "expected {alpha = a > 0"),
    (["--set", "boundary.robin={sides = {alpha = 1}}"], "boundary 'sides' has two conditions"),
    (["--set", "source.f=\"sin(q)\""], "unknown name 'q'"),
])
def test_bad_names_and_meshes_are_one_line_exit_2(tmp_path, capsys, args, message):
    code = main(["run", str(CASES / "poisson_block.toml"), *FAST, "--out", str(tmp_path),
                 *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_inverted_cell_in_a_mesh_file_is_one_line_exit_2(tmp_path, capsys):
    raw = meshio.read(CASES.parent / "meshes" / "heated_block.msh")
    tets = next(block for block in raw.cells if block.type == "tetra")
    tets.data[7] = tets.data[7][[1, 0, 2, 3]]
    mesh = tmp_path / "bad.msh"
    meshio.write(mesh, meshio.Mesh(raw.points, raw.cells, cell_data={
        key: raw.cell_data[key] for key in ("gmsh:physical", "gmsh:geometrical")},
        field_data=raw.field_data), file_format="gmsh22", binary=False)
    case = tmp_path / "case.toml"
    case.write_text((CASES / "poisson_block.toml").read_text()
                    .replace("../meshes/heated_block.msh", str(mesh)))
    code = main(["run", str(case), *FAST, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"{mesh}: cell" in err and "is inverted" in err
