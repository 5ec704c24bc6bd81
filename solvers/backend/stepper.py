"""Runs a solver's time step k times per `advance()`: as one captured graph, or eagerly.

The first advance runs eagerly (it compiles kernels and warms memory pools), then the k steps
are captured once and every later advance replays that graph. The eager path (`graph=False`)
is for debugging and is the baseline the benchmarks compare against.
"""


class Stepper:
    def __init__(self, backend, step, steps_per_graph=10, graph=True):
        if steps_per_graph < 1:
            raise ValueError(f"steps_per_graph must be >= 1, got {steps_per_graph}")
        self.backend = backend
        self.step = step
        self.steps_per_graph = int(steps_per_graph)
        self.use_graph = bool(graph)
        self._graph = None

    def _steps(self):
        for _ in range(self.steps_per_graph):
            self.step()

    def advance(self):
        """Launch steps_per_graph steps (asynchronously on cuda)."""
        if self._graph is not None:
            self._graph.replay()
            return
        self._steps()
        if self.use_graph:
            self._graph = self.backend.capture(self._steps)
