"""Values that change in time, evaluated on the device inside a captured step: a case-file
expression of x, y, z and t translated to C and compiled into raw_kernels/fe/values.cu.

    g = TimeFunction("(1 + x**2) * exp(-t)", constants={"k": 2.0})
    g(x, y, t)                   # NumPy, as any boundary or source function (setup, t0)
    launch = bind_nodal_values(backend, dtype, g, nodes, points, times, which, out)
    launch()                     # out[nodes] = g(points[nodes], times[which])

The expression language is solvers/expressions.py's (the same checks run first); each
function maps to its C math function, `where` to ?:, `&`/`|` to &&/||, `**` to pow, numbers
and constants to `real` literals, so an fp32 build has no FP64 arithmetic.
"""

import ast

import numpy as np

from ..expressions import CONSTANTS, ExpressionError, evaluate, parse

SOURCE = "fe/values.cu"
THREADS = 256
C_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log",
               "sqrt": "sqrt", "abs": "fabs", "tanh": "tanh", "arctan2": "atan2",
               "minimum": "fmin", "maximum": "fmax"}
C_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.BitAnd: "&&",
               ast.BitOr: "||", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
               ast.Eq: "==", ast.NotEq: "!="}
COORDINATES = ("x", "y", "z", "t")
# Every function and operator, both branches taken at random points: for the NVRTC and host
# compile checks and tests/test_fe_time_values.py.
SAMPLE = ("where((x < 0.5) & (y >= 0) | (z > 1.5), sin(x) * cos(y) + tan(z) * exp(-t) + "
          "log(1 + x * x) + sqrt(abs(y)) + tanh(t) + arctan2(y, x), minimum(x, y) / "
          "maximum(z, t) ** 2 - (t <= 1) + (x == y) + (x > z))")


def compiled_kernels():
    """(source, defines) for the compile checks (REAL_BITS aside): values.cu with SAMPLE, which
    uses every function and operator, standing for any expression."""
    for gdim in (2, 3):
        yield SOURCE, defines(gdim, TimeFunction(SAMPLE).c_expression())


def defines(gdim, c_expression):
    return {"GDIM": gdim, "VALUE": c_expression}


def uses_time(value):
    """Whether a case expression (a string) names t."""
    if not isinstance(value, str):
        return False
    try:
        tree = parse(value)
    except ExpressionError:
        return False  # the expression check reports it
    return any(isinstance(node, ast.Name) and node.id == "t" for node in ast.walk(tree))


class TimeFunction:
    """An expression of x, y, z, t (and named constants): callable as f(x, y[, z], t) on
    NumPy arrays, and translatable to C for a device kernel."""

    def __init__(self, text, constants=None):
        self.text = str(text)
        self.constants = {name: float(value) for name, value in (constants or {}).items()}
        zero = np.zeros(1)
        # An ExpressionError for a bad expression now, and for one with no device form
        # before any compiler sees it.
        evaluate(self.text, self._names(zero, zero, zero, 0.0), finite=False)
        try:
            self.c_expression()
        except ValueError as error:
            raise ExpressionError(str(error)) from None

    def _names(self, *args):
        coordinates, t = args[:-1], args[-1]
        names = {**dict(zip("xyz", coordinates)), "t": t, **self.constants}
        names.setdefault("y", 0.0)
        names.setdefault("z", 0.0)
        return names

    def __call__(self, *args):
        return evaluate(self.text, self._names(*args))

    def __repr__(self):
        return f"TimeFunction({self.text!r})"

    def c_expression(self):
        return self._c(parse(self.text).body)

    def _c(self, node):
        if isinstance(node, ast.Constant):
            return f"R({float(node.value)!r})"
        if isinstance(node, ast.Name):
            if node.id in COORDINATES:
                return node.id
            value = float(self.constants.get(node.id, CONSTANTS.get(node.id)))
            if not np.isfinite(value):
                raise ValueError(f"'{self.text}': {node.id} = {value} is not a finite number")
            return f"R({value!r})"
        if isinstance(node, ast.UnaryOp):
            operator = {ast.USub: "-", ast.UAdd: "+", ast.Not: "!", ast.Invert: "!"}
            return f"({operator[type(node.op)]}{self._c(node.operand)})"
        if isinstance(node, ast.BinOp):
            left, right = self._c(node.left), self._c(node.right)
            if isinstance(node.op, ast.Pow):
                return f"pow({left}, {right})"
            if type(node.op) not in C_OPERATORS:
                raise ValueError(f"'{self.text}': operator {type(node.op).__name__} has no "
                                 "device form")
            return f"({left} {C_OPERATORS[type(node.op)]} {right})"
        if isinstance(node, ast.Compare):
            terms = [node.left, *node.comparators]
            parts = [f"({self._c(a)} {C_OPERATORS[type(op)]} {self._c(b)})"
                     for a, op, b in zip(terms, node.ops, terms[1:])]
            return "(" + " && ".join(parts) + ")"
        if isinstance(node, ast.Call):
            args = [self._c(arg) for arg in node.args]
            if node.func.id == "where":
                return f"({args[0]} ? {args[1]} : {args[2]})"
            return f"{C_FUNCTIONS[node.func.id]}({', '.join(args)})"
        raise ValueError(f"'{self.text}': {type(node).__name__} has no device form")


def bind_nodal_values(backend, dtype, function, nodes, points, times, which, out):
    """A capturable launch of out[nodes] = function(points[nodes], times[which]): points is a
    device (nodes, gdim) array, times a device vector of `real`."""
    gdim = points.shape[1]
    kernels = backend.module(SOURCE, dtype, defines(gdim, function.c_expression()))
    nodes = backend.to_device(np.ascontiguousarray(nodes, np.int32))
    count = nodes.shape[0]
    # The launch holds its arguments, so the solver keeping the launch keeps `nodes` alive.
    return kernels.fe_nodal_values.bind(-(-count // THREADS), THREADS, nodes, points, times,
                                        which, out, count)
