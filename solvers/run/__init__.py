"""The run layer: a case run with output (runner), the time loop (simulation), a steady solve,
sweeps, progress and machine info. It drives solvers only through the contract in
solvers/solver.py."""
