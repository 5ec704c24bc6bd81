"""What a sweep says while it runs: one overall progress line on stderr (`SweepProgress`) and a
line per run event in OUT/<case name>-sweep.log (`SweepLog`)."""

import time
from datetime import datetime

from .progress import Progress, format_duration


class SweepProgress(Progress):
    """Runs done of all (ok, failed), running, elapsed and ETA: one line redrawn in place on a
    TTY, a line per finished run otherwise, nothing if quiet. Runs done earlier (skipped)
    count as done and ok; the ETA is from the runs finished in this sweep. A Progress over
    runs instead of simulated time: its stream, TTY test and close()."""

    def __init__(self, name, total, skipped, quiet=False, stream=None):
        super().__init__(total, 0, stream=stream, quiet=quiet)
        self.name, self.total = name, total
        self.done, self.ok, self.failed, self.running = skipped, skipped, 0, 0
        self.skipped = skipped
        self.start = time.monotonic()

    def text(self):
        """'sweep sod: 3/8 runs done (3 ok, 0 failed), 2 running, elapsed 4.1s, ETA 6.2s'."""
        elapsed = time.monotonic() - self.start
        finished = self.done - self.skipped
        eta = "?"
        if finished:
            eta = format_duration(elapsed / finished * (self.total - self.done))
        return (f"sweep {self.name}: {self.done}/{self.total} runs done ({self.ok} ok, "
                f"{self.failed} failed), {self.running} running, elapsed "
                f"{format_duration(elapsed)}, ETA {eta}")

    def note(self, line):
        """A line of its own about the whole sweep (before the first progress line)."""
        if not self.quiet:
            self.stream.write(f"sweep {self.name}: {line}\n")
            self.stream.flush()

    def started(self):
        self.running += 1
        if self.tty:
            self._show()

    def finished(self, ok):
        self.running -= 1
        self.done += 1
        self.ok += bool(ok)
        self.failed += not ok
        self._show()

    def _show(self):
        if self.quiet:
            return
        line = self.text()
        if self.tty:  # over the line on screen, blanking the rest of a longer one
            line, self._width = "\r" + line.ljust(self._width), len(line)
        else:
            line += "\n"
        self.stream.write(line)
        self.stream.flush()


class SweepLog:
    """OUT/<case name>-sweep.log, appended: 'TIME EVENT NAME DETAIL', a line per run start,
    end (status, wall seconds) or skip, and the traceback of a run that failed unexpectedly."""

    def __init__(self, path):
        self.path = path
        self.stream = open(path, "a", buffering=1)  # a line at a time

    def line(self, event, name, detail=""):
        stamp = datetime.now().isoformat(timespec="milliseconds")
        self.stream.write(f"{stamp} {event:<7} {name} {detail}".rstrip() + "\n")

    def start(self, run):
        values = ", ".join(f"{k}={v}" for k, v in run.parameters.items())
        self.line("start", run.name, values)

    def end(self, record):
        self.line("end", record["name"], f"{record['status']} in {record['wall_seconds']:.2f} s")
        if "traceback" in record:
            self.stream.write(record["traceback"])

    def close(self):
        self.stream.close()
