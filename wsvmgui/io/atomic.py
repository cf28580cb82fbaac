"""Output files that cannot destroy anything: checked targets and atomic writes.

A write goes to a temporary file in the target's folder and is renamed over the target
only when complete, so a failure part-way (a full disk, an exception, Ctrl-C, SIGTERM)
never leaves a half-written file at the target path, an existing file stays intact, and
no temporary file is left behind (only SIGKILL, which no program can catch, can leave a
hidden ``.<name>.*.tmp`` beside the target).

New files get the mode the umask gives (``0666 & ~umask``); a replaced file keeps its
mode.  Targets that are not regular files (folders, device nodes, named pipes, sockets)
are refused, and :func:`check_outputs` refuses an output that would overwrite an input.
A write that fails (a full disk: ENOSPC, EDQUOT, EIO) is an InputError naming the file.

Files that belong together (a probabilities CSV, its sidecar and the model file) are
written by :func:`write_together`: every temporary file is written and synced first,
then all are renamed into place with SIGINT, SIGTERM, SIGHUP and SIGQUIT deferred, the
sidecar last, so a signal arrives either before any target changed or after all did;
the caller's ``written`` list says which targets were replaced.  Only SIGKILL or a power
loss between two renames (microseconds) can leave a new CSV beside an old sidecar, and
the sidecar records the CSV's sha256, so :func:`wsvmgui.io.results.read_results` detects
that pair.  (A directory swap would make the pair atomic even then, but turns the two
plain files users open into links or a folder.)
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import InputError

_UMASK_LOCK = threading.Lock()


def _kind(mode: int) -> str:
    """What a non-regular file is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_output(path: str | os.PathLike) -> Path:
    """Check that ``path`` can be written as a regular file; return its resolved path.

    Raises
    ------
    InputError
        The target exists and is not a regular file (folder, device, named pipe,
        socket), or its folder does not exist or is not writable.
    """
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError(f"cannot write {path}: it is {_kind(mode)}, not a regular file")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {path}: folder {folder} is not writable")
    return target


def check_input(path: str | os.PathLike, what: str = "input") -> Path:
    """Check that ``path`` is an existing regular file that can be read.

    A named pipe or device is refused rather than read (reading one could block forever).

    Raises
    ------
    InputError
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{what} file {path} is {_kind(mode)}, not a regular file")
    if not os.access(path, os.R_OK):
        raise InputError(f"cannot read {what} file {path}: permission denied")
    return Path(os.path.realpath(path))


def check_outputs(
    outputs: Mapping[str, str | os.PathLike | None],
    inputs: Mapping[str, str | os.PathLike | None],
) -> None:
    """Refuse outputs that would destroy an input, each other, or a special file.

    Parameters
    ----------
    outputs, inputs : mapping of description to path (None entries are skipped)
        Descriptions name the file in messages, e.g. ``{"--out": "p.csv"}``.

    Raises
    ------
    InputError
        An output is not a writable regular-file target (:func:`check_output`), is the
        same file as an input (also through links), or two outputs are the same file.
    """
    seen: dict[Path, str] = {}
    for what, path in inputs.items():
        if path is not None:
            seen[Path(os.path.realpath(path))] = f"the {what} {path}"
    for what, path in outputs.items():
        if path is None:
            continue
        target = check_output(path)
        clash = seen.get(target)
        if clash is None and target.exists():
            clash = next((v for k, v in seen.items() if _same_file(k, target)), None)
        if clash is not None:
            raise InputError(f"{what} {path} would overwrite {clash}; choose another file")
        seen[target] = f"the {what} {path}"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def new_file_mode() -> int:
    """The mode a new file gets from the process umask: ``0o666 & ~umask``."""
    umask = None
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("Umask:"):
                umask = int(line.split()[1], 8)
                break
    if umask is None:
        with _UMASK_LOCK:
            umask = os.umask(0o022)
            os.umask(umask)
    return 0o666 & ~umask


class Terminated(SystemExit):
    """SIGTERM, SIGHUP or SIGQUIT arrived; exit status ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


#: Signals that end a run and that a write must not split.
TERMINATING = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGTERM", "SIGHUP", "SIGQUIT")) if s
)
_ALL = (signal.SIGINT, *TERMINATING)


@contextlib.contextmanager
def termination_raises() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGQUIT raise :class:`Terminated` (so temporary files are
    removed and the command line can say what was written).

    Only signals at their default action are taken over (handlers others installed are
    left alone); only the main thread can set handlers, elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_exit(signum, frame):
        raise Terminated(signum)

    previous = {}
    for sig in TERMINATING:
        old = signal.getsignal(sig)
        if old is signal.SIG_DFL:
            previous[sig] = old
            signal.signal(sig, raise_exit)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGINT, SIGTERM, SIGHUP and SIGQUIT held back until the block ends, then acted on.

    Python runs signal handlers in the main thread between statements, whichever thread
    the operating system delivered the signal to; a handler that only records the
    signal makes the block uninterruptible by them (a thread's signal mask would not:
    another thread of the process, BLAS's or numba's, may receive the signal).  At the
    end the first signal recorded gets the action its own handler gives it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are handled in the main thread; nothing to hold back here
        return
    pending: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in _ALL}
    for sig in _ALL:
        signal.signal(sig, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        if pending:
            _act_on(pending[0], previous[pending[0]])


def _act_on(signum: int, handler: Any) -> None:
    """What ``handler`` (as ``signal.getsignal`` gave it) does with a signal."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        os.kill(os.getpid(), signum)  # the default action, now that the block is over


def _write_error(path: str | os.PathLike, exc: OSError) -> InputError:
    return InputError(f"cannot write {path}: {exc.strerror or exc}")


def _write_temp(
    target: Path, path: str | os.PathLike, data: bytes, mode: int, temps: list[str]
) -> str:
    """``data`` in a synced temporary file beside ``target``; returns its name.

    The name is added to ``temps`` before the file is created, so a signal at any moment
    leaves the caller knowing every file to remove.
    """
    tmp = str(target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp")
    temps.append(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        try:
            os.fchmod(fd, mode)
            view, done = memoryview(data), 0
            while done < len(data):
                done += os.write(fd, view[done:])
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from None
        raise
    return tmp


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_together(
    files: Sequence[tuple[str | os.PathLike, bytes]], written: list[str] | None = None
) -> None:
    """Write files that belong together: all or none replaced, as far as signals go.

    Parameters
    ----------
    files : sequence of (path, bytes)
        Targets in rename order (put the file that vouches for the others, the sidecar,
        last).
    written : list of str, optional
        Each target's path is appended once it has been replaced, so a caller that is
        interrupted can say exactly what was written.

    Raises
    ------
    InputError
        A target is not a regular-file target, or a write failed (naming the file; no
        target is then changed).
    """
    written = [] if written is None else written
    targets = [check_output(path) for path, _ in files]
    modes = []
    for target in targets:
        try:
            modes.append(stat.S_IMODE(os.stat(target).st_mode))
        except OSError:
            modes.append(new_file_mode())
    temps: list[str] = []
    with termination_raises():
        try:
            for (path, data), target, mode in zip(files, targets, modes, strict=True):
                _write_temp(target, path, data, mode, temps)
            with _signals_deferred():
                for path, _ in files:
                    check_output(path)  # still regular-file targets
                while temps:
                    path, target = files[len(written)][0], targets[len(written)]
                    try:
                        os.replace(temps[0], target)
                    except OSError as exc:
                        raise _write_error(path, exc) from None
                    temps.pop(0)
                    written.append(os.fspath(path))
                for folder in {t.parent for t in targets}:
                    _fsync_dir(folder)
        finally:
            for tmp in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it over ``path`` on success.

    Parameters
    ----------
    path : path-like
        Target; a symbolic link is followed (the file it points to is replaced).
    mode : {"w", "wb"}
    encoding : str or None
        Text encoding (ignored for binary mode).  Text is written with ``\\n`` line ends.

    Raises
    ------
    InputError
        The target is not a regular file, or its folder does not exist or cannot be
        written.
    """
    target = check_output(path)
    try:
        file_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        file_mode = new_file_mode()
    with termination_raises():
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            os.fchmod(fd, file_mode)
            if "b" in mode:
                opened = os.fdopen(fd, mode)
            else:
                opened = os.fdopen(fd, mode, encoding=encoding, newline="")
            with opened as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            check_output(path)  # still a regular-file target (nothing replaced it meanwhile)
            os.replace(tmp, target)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):
                raise _write_error(path, exc) from None
            raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_writer(path, "w") as handle:
        handle.write(text)
