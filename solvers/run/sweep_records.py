"""A sweep's records: OUT/<case name>-sweep.jsonl, one JSON line per finished run, appended by
the sweep's parent process and synced to disk before the next; OUT/<case name>-sweep.csv, the
table regenerated from every record of the folder after each run.

A record is a plain dict: key, name, parameters (the swept values), overrides (the override set
its key hashes), status ("ok" or "failed: <reason>"), figures (the solver's report), wall_seconds
(setup, run and output), files (the paths written), finished (ISO time), host, pid and
process_run (1 for the first run of its process, a worker's that paid for its start). Reading
skips a line that does not parse (a kill mid-write leaves a truncated last line); the next
append first ends that line, so that no record is joined to it.
"""

import csv
import json
import os
from pathlib import Path

from ..io.safe import temp_path

LEADING = ("name", "key")  # the table's first columns; then the swept keys, status and figures


class RecordStore:
    """The records and the table of the sweeps of one case in one folder."""

    def __init__(self, folder, name):
        self.folder = Path(folder)
        self.jsonl = self.folder / f"{name}-sweep.jsonl"
        self.table = self.folder / f"{name}-sweep.csv"
        self._ended = False  # the file is known to end with a whole line

    def read(self):
        """Every record in the order written; lines that do not parse are skipped."""
        try:
            text = self.jsonl.read_text(errors="replace")
        except FileNotFoundError:
            return []
        records = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                records.append(record)
        return records

    def latest(self):
        """{key: the last record of that key}."""
        return {record["key"]: record for record in self.read()}

    def complete(self, record):
        """Whether a record is of a run that finished ok and whose files are all still in the
        folder (found by name: the folder may have moved)."""
        return record.get("status") == "ok" and all(
            (self.folder / Path(path).name).is_file() for path in record.get("files", []))

    def append(self, record):
        """Append one record as a line with one write (O_APPEND), then fsync."""
        line = (json.dumps(record, default=str) + "\n").encode()
        fd = os.open(self.jsonl, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if not self._ended and os.fstat(fd).st_size:
                with open(self.jsonl, "rb") as stream:  # a torn last line gets its end
                    stream.seek(-1, os.SEEK_END)
                    if stream.read(1) != b"\n":
                        line = b"\n" + line
            self._ended = True
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def write_table(self, order=()):
        """Regenerate the CSV from every record (temp file, then rename): one row per key, its
        latest record; the keys in `order` first (the sweep's own order), then the others as
        they first appear. Columns: name, key, each swept key (the union over the records),
        status, wall_seconds, each figure, output (the run file)."""
        latest = self.latest()
        first = [key for key in dict.fromkeys(order) if key in latest]
        chosen = set(first)
        keys = first + [key for key in latest if key not in chosen]
        records = [latest[key] for key in keys]
        swept = _union(record.get("parameters", {}) for record in records)
        figures = _union(record.get("figures", {}) for record in records)
        columns = [*LEADING, *swept, "status", "wall_seconds", *figures, "output"]
        tmp = temp_path(self.table)
        with open(tmp, "w", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=columns)
            writer.writeheader()
            for record in records:
                files = record.get("files") or [""]
                writer.writerow({"name": record.get("name"), "key": record["key"],
                                 **record.get("parameters", {}), "status": record.get("status"),
                                 "wall_seconds": record.get("wall_seconds"),
                                 **record.get("figures", {}), "output": files[0]})
        os.replace(tmp, self.table)


def _union(dicts):
    """The keys of several dicts, each once, in order of first appearance."""
    return list(dict.fromkeys(key for d in dicts for key in d))
