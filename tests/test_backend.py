"""The backend interface: choosing a backend, argument checks, capture rules, and the kernel
dialect's block reductions (shared memory, PHASE blocks) against NumPy."""

import numpy as np
import pytest

from solvers.backend import BackendError, CaptureError, get_backend
from solvers.backend import clock as device_clock
from solvers.backend.clock import DeviceClock
from solvers.backend.cuda import cuda_available
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid


def test_unknown_backend_is_an_error():
    with pytest.raises(BackendError, match="unknown backend 'gpu'"):
        get_backend("gpu")


def test_cuda_without_gpu_is_an_error_not_a_fallback():
    if cuda_available():
        assert get_backend("cuda").name == "cuda"
    else:
        with pytest.raises(BackendError, match="no usable CUDA GPU"):
            get_backend("cuda")
        assert get_backend("auto", notify=False).name == "host"


def _clock_kernels(backend, dtype=np.float32):
    return backend.module(device_clock.SOURCE, dtype, device_clock.kernel_defines())


def test_bind_checks_argument_types():
    backend = get_backend("host")
    finish = _clock_kernels(backend).finish_dt
    rates = backend.zeros((4,), np.float64)  # wrong: real is float32 here
    ctrl = backend.zeros((8,), np.float64)
    dt = backend.zeros((1,), np.float32)
    parity = backend.zeros((1,), np.int32)
    with pytest.raises(TypeError, match="argument 'rates' expects a host array of float32"):
        finish.bind(1, 256, rates, 4, ctrl, dt, parity, 0.5)
    with pytest.raises(TypeError, match="takes 6 arguments, got 5"):
        finish.bind(1, 256, rates, 4, ctrl, dt, parity)


def test_capture_forbids_host_reads_and_allocations(backend_name):
    backend = get_backend(backend_name)
    array = backend.zeros((4,), np.float32)
    with pytest.raises(CaptureError, match="reading device data"):
        backend.capture(lambda: backend.to_host(array))
    with pytest.raises(CaptureError, match="allocating"):
        backend.capture(lambda: backend.empty((4,), np.float32))
    with pytest.raises(CaptureError, match="copying host data"):
        backend.capture(lambda: backend.write(array, np.ones(4)))
    backend.to_host(array)  # usable again after a failed capture


def _random_state(grid, rng):
    rho = rng.uniform(0.5, 2.0, grid.shape)
    vx, vy = rng.uniform(-1, 1, grid.shape), rng.uniform(-1, 1, grid.shape)
    p = rng.uniform(0.2, 3.0, grid.shape)
    return rho, vx, vy, p


@pytest.mark.parametrize("nx, ny", [(7, 5), (300, 170)])
def test_dt_reduction_matches_numpy(backend_name, nx, ny):
    """euler_max_rate (a BLOCK_KERNEL with a shared-memory tree) and finish_dt give dt =
    cfl / max((|vx| + c)/dx + (|vy| + c)/dy) exactly as NumPy computes it from the same floats:
    a maximum is exact, so only the final division may round."""
    rng = np.random.default_rng(nx * ny)
    grid = StructuredGrid(nx, x=(0, 1), ny=ny, y=(0, 2))
    solver = EulerSolver(grid, dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "periodic"),
                         backend=backend_name, precision="fp64", cfl=0.4)
    rho, vx, vy, p = _random_state(grid, rng)
    solver.set_primitive(rho, vx, p, vy=vy)
    u = solver.conserved()
    solver.clock.set(t=1.0, t_stop=10.0)
    solver.clock.finish_dt()  # rates from euler_max_rate, launched by set_primitive
    reading = solver.clock.read()

    vx, vy = u[1] / u[0], u[2] / u[0]
    p = 0.4 * (u[3] - 0.5 * u[0] * (vx**2 + vy**2))
    c = np.sqrt(1.4 * p / u[0])
    rate = ((np.abs(vx) + c) / grid.dx + (np.abs(vy) + c) / grid.dy).max()
    assert reading.dt == pytest.approx(0.4 / rate, rel=1e-14)
    assert reading.t == 1.0 + reading.dt
    assert reading.steps == 1 and not reading.diverged


def test_clock_lands_exactly_on_stop_time_and_then_idles(backend_name):
    backend = get_backend(backend_name)
    clock = DeviceClock(backend, np.float32, partials=3, cfl=0.5)
    backend.write(clock.rates, [2.0, 1.0, 0.5])  # dt = 0.5 / 2
    clock.set(t=0.0, t_stop=0.85)
    readings = []
    for _ in range(5):
        clock.finish_dt()
        readings.append(clock.read())
    # Two full steps, then the 0.35 left (within 2 dt) in two equal steps, never a short one.
    assert [r.t for r in readings] == [0.25, 0.5, 0.675, 0.85, 0.85]
    assert [r.steps for r in readings] == [1, 2, 3, 4, 4]
    assert [r.parity for r in readings] == [1, 0, 1, 0, 0]  # flips with each step taken
    assert readings[-1].dt == 0.0


def test_clock_absorbs_a_rounding_remainder_into_the_last_step(backend_name):
    """Ten steps of 0.1 to t_stop = 1: the sum of the dt falls short of 1 by rounding, and the
    last step stretches by that much instead of leaving a step of 1e-16."""
    backend = get_backend(backend_name)
    clock = DeviceClock(backend, np.float64, partials=1, cfl=0.1)
    backend.write(clock.rates, [1.0])
    clock.set(t=0.0, t_stop=1.0)
    dts = []
    for _ in range(11):
        clock.finish_dt()
        dts.append(clock.read().dt)
    assert clock.read().t == 1.0 and clock.read().steps == 10
    assert min(dts[:10]) > 0.1 * (1 - 1e-12) and dts[10] == 0.0


def test_non_finite_state_sets_the_divergence_flag(backend_name):
    grid = StructuredGrid(64)
    solver = EulerSolver(grid, {"x_lo": "periodic", "x_hi": "periodic"}, backend=backend_name)
    u = np.ones((3, 64))
    u[2] = 3.0
    u[2, 17] = np.nan
    solver.set_conserved(u)
    solver.clock.set(t_stop=1.0)
    solver.step()
    reading = solver.clock.read()
    assert reading.diverged and reading.dt == 0.0 and reading.steps == 0
    # A new state clears the flag: the solver steps again.
    u[2, 17] = 3.0
    solver.set_conserved(u)
    solver.step()
    reading = solver.clock.read()
    assert not reading.diverged and reading.steps == 1


def test_a_kernel_outside_the_package_compiles_from_its_path(tmp_path):
    """A pathlib.Path source: its includes resolve in its own folder first, then in
    raw_kernels/core/ (prelude.h, clock.h); a missing header names the chain."""
    (tmp_path / "scale.h").write_text("#pragma once\n"
                                      "DEVICE real scaled(real x) { return R(3) * x; }\n")
    source = tmp_path / "scale.cu"
    source.write_text('#include "prelude.h"\n#include "scale.h"\n#include "clock.h"\n'
                      "KERNEL void scale(real* x, int n)\n{\n"
                      "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "    if (i < n) x[i] = scaled(x[i]) + R(CTRL_SIZE);\n}\n")
    backend = get_backend("host")
    x = backend.to_device(np.arange(5, dtype=np.float32))
    backend.module(source, np.float32).scale(1, 8, x, 5)
    np.testing.assert_array_equal(backend.to_host(x), 3 * np.arange(5) + device_clock.CTRL_SIZE)
    (tmp_path / "broken.cu").write_text('#include "prelude.h"\n#include "nowhere.h"\n')
    with pytest.raises(FileNotFoundError, match=r'broken\.cu: #include "nowhere\.h" is neither'):
        backend.module(tmp_path / "broken.cu", np.float32)


def test_package_sources_are_named_from_raw_kernels():
    backend = get_backend("host")
    with pytest.raises(FileNotFoundError, match="raw_kernels/fv/nothing.cu: no such kernel source"):
        backend.module("fv/nothing.cu", np.float32)
    with pytest.raises(ValueError, match="relative to raw_kernels/"):
        backend.module("../scripts/kernels/euler_floor.cu", np.float32)


def test_a_thread_that_owns_its_backends_gets_its_own():
    """own_backends(): the thread's get_backend makes and keeps instances of its own (on a GPU
    a CUDA stream each: a sweep's streams mode); other threads keep the process's."""
    import threading

    from solvers.backend import get_backend, own_backends

    shared, seen = get_backend("host"), {}

    def thread(name, own):
        if own:
            own_backends()
        seen[name] = (get_backend("host"), get_backend("host"))

    workers = [threading.Thread(target=thread, args=(name, own))
               for name, own in (("own", True), ("other", False))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert seen["own"][0] is seen["own"][1] and seen["own"][0] is not shared
    assert seen["other"][0] is shared
