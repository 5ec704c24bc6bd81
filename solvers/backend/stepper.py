"""Runs a solver's time step k times per `advance()`: as one captured graph, or eagerly.

The first advance runs eagerly (it compiles kernels and warms memory pools), then the k steps
are captured once and every later advance replays that graph. The eager path (`graph=False`)
is for debugging and is the baseline the benchmarks compare against.

A step with work for the host between its launches (a decomposed run's halo exchange) is
given as segments: launches and HostWork, in order. Its launches between two pieces of host
work are captured into a graph of their own, and each advance runs the steps segment by
segment: graph, host work, graph, ...
"""


class HostWork:
    """Work for the host between a step's launches (it may read and write device arrays):
    a segmented step runs it between the graphs of its launches, never inside one."""

    def __init__(self, function):
        self.function = function

    def __call__(self):
        self.function()


def _grouped(parts):
    """Segments of a step: HostWork alone, consecutive launches together (as lists)."""
    groups = []
    for part in parts:
        if isinstance(part, HostWork):
            groups.append(part)
        elif groups and isinstance(groups[-1], list):
            groups[-1].append(part)
        else:
            groups.append([part])
    return groups


class Stepper:
    def __init__(self, backend, step, steps_per_graph=10, graph=True, segments=None):
        if steps_per_graph < 1:
            raise ValueError(f"steps_per_graph must be >= 1, got {steps_per_graph}")
        self.backend = backend
        self.step = step
        self.steps_per_graph = int(steps_per_graph)
        self.use_graph = bool(graph)
        self._graph = None
        self._segments = None if segments is None else _grouped(segments)
        self._segment_graphs = None

    def _steps(self):
        for _ in range(self.steps_per_graph):
            self.step()

    def advance(self):
        """Launch steps_per_graph steps (asynchronously on cuda)."""
        if self._segments is not None and self.use_graph:
            self._advance_segments()
            return
        if self._graph is not None:
            self._graph.replay()
            return
        self._steps()
        if self.use_graph:
            self._graph = self.backend.capture(self._steps)

    def _advance_segments(self):
        """A segmented step: eagerly the first time, then each run of launches replayed as a
        graph of its own with the host work between them."""
        if self._segment_graphs is None:
            self._steps()

            # Each run of launches captured once, in the step's order.
            def launches(group):
                def run():
                    for launch in group:
                        launch()
                return run

            self._segment_graphs = [
                part if isinstance(part, HostWork) else self.backend.capture(launches(part))
                for part in self._segments]
            return
        for _ in range(self.steps_per_graph):
            for part in self._segment_graphs:
                if isinstance(part, HostWork):
                    part()
                else:
                    part.replay()
