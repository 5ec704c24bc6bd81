"""An allocation that does not fit is one line (issue 18): a BackendError saying how much the
array needs (and, on the GPU, how much the run holds already) and how much the device or the
host has free of its total, instead of CuPy's OutOfMemoryError or NumPy's MemoryError."""

import re

import numpy as np
import pytest

from solvers.backend import BackendError, get_backend
from solvers.backend.memory import size_text
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid

PERIODIC = dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "periodic")
FREE_OF = re.compile(r"has \d[\d.]* [KMGTPE]?i?B free of \d[\d.]* [KMGTPE]?i?B$")


def _one_line(error):
    message = str(error.value)
    assert "\n" not in message and message.startswith("out of memory: "), message
    assert FREE_OF.search(message), message
    return message


def test_size_text():
    assert [size_text(n) for n in (0, 1023, 1024, 1536 * 2**20, 2**62)] == [
        "0 B", "1023 B", "1 KiB", "1.5 GiB", "4 EiB"]


@pytest.mark.parametrize("shape", [(2**60,), (2**40, 2**22)])
def test_a_host_allocation_numpy_refuses_is_one_line(shape):
    # 4 EiB and 16 EiB (NumPy's "array is too big"): beyond any address space, so refused at
    # once even where the kernel overcommits memory.
    with pytest.raises(BackendError) as error:
        get_backend("host").empty(shape, np.float32)
    message = _one_line(error)
    assert f"a {'x'.join(map(str, shape))} float32 array needs " in message
    assert "the host has" in message


def test_an_impossible_euler_grid_on_the_host_is_one_line():
    grid = StructuredGrid(2**24, ny=2**24, y=(0.0, 1.0))  # 4 PiB a state buffer
    with pytest.raises(BackendError) as error:
        EulerSolver(grid, PERIODIC, backend="host")
    assert "a 4x16777216x16777216 float32 array needs 4 PiB" in _one_line(error)


@pytest.mark.gpu
def test_an_impossible_euler_grid_on_the_gpu_says_what_it_needs_and_what_the_card_has():
    grid = StructuredGrid(200000, ny=200000, y=(0.0, 1.0))  # 596 GiB a state buffer in fp32
    with pytest.raises(BackendError) as error:
        EulerSolver(grid, PERIODIC, backend="cuda")
    message = _one_line(error)
    assert "a 4x200000x200000 float32 array needs 596 GiB" in message
    assert re.search(r"the GPU \(.+\) has ", message), message
    # The card still works after the failed allocation.
    assert get_backend("cuda").to_host(get_backend("cuda").zeros((4,), np.float32)).sum() == 0
