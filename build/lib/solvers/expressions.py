"""Safe arithmetic expressions of the coordinates, as written in case files.

`"where(x < 0.5, 1.0, 0.125)"` or `"1 + 0.2*sin(2*pi*(x + y))"`: numbers, the names given by
the caller (x, y, constants), the functions below, arithmetic, comparisons and `&`/`|`. Nothing
else is evaluated (no attributes, no subscripts, no builtins), so a case file cannot run code.
"""

import ast

import numpy as np

FUNCTIONS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh, "arctan2": np.arctan2,
    "where": np.where, "minimum": np.minimum, "maximum": np.maximum,
}
CONSTANTS = {"pi": np.pi, "e": np.e}

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name,
            ast.Constant, ast.Load, ast.operator, ast.unaryop, ast.cmpop)


class ExpressionError(ValueError):
    pass


def evaluate(text, names):
    """Evaluate `text` with numpy, the given {name: value} and the built-in constants and
    functions. Raises ExpressionError with a one-line reason."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        raise ExpressionError(f"expected a number or an expression string, got {text!r}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"invalid expression '{text}': {error.msg}") from None
    scope = {**CONSTANTS, **names}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ExpressionError(f"'{text}': {type(node).__name__} is not allowed in expressions")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ExpressionError(f"'{text}': only numbers are allowed as constants")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in FUNCTIONS and not node.keywords):
            raise ExpressionError(f"'{text}': unknown function (known: {', '.join(FUNCTIONS)})")
        if isinstance(node, ast.Name) and node.id not in scope and node.id not in FUNCTIONS:
            known = ", ".join(sorted(scope))
            raise ExpressionError(f"'{text}': unknown name '{node.id}' (known: {known})")
    with np.errstate(all="ignore"):
        value = eval(compile(tree, "<case>", "eval"), {"__builtins__": {}, **FUNCTIONS}, scope)
    return value
