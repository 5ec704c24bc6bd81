"""Case files: the schema, the loader, the generated reference, and one adapter per solver
(solvers/cases/<solver>.py) that turns a validated case into that solver."""

from .loader import adapters, load, solver_class
from .schema import REQUIRED, Case, CaseError, Key, parse_override, parse_value

__all__ = ["REQUIRED", "Case", "CaseError", "Key", "adapters", "load", "parse_override",
           "parse_value", "solver_class"]
