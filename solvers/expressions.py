"""Safe arithmetic expressions of the coordinates, as written in case files.

`"where(x < 0.5, 1.0, 0.125)"` or `"1 + 0.2*sin(2*pi*(x + y))"`: numbers, the names given by
the caller (x, y, constants), the functions below, arithmetic, comparisons and `&`/`|`. Nothing
else is evaluated (no attributes, no subscripts, no builtins), so a case file cannot run code.

The cost is bounded: at most MAX_LENGTH characters, MAX_NODES syntax-tree nodes and MAX_DEPTH
levels of nesting; every number is a float64 before any arithmetic (so `9**9**9` is inf at
once, not a huge integer); functions take exactly their number of arguments (no `out=`); the
given arrays are read-only views; `&`, `|`, `~` are logical (as `&&`, `||`, `!` on the device).
The result must be finite (an ExpressionError otherwise).
"""

import ast
import math

import numpy as np

FUNCTIONS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh, "arctan2": np.arctan2,
    "where": np.where, "minimum": np.minimum, "maximum": np.maximum,
}
ARITY = {name: 1 for name in FUNCTIONS} | {"arctan2": 2, "where": 3, "minimum": 2,
                                           "maximum": 2}
CONSTANTS = {"pi": np.pi, "e": np.e}
MAX_LENGTH = 4000
MAX_NODES = 1000  # numbers, names, operations and calls
MAX_DEPTH = 200  # a sum of n terms is n deep

_ARITHMETIC = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
               ast.Div: np.true_divide, ast.Pow: np.power, ast.Mod: np.mod,
               ast.FloorDiv: np.floor_divide}
_LOGICAL = {ast.BitAnd: np.logical_and, ast.BitOr: np.logical_or}
_UNARY = {ast.USub: np.negative, ast.UAdd: np.positive, ast.Not: np.logical_not,
          ast.Invert: np.logical_not}
_COMPARE = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
            ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name,
            ast.Constant, ast.Load, *_ARITHMETIC, *_LOGICAL, *_UNARY, *_COMPARE)


class ExpressionError(ValueError):
    pass


def quoted(text, limit=60):
    """An expression for a one-line message: whitespace runs as one space, at most `limit`
    characters, in quotes."""
    text = " ".join(str(text).split())
    return f"'{text[:limit - 3]}...'" if len(text) > limit else f"'{text}'"


def parse(text, functions=None):
    """The checked syntax tree of an expression string: size, depth, the allowed nodes, known
    functions (FUNCTIONS and the caller's {name: number of arguments}) called with their number
    of arguments. Raises ExpressionError."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression of {len(text)} characters (at most {MAX_LENGTH})")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"invalid expression {quoted(text)}: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression {quoted(text)} is nested too deeply (at most "
                              f"{MAX_DEPTH} levels)") from None
    nodes, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        nodes += isinstance(node, ast.expr)
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            limit = f"{MAX_NODES} terms" if nodes > MAX_NODES else f"{MAX_DEPTH} levels"
            raise ExpressionError(f"expression {quoted(text)} is too large (at most {limit})")
        _check_node(node, text, ARITY | (functions or {}))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def _check_node(node, text, arity):
    if not isinstance(node, _ALLOWED):
        raise ExpressionError(f"{quoted(text)}: {type(node).__name__} is not allowed in "
                              "expressions")
    if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
        raise ExpressionError(f"{quoted(text)}: only numbers are allowed as constants")
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in arity or node.keywords:
            raise ExpressionError(f"{quoted(text)}: unknown function (known: "
                                  f"{', '.join(arity)})")
        if len(node.args) != arity[name]:
            count = arity[name]
            raise ExpressionError(f"{quoted(text)}: {name} takes {count} argument"
                                  f"{'s' if count > 1 else ''}, got {len(node.args)}")


def _read_only(value):
    """Arrays as read-only views, numbers as float64 (so 1/0 is inf, not an exception)."""
    if isinstance(value, np.ndarray):
        view = value.view()
        view.flags.writeable = False
        return view
    return np.float64(value) if isinstance(value, (int, float, np.number)) else value


def _number(value):
    """Booleans as 0.0 / 1.0 for arithmetic (as in C)."""
    value = np.asarray(value)
    return value.astype(np.float64) if value.dtype == bool else value


def _eval(node, scope, text):
    if isinstance(node, ast.Constant):
        try:
            value = float(node.value)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise ExpressionError(f"{quoted(text)}: a number is out of the float64 range")
        return np.float64(value)
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in FUNCTIONS:
            raise ExpressionError(f"{quoted(text)}: {node.id} is a function: call it, e.g. "
                                  f"{node.id}({', '.join('xyz'[:ARITY[node.id]])})")
        raise ExpressionError(f"{quoted(text)}: unknown name '{node.id}' (known: "
                              f"{', '.join(sorted(scope))})")
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, scope, text)
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = _number(operand)
        return _UNARY[type(node.op)](operand)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, scope, text), _eval(node.right, scope, text)
        if type(node.op) in _LOGICAL:
            return _LOGICAL[type(node.op)](left, right)
        return _ARITHMETIC[type(node.op)](_number(left), _number(right))
    if isinstance(node, ast.Compare):
        terms = [_eval(term, scope, text) for term in (node.left, *node.comparators)]
        result = True
        for a, op, b in zip(terms, node.ops, terms[1:]):
            result = np.logical_and(result, _COMPARE[type(op)](a, b))
        return result
    if isinstance(node, ast.Call):
        args = [_eval(arg, scope, text) for arg in node.args]
        if node.func.id != "where":
            args = [_number(arg) for arg in args]
        return (FUNCTIONS.get(node.func.id) or scope[node.func.id])(*args)
    raise ExpressionError(f"{quoted(text)}: {type(node).__name__} is not allowed in expressions")


def evaluate(text, names, shape=None, finite=True, functions=None):
    """Evaluate `text` with numpy, the given {name: value} (arrays are read, never written)
    and the built-in constants and functions, and the caller's `functions` ({name: (function,
    number of arguments)}); with `shape`, the result broadcast to it. Raises ExpressionError
    with a one-line reason, also for a non-finite result (unless not `finite`: a trial
    evaluation at points that need not be in the domain)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if not math.isfinite(text):
            raise ExpressionError(f"expected a finite number, got {text!r}")
        value = float(text)
    elif not isinstance(text, str):
        raise ExpressionError(f"expected a number or an expression string, got "
                              f"{quoted(repr(text))}")
    else:
        functions = functions or {}  # the caller's {name: (function, number of arguments)}
        tree = parse(text, {name: count for name, (_, count) in functions.items()})
        names = {**names, **{name: function for name, (function, _) in functions.items()}}
        scope = {name: _read_only(value) for name, value in {**CONSTANTS, **names}.items()}
        try:
            with np.errstate(all="ignore"):
                value = _eval(tree.body, scope, text)
        except ExpressionError:
            raise
        except (ArithmeticError, TypeError, ValueError, MemoryError) as error:
            raise ExpressionError(f"{quoted(text)} cannot be evaluated: "
                                  f"{quoted(error, 80)}") from None
    if shape is not None:
        try:
            value = np.broadcast_to(value, shape)
        except ValueError:
            raise ExpressionError(f"{quoted(text)}: its values (shape {np.shape(value)}) do "
                                  f"not fit the grid {tuple(shape)}") from None
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ExpressionError(f"{quoted(text)} gives {array.dtype} values, not numbers")
    if finite and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ExpressionError("expression gives non-finite values")
    if shape is None and isinstance(value, np.ndarray) and not value.flags.writeable:
        value = value.copy()  # a name alone: the caller's array, never handed back to write
    return value
