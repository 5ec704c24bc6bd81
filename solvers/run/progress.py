"""Progress of a run: for the command line a redrawn bar on a terminal, plain lines otherwise;
for `run.run(progress=...)` also a tqdm bar (a notebook widget in Jupyter), a caller's object or
function (`as_progress`)."""

import sys
from collections.abc import Callable
from typing import Protocol, runtime_checkable

BAR_WIDTH = 24
REDRAW_SECONDS = 0.2  # at most 5 redraws a second


def format_rate(cell_updates_per_second):
    """Cell updates per second in M or G, three significant digits: '312 Mcell/s'."""
    if cell_updates_per_second >= 1e9:
        return f"{cell_updates_per_second / 1e9:.3g} Gcell/s"
    return f"{cell_updates_per_second / 1e6:.3g} Mcell/s"


def format_duration(seconds):
    """'4.2s' under a minute, else 'm:ss' or 'h:mm:ss'."""
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress:
    """Report a run's progress: `update(t, steps, elapsed)` after each replay (elapsed: wall
    seconds since the run started), `close()` at the end.

    On a TTY one line is redrawn with \\r; otherwise a line is printed at each 10% of simulated
    time. quiet prints nothing. Rates and ETA are measured from the first update, which
    excludes kernel compilation and graph capture done before it.
    """

    def __init__(self, end_time, cells, stream=None, quiet=False):
        self.end_time = float(end_time)
        self.cells = int(cells)
        self.stream = sys.stderr if stream is None else stream  # looked up now, not at import
        self.quiet = quiet
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._first = None  # (t, steps, elapsed) at the first update
        self._last_draw = None  # elapsed at the last TTY redraw
        self._width = 0  # length of the line on screen, to blank a longer old one
        self._next_tenth = 1  # non-TTY: next 10% mark to report

    def _text(self, t, steps, elapsed):
        """'45.0%  t=0.045 / 0.1  steps 1234  312 Mcell/s  elapsed 3.1s  ETA 3.8s'."""
        t0, steps0, elapsed0 = self._first
        if elapsed > elapsed0 and steps > steps0:
            rate = (steps - steps0) * self.cells / (elapsed - elapsed0)
        else:  # the first update: count from the start of the run
            rate = steps * self.cells / elapsed if elapsed > 0 else 0.0
        eta = "?"
        if t > t0 and elapsed > elapsed0:
            eta = format_duration(max(self.end_time - t, 0.0) * (elapsed - elapsed0) / (t - t0))
        return (f"{100 * self._fraction(t):5.1f}%  t={t:.4g} / {self.end_time:g}  "
                f"steps {steps}  {format_rate(rate)}  elapsed {format_duration(elapsed)}  "
                f"ETA {eta}")

    def _fraction(self, t):
        return min(max(t / self.end_time, 0.0), 1.0)

    def update(self, t, steps, elapsed):
        if self.quiet:
            return
        if self._first is None:
            self._first = (t, steps, elapsed)
        if self.tty:
            self._redraw(t, steps, elapsed)
            return
        # Not a terminal (a log file, CI): one line per 10% of simulated time passed.
        tenths = self._fraction(t) * 10 * (1 + 1e-9)
        if tenths >= self._next_tenth:
            self._next_tenth = int(tenths) + 1
            self.stream.write(self._text(t, steps, elapsed) + "\n")
            self.stream.flush()

    def _redraw(self, t, steps, elapsed):
        """Redraw the bar line in place, at most every REDRAW_SECONDS (always at the end)."""
        recent = self._last_draw is not None and elapsed - self._last_draw < REDRAW_SECONDS
        if recent and t < self.end_time:
            return
        self._last_draw = elapsed
        filled = int(round(BAR_WIDTH * self._fraction(t)))
        line = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {self._text(t, steps, elapsed)}"
        self.stream.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.stream.flush()

    def close(self):
        """End the redrawn line (TTY), so that later output starts on a new line."""
        if not self.quiet and self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


@runtime_checkable
class ProgressDisplay(Protocol):
    """What a run reports its progress to: `update(t, steps, elapsed)` after each graph replay
    (elapsed: wall seconds since the run started), `close()` once at the end."""

    def update(self, t: float, steps: int, elapsed: float) -> None: ...

    def close(self) -> None: ...


ProgressLike = bool | ProgressDisplay | Callable[[float, int, float], object] | None


class _Callback:
    """A function f(t, steps, elapsed) as a progress display."""

    def __init__(self, function):
        self.function = function

    def update(self, t, steps, elapsed):
        self.function(t, steps, elapsed)

    def close(self):
        pass


class TqdmProgress:
    """A tqdm bar over simulated time (t of end_time), with steps and cell updates per second
    after it; tqdm.auto makes it a widget in Jupyter and a text bar elsewhere."""

    def __init__(self, bar, end_time, cells):
        self.bar = bar
        self.end_time = float(end_time)
        self.cells = int(cells)
        self._first = None  # (steps, elapsed) at the first update, as Progress counts rates
        if bar.total is None:
            bar.total = self.end_time

    def update(self, t, steps, elapsed):
        if self._first is None:
            self._first = (steps, elapsed)
        steps0, elapsed0 = self._first
        rate = (steps - steps0) * self.cells / (elapsed - elapsed0) if elapsed > elapsed0 else 0
        self.bar.set_postfix_str(f"steps {steps}, {format_rate(rate)}", refresh=False)
        self.bar.update(min(t, self.bar.total) - self.bar.n)

    def close(self):
        self.bar.close()


def _tqdm_bar(progress):
    """progress if it is a tqdm bar (tqdm already imported by whoever made it), else None."""
    tqdm = sys.modules.get("tqdm")
    return progress if tqdm is not None and isinstance(progress, tqdm.tqdm) else None


def default_bar(name, end_time, cells):
    """The bar of `progress=True`: tqdm.auto's where tqdm is installed, else a Progress line."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return Progress(end_time, cells)
    bar = tqdm(total=float(end_time), desc=name, unit="",
               bar_format="{desc}: {percentage:3.0f}%|{bar}| t={n:.4g}/{total:.4g} "
               "[{elapsed}<{remaining}{postfix}]")
    return TqdmProgress(bar, end_time, cells)


def as_progress(progress, run):
    """What `CaseRun.run(progress=...)` accepts, as a display with update and close (or None):
    None or False: nothing; True: `default_bar` (nothing for a steady solve, which has no time
    to show); a tqdm bar: it, filled with simulated time; any object with `update(t, steps,
    elapsed)` and `close()`: itself; a function f(t, steps, elapsed): called after each
    replay."""
    if progress is None or progress is False:
        return None
    if progress is True:
        if run.steady:
            return None
        return default_bar(run.name, run.simulation.end_time, run.mesh.ncells)
    bar = _tqdm_bar(progress)
    if bar is not None:
        return TqdmProgress(bar, run.simulation.end_time, run.mesh.ncells)
    if isinstance(progress, ProgressDisplay):
        return progress
    if callable(progress):
        return _Callback(progress)
    raise TypeError(f"progress must be True, False, None, an object with update(t, steps, "
                    f"elapsed) and close(), or a function f(t, steps, elapsed); got "
                    f"{type(progress).__name__}")


def progress_for(run, quiet=False):
    """The progress display of a CaseRun: a Progress for a time-dependent run, None for a
    steady solve (it has no simulated time to show)."""
    if run.steady:
        return None
    return Progress(run.simulation.end_time, run.mesh.ncells, quiet=quiet)
