"""Case-file expressions (solvers/expressions.py) are evaluated at bounded cost on read-only
coordinates, and every bad one is a one-line ExpressionError (issue 18): `1/0`, `sin`, `~x`,
`sin(1,2)`, `where()`, `10**400`, deep or long expressions raised ZeroDivisionError,
TypeError, OverflowError, MemoryError or RecursionError; `9**9**9` never finished; `sin(x, x)`
wrote into the shared coordinates through NumPy's `out=`. The TimeFunctions compiled into FE
kernels get the same checks before any compiler runs."""

import time
import warnings

import numpy as np
import pytest

from solvers.expressions import (
    ARITY,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_NODES,
    ExpressionError,
    evaluate,
)
from solvers.fe.time_values import TimeFunction, uses_time


def names():
    return {"x": np.linspace(0.0, 1.0, 11), "y": np.linspace(1.0, 2.0, 11), "k": 2.0}


def one_line_error(text, **kwargs):
    with pytest.raises(ExpressionError) as error:
        evaluate(text, names(), **kwargs)
    message = str(error.value)
    assert "\n" not in message and len(message) < 300, message
    return message


@pytest.mark.parametrize("text,reason", [
    ("1/0", "non-finite"), ("10**400", "non-finite"), ("9**9**9", "non-finite"),
    ("log(x - x)", "non-finite"), ("sqrt(-1 - x)", "non-finite"), ("exp(1000 * y)", "non-finite"),
    ("1e999", "out of the float64 range"), ("1" * 400, "out of the float64 range"),
    ("sin", "sin is a function"), ("k(x)", "unknown function"), ("sin(1, 2)", "takes 1 argument"),
    ("sin(x, x)", "takes 1 argument, got 2"), ("where()", "takes 3 arguments, got 0"),
    ("maximum(x, y, x)", "takes 2 arguments, got 3"), ("sin(x=1)", "unknown function"),
    ("q + x", "unknown name 'q'"), ("x ^ y", "BitXor is not allowed"),
    ("x << 1", "LShift is not allowed"), ("x if y else k", "IfExp is not allowed"),
    ("x.real", "Attribute is not allowed"), ("[1][0]", "Subscript is not allowed"),
    ("'a'", "only numbers"), ("1j", "only numbers"), ("__import__('os')", "unknown function"),
    ("x\x00", "invalid expression"), ("", "invalid expression"), ("(" * 300 + "x" + ")" * 300,
                                                                   "invalid expression"),
    ("-" * 3000 + "x", "nested too deeply"), ("+".join(["x"] * 1500), "at most"),
    ("x" * (MAX_LENGTH + 1), f"at most {MAX_LENGTH}"),
])
def test_a_bad_expression_is_one_line_naming_why(text, reason):
    assert reason in one_line_error(text)


def test_size_and_depth_limits_allow_realistic_expressions_and_refuse_beyond():
    terms = min(MAX_NODES // 4, MAX_DEPTH) - 10
    evaluate(" + ".join(f"{k} * x" for k in range(terms)), names())  # 4 nodes a term
    assert "at most" in one_line_error(" + ".join(f"{k} * x" for k in range(MAX_NODES)))
    evaluate("(" * 90 + "x" + ")" * 90, names())  # parentheses add no depth
    nested = "sin(" * (MAX_DEPTH // 2 - 2) + "x" + ")" * (MAX_DEPTH // 2 - 2)
    evaluate(nested, names())
    assert f"at most {MAX_DEPTH} levels" in one_line_error("-" * (MAX_DEPTH + 5) + "x")


def test_the_cost_is_bounded():
    start = time.perf_counter()
    for text in ("9**9**9", "9**9**9**9", "10**10**10", "(9**9)**(9**9)", "y ** 1e308 ** 1e308",
                 "2 ** 2 ** 2 ** 2 ** 2 ** 2 ** 2 ** 2"):
        with pytest.raises(ExpressionError):
            evaluate(text, names())
    assert time.perf_counter() - start < 1.0


def test_coordinates_are_never_written():
    given = names()
    before = {name: np.copy(value) for name, value in given.items()}
    for name, arity in ARITY.items():  # every function, with as many arguments as it takes
        evaluate(f"where({name}({', '.join(['x'] * arity)}) > 0, 1, 2)", given)
    for text in ("sin(x, x)", "abs(x, y)", "minimum(x, y, x)"):
        with pytest.raises(ExpressionError):
            evaluate(text, given)
    for name, value in given.items():
        np.testing.assert_array_equal(value, before[name])
    assert given["x"].flags.writeable  # the caller's own array is left as it was
    result = evaluate("x", given)  # a name alone: a copy the caller may write
    result[0] = 5.0
    assert given["x"][0] == 0.0


def test_functions_see_read_only_views(monkeypatch):
    seen = []
    monkeypatch.setitem(FUNCTIONS, "sin", lambda a: seen.append(a.flags.writeable) or np.sin(a))
    evaluate("sin(x)", names())
    assert seen == [False]


def test_arithmetic_is_as_on_the_device():
    x = names()["x"]
    np.testing.assert_array_equal(evaluate("(x < 0.5) - (x < 0.2)", names()),
                                  ((x < 0.5) & (x >= 0.2)).astype(float))
    np.testing.assert_array_equal(evaluate("~(x < 0.5)", names()), x >= 0.5)
    np.testing.assert_array_equal(evaluate("(x < 0.5) & (x > 0.2) | (x == 1)", names()),
                                  ((x < 0.5) & (x > 0.2)) | (x == 1))
    assert evaluate("where(x > 0, 1 / x, 0)", names())[0] == 0.0  # the unused branch's inf
    assert evaluate("2 * pi", {}) == pytest.approx(2 * np.pi)


def test_numbers_and_shapes_are_checked():
    for number in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ExpressionError, match="finite number"):
            evaluate(number, {})
    with pytest.raises(ExpressionError, match="expected a number or an expression"):
        evaluate([1, 2], {})
    assert evaluate("x", names(), shape=(11,)).shape == (11,)
    assert evaluate("1", names(), shape=(3, 11)).shape == (3, 11)
    assert "do not fit the grid (4,)" in one_line_error("x", shape=(4,))
    # a trial evaluation at points outside the domain may be infinite
    assert evaluate("1 / x", {"x": np.zeros(1)}, finite=False)[0] == np.inf


def test_no_runtime_warnings_escape():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in ("1/0", "log(x - x)", "exp(1e5 * y)", "y ** 1e308", "0 * (1 / (x - x))"):
            with pytest.raises(ExpressionError):
                evaluate(text, names())


def test_time_functions_refuse_before_compiling():
    for text, reason in [("1e999 * t", "out of the float64 range"), ("t % 2", "no device form"),
                         ("t // 2", "no device form"), ("sin(t, t)", "takes 1 argument"),
                         ("-" * 3000 + "t", "nested too deeply"), ("t ^ 2", "not allowed")]:
        with pytest.raises(ExpressionError, match=reason) as error:
            TimeFunction(text)
        assert "\n" not in str(error.value)
    with pytest.raises(ExpressionError, match="k = inf is not a finite number"):
        TimeFunction("k * t", {"k": float("inf")})
    assert TimeFunction("t / x").c_expression() == "(t / x)"  # inf at the origin only


def test_uses_time_never_raises():
    for text in ("-" * 5000 + "t", "t" * 10**5, "(" * 1000, "t\x00", 3.0):
        assert uses_time(text) is False
    assert uses_time("x * exp(-t)")
