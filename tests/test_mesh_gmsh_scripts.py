"""The Gmsh meshes of meshes/ (made by the make_*.py scripts there, listed in meshes/README.md),
read with meshio alone: the physical names, the cell types and counts, positive cells that tile
the domain's exact area or volume, a conforming mesh whose one-sided facets are exactly the
named boundary facets, each boundary group's exact length or area, and (where Gmsh is
installed: it is an optional extra) that the scripts rewrite the checked-in files."""

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from math import pi, radians, sin, tan
from pathlib import Path

import meshio
import numpy as np
import pytest

from solvers.verification.oblique_shock import oblique_shock

MESHES = Path(__file__).parent.parent / "meshes"
GMSH_VERSION = "4.15.2"  # the Gmsh that wrote the checked-in files (meshes/README.md)

# Facets of each cell type as local node lists (Gmsh's node order; for the pyramid the base
# is 0-3 and the apex 4).
FACETS = {
    "triangle": ((0, 1), (1, 2), (2, 0)),
    "quad": ((0, 1), (1, 2), (2, 3), (3, 0)),
    "tetra": ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)),
    "hexahedron": ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6),
                   (3, 0, 4, 7)),
    "pyramid": ((0, 1, 2, 3), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)),
}
# Signed volumes by tetrahedra: the hexahedron about its diagonal 0-6, the pyramid about the
# base's diagonal 0-2; positive for Gmsh's orientation.
TETRAHEDRA = {
    "tetra": ((0, 1, 2, 3),),
    "hexahedron": ((0, 1, 2, 6), (0, 2, 3, 6), (0, 3, 7, 6), (0, 7, 4, 6), (0, 4, 5, 6),
                   (0, 5, 1, 6)),
    "pyramid": ((0, 1, 2, 4), (0, 2, 3, 4)),
}
FACET_TYPES = {1: {"line"}, 2: {"triangle", "quad"}}
RAMP_END = 1.5 * tan(radians(15.0))


@dataclass(frozen=True)
class Expected:
    """What a checked-in mesh holds: the fluid's cells per type as (fewest, most), the domain's
    area (2D) or volume (3D), each boundary group's exact length (2D) or area (3D), and whether
    the boundaries are circles (meshed as inscribed polygons)."""

    cells: dict
    measure: float
    boundaries: dict
    dim: int = 2
    circles: bool = False


def triangles(low, high):
    return {"triangle": (low, high)}


EXPECTED = {
    "strip_h020.msh": Expected(triangles(580, 640), 0.1, {"ends": 0.2, "walls": 2.0}),
    "strip_h010.msh": Expected(triangles(2300, 2500), 0.1, {"ends": 0.2, "walls": 2.0}),
    "vortex_h100.msh": Expected(triangles(230, 260), 100.0, {"farfield": 40.0}),
    "vortex_h050.msh": Expected(triangles(900, 990), 100.0, {"farfield": 40.0}),
    "vortex_h025.msh": Expected(triangles(3500, 3900), 100.0, {"farfield": 40.0}),
    "wedge_h040.msh": Expected(
        triangles(3800, 4200), 3.0 - 0.5 * 1.5 * RAMP_END,
        {"inflow": 1.5, "outflow": 1.5 - RAMP_END, "top": 2.0,
         "wall": 0.5 + np.hypot(1.5, RAMP_END)}),
    "wedge_h020.msh": Expected(
        triangles(15000, 16600), 3.0 - 0.5 * 1.5 * RAMP_END,
        {"inflow": 1.5, "outflow": 1.5 - RAMP_END, "top": 2.0,
         "wall": 0.5 + np.hypot(1.5, RAMP_END)}),
    "step_h025.msh": Expected(triangles(8900, 9900), 3.0 - 2.4 * 0.2,
                              {"inflow": 1.0, "outflow": 0.8, "wall": 0.6 + 0.2 + 2.4 + 3.0}),
    "cylinder_1.msh": Expected(triangles(5400, 6100), pi * (20.0**2 - 0.5**2),
                               {"cylinder": pi, "farfield": 40.0 * pi}, circles=True),
    "cylinder_2.msh": Expected(triangles(7700, 8600), pi * (20.0**2 - 0.5**2),
                               {"cylinder": pi, "farfield": 40.0 * pi}, circles=True),
    "cylinder_3.msh": Expected(triangles(11500, 12800), pi * (20.0**2 - 0.5**2),
                               {"cylinder": pi, "farfield": 40.0 * pi}, circles=True),
    "quad_channel_40x10.msh": Expected({"quad": (400, 400)}, 0.25,
                                       {"x_lo": 0.25, "x_hi": 0.25, "y_lo": 1.0, "y_hi": 1.0}),
    "tet_box_h020.msh": Expected({"tetra": (650, 780)}, 1.0, {"walls": 6.0}, dim=3),
    "mixed_box_n6.msh": Expected({"hexahedron": (108, 108), "pyramid": (36, 36),
                                  "tetra": (550, 700)}, 1.0, {"walls": 6.0}, dim=3),
}


def groups(mesh):
    """{physical name: {cell type: node array}} from meshio's Gmsh cell data."""
    names = {(int(tag), int(dim)): name for name, (tag, dim) in mesh.field_data.items()}
    found = {name: {} for name in mesh.field_data}
    for block, tags in zip(mesh.cells, mesh.cell_data["gmsh:physical"]):
        dim = 3 if block.type in TETRAHEDRA else 2 if block.type in FACETS else 1
        for tag in np.unique(tags):
            name = names[(int(tag), dim)]
            cells = block.data[tags == tag]
            previous = found[name].get(block.type, np.empty((0, cells.shape[1]), int))
            found[name][block.type] = np.concatenate([previous, cells])
    return found


def facet_measures(points, cell_type, facets):
    """Lengths of lines, areas of triangles and of planar quadrilaterals."""
    p = points[facets]
    if cell_type == "line":
        return np.linalg.norm(p[:, 1] - p[:, 0], axis=1)
    if cell_type == "triangle":
        return 0.5 * np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    return 0.5 * np.linalg.norm(np.cross(p[:, 2] - p[:, 0], p[:, 3] - p[:, 1]), axis=1)


def signed_measures(points, cell_type, cells):
    """Signed areas (counterclockwise positive) in 2D, signed volumes in 3D."""
    p = points[cells]
    if cell_type in ("triangle", "quad"):
        x, y = p[..., 0], p[..., 1]
        return 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)
    total = np.zeros(len(cells))
    for a, b, c, d in TETRAHEDRA[cell_type]:
        total += np.linalg.det(np.stack([p[:, b] - p[:, a], p[:, c] - p[:, a],
                                         p[:, d] - p[:, a]], axis=1)) / 6.0
    return total


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def checked_in(request):
    name = request.param
    return name, EXPECTED[name], meshio.read(MESHES / name)


def test_physical_names_and_their_dimensions(checked_in):
    _, expected, mesh = checked_in
    assert {name: int(dim) for name, (_, dim) in mesh.field_data.items()} == {
        "fluid": expected.dim, **{name: expected.dim - 1 for name in expected.boundaries}}


def test_cell_types_counts_and_positive_measures_tiling_the_domain(checked_in):
    _, expected, mesh = checked_in
    fluid = groups(mesh)["fluid"]
    assert set(fluid) == set(expected.cells)
    total = 0.0
    for cell_type, cells in fluid.items():
        low, high = expected.cells[cell_type]
        assert low <= len(cells) <= high, (cell_type, len(cells))
        measures = signed_measures(mesh.points, cell_type, cells)
        assert np.all(measures > 0), cell_type
        total += measures.sum()
    if expected.circles:
        # The boundary is a polygon inscribed in each circle: compare with its exact area.
        boundary = groups(mesh)
        segments = {name: len(boundary[name]["line"]) for name in ("cylinder", "farfield")}
        polygon = [n / 2 * r**2 * sin(2 * pi / n)
                   for n, r in ((segments["farfield"], 20.0), (segments["cylinder"], 0.5))]
        assert total == pytest.approx(polygon[0] - polygon[1], rel=1e-12)
        assert total == pytest.approx(expected.measure, rel=2e-3)
    else:
        assert total == pytest.approx(expected.measure, rel=1e-12)
    # Every node belongs to a cell.
    used = np.unique(np.concatenate([cells.ravel() for cells in fluid.values()]))
    assert np.array_equal(used, np.arange(len(mesh.points)))


def test_conforming_and_the_named_facets_are_the_whole_boundary(checked_in):
    _, expected, mesh = checked_in
    found = groups(mesh)
    # Facets of the cells by their sorted nodes: interior ones twice, boundary ones once.
    facet_count = Counter(tuple(sorted(facet)) for cell_type, cells in found["fluid"].items()
                          for local in FACETS[cell_type] for facet in cells[:, local].tolist())
    assert set(facet_count.values()) <= {1, 2}
    outer = sorted(facet for facet, count in facet_count.items() if count == 1)
    named = sorted(tuple(sorted(facet)) for name in expected.boundaries
                   for cells in found[name].values() for facet in cells.tolist())
    assert named == outer
    for name in expected.boundaries:
        assert set(found[name]) <= FACET_TYPES[expected.dim - 1]


def test_boundary_groups_have_their_exact_length_or_area(checked_in):
    _, expected, mesh = checked_in
    found = groups(mesh)
    for name, exact in expected.boundaries.items():
        measure = sum(facet_measures(mesh.points, cell_type, facets).sum()
                      for cell_type, facets in found[name].items())
        # Polygons are exact; a circle's inscribed polygon is short by about (pi / n)^2 / 6
        # of it, below 1e-3 for the 64 or more segments here.
        assert measure == pytest.approx(exact, rel=1e-3 if expected.circles else 1e-12), name


def test_cylinder_boundary_nodes_lie_on_their_circles():
    mesh = meshio.read(MESHES / "cylinder_1.msh")
    found = groups(mesh)
    for name, radius in (("cylinder", 0.5), ("farfield", 20.0)):
        nodes = mesh.points[np.unique(found[name]["line"])]
        assert np.allclose(np.hypot(nodes[:, 0], nodes[:, 1]), radius, rtol=1e-12)


def test_the_wedge_shock_leaves_through_the_outflow():
    """The Mach 2.5 shock from the ramp's corner (the origin) meets x = 1.5 on the outflow,
    at least 0.3 below the top."""
    mesh = meshio.read(MESHES / "wedge_h040.msh")
    outflow = mesh.points[np.unique(groups(mesh)["outflow"]["line"])]
    assert np.allclose(outflow[:, 0], 1.5)
    shock_height = 1.5 * np.tan(oblique_shock(2.5, np.radians(15.0)).beta)
    assert outflow[:, 1].min() < shock_height < outflow[:, 1].max() - 0.3


def test_the_readme_names_every_checked_in_mesh():
    readme = (MESHES / "README.md").read_text()
    for path in MESHES.glob("*.msh"):
        assert f"| {path.name} |" in readme, path.name
    for name in EXPECTED:
        assert f"meshes/{name}" in readme, name


@pytest.mark.parametrize("script, args, name", [
    ("make_quad_channel.py", ["--nx", "40", "--ny", "10"], "quad_channel_40x10.msh"),
    ("make_strip.py", ["--h", "0.02"], "strip_h020.msh"),
    ("make_mixed_box.py", ["--n", "6"], "mixed_box_n6.msh"),
])
def test_the_scripts_rewrite_the_checked_in_files(tmp_path, script, args, name):
    gmsh = pytest.importorskip("gmsh")
    # The structured mesh is the same from any Gmsh; the unstructured ones from the same Gmsh.
    if name != "quad_channel_40x10.msh" and gmsh.__version__ != GMSH_VERSION:
        pytest.skip(f"made with Gmsh {GMSH_VERSION}, this is {gmsh.__version__}")
    out = tmp_path / name
    subprocess.run([sys.executable, str(MESHES / script), *args, str(out)], check=True,
                   capture_output=True)
    assert out.read_bytes() == (MESHES / name).read_bytes()
