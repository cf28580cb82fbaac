"""Outputs that cannot destroy anything: checked targets, atomic writes, umask modes."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from wsvmgui.errors import InputError
from wsvmgui.io import atomic
from wsvmgui.io.atomic import (
    atomic_write_text,
    atomic_writer,
    check_outputs,
    new_file_mode,
    write_together,
)


def test_failure_keeps_existing_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("new")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["t.txt"]


def test_interrupt_leaves_no_new_file(tmp_path):
    target = tmp_path / "t.bin"
    with pytest.raises(KeyboardInterrupt), atomic_writer(target, "wb") as handle:
        handle.write(b"x")
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_disk_full_while_syncing(tmp_path, monkeypatch):
    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(InputError, match=r"cannot write .*t\.txt: No space left on device"):
        atomic_write_text(tmp_path / "t.txt", "x")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("call", ["write", "fsync"])
def test_disk_full_in_a_group_names_the_file_and_changes_nothing(tmp_path, monkeypatch, call):
    (tmp_path / "a.csv").write_text("old a")
    (tmp_path / "a.csv.json").write_text("old sidecar")
    real = getattr(atomic.os, call)
    count = {"n": 0}

    def full_on_second(*args):
        count["n"] += 1
        if count["n"] >= 2:
            raise OSError(28, "No space left on device")
        return real(*args)

    monkeypatch.setattr(atomic.os, call, full_on_second)
    written: list[str] = []
    files = [(tmp_path / "a.csv", b"new a"), (tmp_path / "a.csv.json", b"new sidecar")]
    with pytest.raises(InputError, match=r"cannot write .*a\.csv\.json: No space left"):
        write_together(files, written)
    assert written == []
    assert (tmp_path / "a.csv").read_text() == "old a"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "a.csv.json"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_files_get_the_umask_mode_and_replaced_files_keep_theirs(tmp_path, umask):
    old = os.umask(umask)
    try:
        assert new_file_mode() == 0o666 & ~umask
        target = tmp_path / "new.txt"
        atomic_write_text(target, "a")
        assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
        target.chmod(0o604)
        atomic_write_text(target, "b")
        assert stat.S_IMODE(target.stat().st_mode) == 0o604 and target.read_text() == "b"
    finally:
        os.umask(old)


def test_symlink_target_is_written_through(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "missing_folder"])
def test_special_targets_are_refused(tmp_path, kind):
    if kind == "device":
        target = "/dev/null"
    elif kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
    elif kind == "folder":
        target = tmp_path
    else:
        target = tmp_path / "no" / "t.txt"
    pattern = {
        "device": "a device",
        "fifo": "a named pipe",
        "folder": "a folder",
        "missing_folder": "does not exist",
    }[kind]
    with pytest.raises(InputError, match=pattern):
        atomic_write_text(target, "x")
    assert os.path.exists("/dev/null") and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_outputs_may_not_overwrite_inputs_or_each_other(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x\n")
    hard = tmp_path / "hard.csv"
    os.link(data, hard)
    soft = tmp_path / "soft.csv"
    soft.symlink_to(data)
    for out in (data, hard, soft, tmp_path / "." / "d.csv"):
        with pytest.raises(InputError, match="would overwrite the training data"):
            check_outputs({"--out": out}, {"training data": data})
    with pytest.raises(InputError, match="--model .* would overwrite the --out"):
        check_outputs({"--out": tmp_path / "o", "--model": tmp_path / "o"}, {})
    check_outputs({"--out": tmp_path / "o", "--model": None}, {"training data": data})


_WRITER = textwrap.dedent(
    """
    import signal, sys, time
    from wsvmgui.io.atomic import atomic_writer
    # the test's signals act even when started ignoring them (nohup ignores SIGHUP, a
    # background job SIGINT); atomic_writer keeps handlers others installed
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    with atomic_writer(sys.argv[1]) as handle:
        handle.write("partial")
        handle.flush()
        print("writing", flush=True)
        time.sleep(60)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_during_write_leaves_no_temp_file(tmp_path, sig):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert len(os.listdir(tmp_path)) == 2  # the temporary file exists now
        proc.send_signal(sig)
        proc.wait(20)
    finally:
        proc.kill()
    assert proc.returncode != 0
    deadline = time.monotonic() + 30
    while len(os.listdir(tmp_path)) > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.listdir(tmp_path) == ["out.txt"]
    assert target.read_text() == "previous"
