"""Output files that cannot destroy anything: checked targets and atomic writes.

A write goes to a temporary file in the target's folder and is renamed over the target
only when complete, so a failure part-way (a full disk, an exception, Ctrl-C, SIGTERM)
never leaves a half-written file at the target path, an existing file stays intact, and
no temporary file is left behind (only SIGKILL, which no program can catch, can leave a
hidden ``.<name>.*.tmp`` beside the target).

New files get the mode the umask gives (``0666 & ~umask``); a replaced file keeps its
mode.  Targets that are not regular files (folders, device nodes, named pipes, sockets)
are refused, and :func:`check_outputs` refuses an output that would overwrite an input.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

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


@contextlib.contextmanager
def _termination_raises() -> Iterator[None]:
    """While writing, SIGTERM and SIGHUP raise SystemExit so the temporary file is removed.

    Only the main thread can set signal handlers; elsewhere (the app's workers) this does
    nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_exit(signum, frame):
        raise SystemExit(128 + signum)

    previous = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        old = signal.getsignal(sig)
        if old is signal.SIG_DFL:  # leave handlers others installed alone
            previous[sig] = old
            signal.signal(sig, raise_exit)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


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
    with _termination_raises():
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            os.fchmod(fd, file_mode)
            kwargs = {} if "b" in mode else {"encoding": encoding, "newline": ""}
            with os.fdopen(fd, mode, **kwargs) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            check_output(path)  # still a regular-file target (nothing replaced it meanwhile)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_writer(path, "w") as handle:
        handle.write(text)
