"""Independent references for tests and benchmarks; the solvers themselves do not use them."""
