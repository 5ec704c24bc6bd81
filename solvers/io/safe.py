"""Writing output files so that an error never damages what is already on disk.

Every file is written to a hidden temporary `.<name>.tmp-<pid>` in its folder and renamed over
its target only once complete. HDF5 files are written through a `GuardedFile` (h5py's fileobj
driver): an OS error (a full disk, a file-size limit) is recorded there and never reaches
HDF5, whose library is left in a state that crashes the process when one of its writes fails.
The writer then reports the error as one `OutputError` and keeps, at most, what it had flushed
before the error (after checking that it reads back). `remove_stale_temps` removes temporary
files that processes no longer alive left behind (a kill -9, a power cut).
"""

import errno
import os
import re
from pathlib import Path

from ..solver import RunError

TEMP_PATTERN = re.compile(r"^\..+\.tmp-(\d+)$")


class OutputError(RunError):
    """Writing an output file failed (a full disk, a file-size limit, an I/O error); earlier
    results are untouched. The message is one line: 'error writing PATH: reason'."""

    def __init__(self, path, reason):
        super().__init__(f"error writing {path}: {reason}")
        self.path = path


def reason(error):
    """The words of an OS or HDF5 error, without errno numbers or HDF5's stack."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def temp_path(path):
    """The hidden temporary file of `path` for this process."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_stale_temps(folder):
    """Delete the temporary files in `folder` whose process no longer exists (never those of a
    live process); returns the paths removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = TEMP_PATTERN.match(entry.name)
        if match and not _alive(int(match.group(1))) and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass
    return removed


def prepare_folder(folder, targets):
    """Create `folder` and check, before a run starts, that its files can be written: an
    OSError naming the path if the folder cannot be made or written, or a target is a folder.
    Stale temporary files of dead processes are removed."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "the output folder is a file", str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, "the output folder is not writable", str(folder))
    for target in targets:
        if Path(target).is_dir():
            raise IsADirectoryError(errno.EISDIR, "exists and is a folder", str(target))
    remove_stale_temps(folder)


def replace_all(pairs):
    """os.replace each (source, target) in order."""
    for source, target in pairs:
        os.replace(source, target)


def unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class GuardedFile:
    """An unbuffered file for h5py's fileobj driver that never raises on writing: the first OS
    error is kept in `error`, and it and every later write or truncation are dropped, so HDF5
    finishes (and closes) as if the disk were fine. `flushed_size` is the file's size after the
    last flush the caller confirmed (`mark_flushed`): a consistent HDF5 file, which `rollback`
    truncates back to."""

    def __init__(self, path):
        self.path = Path(path)
        self.raw = open(self.path, "w+b", buffering=0)
        self.error = None
        self.flushed_size = 0

    def seek(self, offset, whence=0):
        return self.raw.seek(offset, whence)

    def tell(self):
        return self.raw.tell()

    def read(self, size=-1):
        return self.raw.read(size)

    def readinto(self, buffer):
        return self.raw.readinto(buffer)

    def write(self, data):
        view = memoryview(data).cast("B")
        if self.error is None:
            try:
                done = 0
                while done < len(view):
                    done += self.raw.write(view[done:])
            except OSError as error:
                self.error = error
        return len(view)

    def truncate(self, size=None):
        if self.error is None:
            try:
                return self.raw.truncate(size)
            except OSError as error:
                self.error = error
        return size

    def flush(self):
        pass

    def mark_flushed(self):
        if self.error is None:
            self.flushed_size = os.fstat(self.raw.fileno()).st_size

    def close(self):
        try:
            self.raw.close()
        except OSError as error:
            self.error = self.error or error

    def rollback(self):
        """Truncate the (closed) file to its last confirmed flush; False if that fails."""
        try:
            os.truncate(self.path, self.flushed_size)
            return self.flushed_size > 0
        except OSError:
            return False
