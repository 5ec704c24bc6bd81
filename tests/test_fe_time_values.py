"""Expressions of x, y, z, t evaluated on the device (solvers/fe/time_values.py): the C
translation of every function and operator gives NumPy's values, in 2D and 3D, and a bad
expression is a one-line error."""

import numpy as np
import pytest

from solvers.backend import get_backend
from solvers.expressions import ExpressionError
from solvers.fe.time_values import SAMPLE, TimeFunction, bind_nodal_values, uses_time


@pytest.mark.parametrize("gdim", [2, 3])
def test_device_values_equal_numpy(backend_name, gdim):
    """SAMPLE uses every function, operator and comparison; fp64 on both sides, so they
    agree to the rounding of the math library (1e-12 of values of order 10)."""
    backend = get_backend(backend_name)
    rng = np.random.default_rng(2)
    points = rng.uniform(-1, 2, (200, gdim))
    points[:20, 1] = points[:20, 0]  # some x == y, so both branches of == are taken
    function = TimeFunction(SAMPLE + " + c", constants={"c": 0.25})
    nodes = np.arange(0, 200, 3)
    out = backend.zeros((200,), np.float64)
    times = backend.to_device(np.array([0.0, 0.7]))
    bind_nodal_values(backend, np.float64, function, nodes, backend.to_device(points), times,
                      1, out)()
    coordinates = list(points[nodes].T) + [np.zeros(len(nodes))] * (3 - gdim)
    expected = np.zeros(200)
    expected[nodes] = function(*coordinates, 0.7)
    np.testing.assert_allclose(backend.to_host(out), expected, rtol=0, atol=1e-12)


def test_time_is_found_and_bad_expressions_are_one_line_errors():
    assert uses_time("x * exp(-t)") and not uses_time("x * tau") and not uses_time(1.0)
    with pytest.raises(ExpressionError, match="unknown name 'q'"):
        TimeFunction("t * q")
