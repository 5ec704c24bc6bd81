"""Run output: HDF5 layout, the XDMF sidecar, atomic finish and abort, PNG plots, progress."""

import io
import json
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np
import pytest

from solvers.io import RunWriter, plot_fields
from solvers.io.plot import _coarsen
from solvers.mesh.structured import StructuredGrid
from solvers.run.progress import Progress

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GRID_1D = StructuredGrid(16, x=(0.0, 2.0))
GRID_2D = StructuredGrid(6, x=(0.0, 3.0), ny=4, y=(-1.0, 1.0))
ATTRS = {"case": "[mesh]\nnx = 16\n", "backend": "host", "precision": "fp32",
         "versions": {"solvers": "0.1.0", "numpy": np.__version__}, "cfl": 0.5, "card": None}


def make_fields(grid, t, dtype=np.float64):
    """Fields that tell x from y and one time from another: f[i, j] = x_i + 10 y_j + 100 t."""
    centres = grid.centres()
    base = centres[0] + (10 * centres[1] if grid.ndim == 2 else 0) + 100 * t
    names = ("rho", "vx", "p") if grid.ndim == 1 else ("rho", "vx", "vy", "p")
    return {name: (base + k).astype(dtype) for k, name in enumerate(names)}


def write_run(tmp_path, grid, times=(0.0, 0.5, 1.0), name="run", dtype=np.float64):
    writer = RunWriter(tmp_path, name, grid, ATTRS)
    for steps, t in enumerate(times):
        writer.snapshot(t, 10 * steps, make_fields(grid, t, dtype))
    return writer, writer.finish(times[-1], 10 * (len(times) - 1),
                                 make_fields(grid, times[-1], dtype))


def hidden_files(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_run_file_1d(tmp_path):
    _, paths = write_run(tmp_path, GRID_1D)
    assert paths == {"h5": tmp_path / "run.h5", "xdmf": tmp_path / "run.xdmf"}
    assert hidden_files(tmp_path) == []
    with h5py.File(paths["h5"], "r") as f:
        assert f.attrs["complete"] and f.attrs["time"] == 1.0 and f.attrs["steps"] == 20
        assert f.attrs["case"] == ATTRS["case"] and f.attrs["cfl"] == 0.5
        assert json.loads(f.attrs["versions"]) == ATTRS["versions"]
        np.testing.assert_array_equal(f["mesh/x"], GRID_1D.x_centres())
        np.testing.assert_array_equal(f["mesh/x_nodes"], GRID_1D.x_nodes())
        assert "y" not in f["mesh"] and "y_nodes" not in f["mesh"]
        assert list(f["snapshots"]) == ["000000", "000001", "000002"]
        for index, t in enumerate((0.0, 0.5, 1.0)):
            snap = f[f"snapshots/{index:06d}"]
            assert snap.attrs["time"] == t and snap.attrs["steps"] == 10 * index
            for name, value in make_fields(GRID_1D, t).items():
                assert snap[name].shape == (16,) and snap[name].dtype == np.float64
                np.testing.assert_array_equal(snap[name], value)
        for name, value in make_fields(GRID_1D, 1.0).items():
            np.testing.assert_array_equal(f[f"fields/{name}"], value)


def test_run_file_2d(tmp_path):
    _, paths = write_run(tmp_path, GRID_2D, dtype=np.float32)
    with h5py.File(paths["h5"], "r") as f:
        np.testing.assert_array_equal(f["mesh/x"], GRID_2D.x_centres())
        np.testing.assert_array_equal(f["mesh/y"], GRID_2D.y_centres())
        np.testing.assert_array_equal(f["mesh/x_nodes"], GRID_2D.x_nodes())
        np.testing.assert_array_equal(f["mesh/y_nodes"], GRID_2D.y_nodes())
        # Snapshots are stored transposed, (ny, nx) with x fastest; the final state as [i, j].
        snap = f["snapshots/000001"]
        for name, value in make_fields(GRID_2D, 0.5, np.float32).items():
            assert snap[name].shape == (4, 6) and snap[name].dtype == np.float32
            assert snap[name].attrs["layout"] == "y,x"
            np.testing.assert_array_equal(snap[name][()].T, value)
        final = make_fields(GRID_2D, 1.0, np.float32)
        for name, value in final.items():
            assert f[f"fields/{name}"].shape == (6, 4)
            assert f[f"fields/{name}"].attrs["layout"] == "x,y"
            np.testing.assert_array_equal(f[f"fields/{name}"], value)
        # [i, j] is at (x_i, y_j): rho = x + 10 y + 100 t.
        x, y = np.meshgrid(f["mesh/x"], f["mesh/y"], indexing="ij")
        np.testing.assert_allclose(f["fields/rho"], x + 10 * y + 100, rtol=1e-6)


@pytest.mark.parametrize("grid", [GRID_1D, GRID_2D], ids=["1d", "2d"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_xdmf_matches_h5(tmp_path, grid, dtype):
    _, paths = write_run(tmp_path, grid, dtype=dtype)
    root = ET.parse(paths["xdmf"]).getroot()
    series = root.find("Domain/Grid")
    assert series.get("GridType") == "Collection" and series.get("CollectionType") == "Temporal"
    snapshots = series.findall("Grid")
    times = [float(s.find("Time").get("Value")) for s in snapshots]
    assert times == [0.0, 0.5, 1.0]
    assert all(b > a for a, b in zip(times, times[1:]))

    ny = grid.ny if grid.ndim == 2 else 1
    checked = 0
    with h5py.File(paths["h5"], "r") as f:
        for snap in snapshots:
            topology = snap.find("Topology")
            assert topology.get("TopologyType") == "2DRectMesh"
            assert topology.get("Dimensions") == f"{ny + 1} {grid.nx + 1}"
            assert snap.find("Geometry").get("GeometryType") == "VXVY"
            assert {a.get("Name") for a in snap.findall("Attribute")} == set(make_fields(grid, 0))
            assert all(a.get("Center") == "Cell" for a in snap.findall("Attribute"))
            for item in snap.iter("DataItem"):
                dims = tuple(int(d) for d in item.get("Dimensions").split())
                if item.get("Format") == "XML":  # the inline y nodes of a 1D strip
                    assert grid.ndim == 1 and len(item.text.split()) == dims[0] == 2
                    continue
                filename, dataset = item.text.strip().split(":")
                assert filename == "run.h5"
                assert dataset in f
                # A 1D strip declares (1, nx) cells for its (nx,) datasets.
                shape = f[dataset].shape
                assert (shape if len(shape) == len(dims) else (1, *shape)) == dims
                assert int(item.get("Precision")) == f[dataset].dtype.itemsize
                checked += 1
    assert checked == 3 * (len(make_fields(grid, 0)) + grid.ndim)


def test_finish_appends_final_state_as_snapshot(tmp_path):
    writer = RunWriter(tmp_path, "run", GRID_1D, {})
    writer.snapshot(0.0, 0, make_fields(GRID_1D, 0.0))
    paths = writer.finish(0.3, 7, make_fields(GRID_1D, 0.3))
    with h5py.File(paths["h5"], "r") as f:
        assert list(f["snapshots"]) == ["000000", "000001"]
        assert f["snapshots/000001"].attrs["time"] == 0.3
        assert f["snapshots/000001"].attrs["steps"] == 7


def test_abort_keeps_earlier_result_and_snapshots(tmp_path):
    write_run(tmp_path, GRID_2D)
    complete = (tmp_path / "run.h5").read_bytes()
    complete_xdmf = (tmp_path / "run.xdmf").read_text()

    writer = RunWriter(tmp_path, "run", GRID_2D, ATTRS)
    writer.snapshot(0.0, 0, make_fields(GRID_2D, 0.0))
    writer.snapshot(0.25, 5, make_fields(GRID_2D, 0.25))
    assert (tmp_path / "run.h5").read_bytes() == complete  # untouched while running
    partial = writer.abort()

    assert partial == tmp_path / "run.partial.h5"
    assert (tmp_path / "run.h5").read_bytes() == complete
    assert (tmp_path / "run.xdmf").read_text() == complete_xdmf
    assert hidden_files(tmp_path) == []
    with h5py.File(partial, "r") as f:
        assert not f.attrs["complete"] and f.attrs["time"] == 0.25 and f.attrs["steps"] == 5
        assert "fields" not in f and list(f["snapshots"]) == ["000000", "000001"]
        np.testing.assert_array_equal(f["snapshots/000001/p"][()].T,
                                      make_fields(GRID_2D, 0.25)["p"])
    xdmf = ET.parse(tmp_path / "run.partial.xdmf").getroot()
    assert all(item.text.startswith("run.partial.h5:") for item in xdmf.iter("DataItem"))
    assert writer.abort() is None


def test_abort_without_snapshots_leaves_nothing(tmp_path):
    with RunWriter(tmp_path, "run", GRID_1D, {}) as writer:
        pass
    assert writer.abort() is None
    assert list(tmp_path.iterdir()) == []


def test_finish_replaces_earlier_result_and_abort_after_finish_is_a_no_op(tmp_path):
    write_run(tmp_path, GRID_1D, times=(0.0, 1.0))
    writer, paths = write_run(tmp_path, GRID_1D, times=(0.0, 0.5, 1.0))
    assert writer.abort() is None
    with h5py.File(paths["h5"], "r") as f:
        assert len(f["snapshots"]) == 3
    with pytest.raises(RuntimeError, match="already finished"):
        writer.snapshot(2.0, 30, make_fields(GRID_1D, 2.0))


GRID_3D = StructuredGrid(4, ny=3, y=(0.0, 1.0), nz=2, z=(0.0, 1.0))


@pytest.mark.parametrize("grid", [GRID_2D, GRID_3D], ids=["2d", "3d"])
def test_vector_field_is_one_xdmf_vector_attribute(tmp_path, grid):
    """A field of grid.shape + (3,) is stored with x fastest and its components last, and the
    XDMF declares it a cell-centred Vector of those dimensions (ParaView's glyphs and
    streamlines take it as it is)."""
    centres = grid.centres()
    velocity = np.stack([*centres, *[np.zeros(grid.shape)] * (3 - grid.ndim)], axis=-1)
    writer = RunWriter(tmp_path, "run", grid, ATTRS)
    writer.snapshot(0.0, 0, {"p": velocity[..., 0], "velocity": velocity})
    paths = writer.finish(0.0, 0, {"p": velocity[..., 0], "velocity": velocity})
    cells = tuple(reversed(grid.shape))
    with h5py.File(paths["h5"], "r") as f:
        stored = f["snapshots/000000/velocity"]
        assert stored.shape == (*cells, 3)
        back = np.asarray(stored).transpose(*reversed(range(grid.ndim)), grid.ndim)
        np.testing.assert_array_equal(back, velocity)
    attribute = next(a for a in ET.parse(paths["xdmf"]).getroot().iter("Attribute")
                     if a.get("Name") == "velocity")
    assert attribute.get("AttributeType") == "Vector" and attribute.get("Center") == "Cell"
    assert attribute.find("DataItem").get("Dimensions") == " ".join(map(str, (*cells, 3)))


def test_bad_fields_are_refused(tmp_path):
    with RunWriter(tmp_path, "run", GRID_2D, {}) as writer:
        with pytest.raises(ValueError, match="shape"):
            writer.snapshot(0.0, 0, {"rho": np.zeros((4, 6))})
        with pytest.raises(ValueError, match="shape"):  # a vector has 3 components
            writer.snapshot(0.0, 0, {"rho": np.zeros((6, 4, 2))})
        writer.snapshot(0.0, 0, {"rho": np.zeros((6, 4))})
        with pytest.raises(ValueError, match="differ"):
            writer.snapshot(0.1, 1, {"p": np.zeros((6, 4))})
    with pytest.raises(ValueError, match="reserved"):
        RunWriter(tmp_path, "run", GRID_2D, {"time": 1.0})


@pytest.mark.parametrize("grid", [GRID_1D, GRID_2D], ids=["1d", "2d"])
def test_plot_png(tmp_path, grid):
    pytest.importorskip("matplotlib")
    fields = make_fields(grid, 0.0)
    fields["velocity"] = np.stack([fields["vx"]] * 3, axis=-1)  # drawn as its magnitude
    path = plot_fields(tmp_path / "run.png", grid, fields, list(fields), "run at t=0")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert hidden_files(tmp_path) == []


def test_plot_coarsens_large_grids_by_block_means():
    values = np.arange(35.0).reshape(5, 7)  # (ny, nx)
    values[4, 6] = np.nan
    blocks, x, y = _coarsen(values, np.arange(8.0), np.arange(6.0), limit=3)
    np.testing.assert_array_equal(x, [0, 3, 6, 7])  # a narrower last block takes the remainder
    np.testing.assert_array_equal(y, [0, 3, 5])
    assert blocks.shape == (2, 3)
    assert blocks[0, 0] == values[:3, :3].mean() and blocks[1, 2] == values[3, 6]


def test_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    for module in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"plotting needs matplotlib: pip install matplotlib$"):
        plot_fields(tmp_path / "run.png", GRID_1D, make_fields(GRID_1D, 0), ["rho"], "run")


def test_progress_plain_lines_at_each_tenth():
    stream = io.StringIO()
    progress = Progress(end_time=2.0, cells=1_000_000, stream=stream)
    for k in range(1, 101):
        progress.update(t=0.02 * k, steps=10 * k, elapsed=0.1 * k)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0].strip().startswith("10.0%") and lines[-1].startswith("100.0%")
    assert "t=2 / 2" in lines[-1] and "steps 1000" in lines[-1]
    assert "100 Mcell/s" in lines[-1]  # 10 steps of 1e6 cells per 0.1 s
    assert "\r" not in stream.getvalue()


def test_progress_tty_redraws_one_line():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    progress = Progress(end_time=1.0, cells=10_000_000, stream=stream)
    for k in range(1, 101):
        progress.update(t=0.01 * k, steps=100 * k, elapsed=0.01 * k)
    progress.close()
    text = stream.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    assert 4 <= text.count("\r") <= 7  # about 5 redraws a second over 1 s, plus the last
    assert "100.0%" in text and "Gcell/s" in text and "[" + "#" * 24 + "]" in text


def test_progress_quiet_prints_nothing():
    stream = io.StringIO()
    progress = Progress(end_time=1.0, cells=100, stream=stream, quiet=True)
    for k in range(1, 11):
        progress.update(t=0.1 * k, steps=k, elapsed=0.1 * k)
    progress.close()
    assert stream.getvalue() == ""


def test_simulation_writes_run_file(tmp_path):
    """The wiring the command line uses: snapshots from on_output, progress from on_progress,
    the final state from solver.fields(), on the host backend."""
    from solvers.fv.euler import EulerSolver
    from solvers.run.simulation import Simulation

    grid = StructuredGrid(32)
    solver = EulerSolver(grid, {"x_lo": "transmissive", "x_hi": "transmissive"}, backend="host")
    x = grid.x_centres()
    solver.set_primitive(np.where(x < 0.5, 1.0, 0.125), 0.0, np.where(x < 0.5, 1.0, 0.1))
    writer = RunWriter(tmp_path, "sod", grid, {"backend": "host"})
    stream = io.StringIO()
    progress = Progress(0.1, grid.ncells, stream=stream)
    sim = Simulation(solver, 0.1, output_interval=0.05,
                     on_output=lambda s: writer.snapshot(s.t, s.steps, s.fields),
                     on_progress=lambda s, elapsed: progress.update(s.t, s.steps, elapsed))
    result = sim.run()
    progress.close()
    paths = writer.finish(sim.t, sim.steps, sim.fields)

    with h5py.File(paths["h5"], "r") as f:
        assert [f[f"snapshots/{k}"].attrs["time"] for k in f["snapshots"]] == [0.0, 0.05, 0.1]
        assert f.attrs["steps"] == result.steps
        np.testing.assert_array_equal(f["fields/rho"], solver.fields()["rho"])
        np.testing.assert_array_equal(f["snapshots/000002/rho"], solver.fields()["rho"])
    assert stream.getvalue().splitlines()[-1].startswith("100.0%")
