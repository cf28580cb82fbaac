"""Guard against the PySide6 6.12.0 signal-emit reference-count bug.

With PySide6 6.12.0 on Python 3.11, emitting signals drops references that were never
taken: after a few hundred emits of a ``Signal(bool)`` the interpreter aborts with
``Fatal Python error: bool_dealloc: deallocating True or False``. pyproject.toml pins
``PySide6-Essentials<6.12`` for that reason; this test fails if an upgrade brings the bug
back. The GUI relies on exactly these patterns: worker signals of several signatures,
emitted from a QRunnable on a QThreadPool and delivered to the main thread through queued
connections.

Everything runs in a child interpreter, so that an abort shows up as a failed test with
the child's output rather than as a crashed test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6.QtCore")

N_DIRECT = 3000  # emits of each signal from the main thread (direct connections)
N_THREADED = 1500  # emits of each signal from a pool thread (queued connections)
N_RUNNABLES = 2

_CHILD = r"""
import gc
import json
import sys
import threading
import time

from PySide6.QtCore import (QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal,
                            Slot)

N_DIRECT, N_THREADED, N_RUNNABLES = (int(a) for a in sys.argv[1:4])


class Payload:
    # a Python object passed through `object` signals; its refcount is checked after
    pass


class Emitter(QObject):
    flag = Signal(bool)
    number = Signal(int)
    anything = Signal(object)
    triple = Signal(int, int, object)
    text = Signal(str)
    done = Signal()


class Receiver(QObject):
    # slots on a QObject that lives in the main thread
    def __init__(self):
        super().__init__()
        self.counts = {"flag": 0, "number": 0, "anything": 0, "triple": 0, "text": 0,
                       "done": 0}
        self.bad = []
        self.threads = set()

    def _seen(self, key):
        self.counts[key] += 1
        self.threads.add(threading.get_ident())

    @Slot(bool)
    def on_flag(self, value):
        if not isinstance(value, bool):
            self.bad.append(("flag", repr(value)))
        self._seen("flag")

    @Slot(int)
    def on_number(self, value):
        if not isinstance(value, int):
            self.bad.append(("number", repr(value)))
        self._seen("number")

    @Slot(object)
    def on_anything(self, value):
        if not isinstance(value, (Payload, dict)):
            self.bad.append(("anything", repr(value)))
        self._seen("anything")

    @Slot(int, int, object)
    def on_triple(self, done, total, partial):
        if not (isinstance(done, int) and total >= done and isinstance(partial, (Payload, dict))):
            self.bad.append(("triple", repr((done, total, partial))))
        self._seen("triple")

    @Slot(str)
    def on_text(self, value):
        if not value.startswith("msg"):
            self.bad.append(("text", repr(value)))
        self._seen("text")

    @Slot()
    def on_done(self):
        self._seen("done")


app = QCoreApplication(sys.argv[:1])
main_ident = threading.get_ident()
payload = Payload()
gc.collect()
base_refs = {"True": sys.getrefcount(True), "False": sys.getrefcount(False),
             "payload": sys.getrefcount(payload)}

# --- 1. direct emission in the main thread: a QObject receiver and plain Python callables
direct = Receiver()
plain = {"flag": 0, "number": 0, "anything": 0, "triple": 0}
em = Emitter()
em.flag.connect(direct.on_flag)
em.number.connect(direct.on_number)
em.anything.connect(direct.on_anything)
em.triple.connect(direct.on_triple)
em.text.connect(direct.on_text)
em.flag.connect(lambda v: plain.__setitem__("flag", plain["flag"] + 1))
em.number.connect(lambda v: plain.__setitem__("number", plain["number"] + 1))
em.anything.connect(lambda v: plain.__setitem__("anything", plain["anything"] + 1))
em.triple.connect(lambda a, b, c: plain.__setitem__("triple", plain["triple"] + 1))
for i in range(N_DIRECT):
    em.flag.emit(i % 2 == 0)
    em.number.emit(i)
    em.anything.emit(payload)
    em.triple.emit(i, N_DIRECT, payload if i % 2 else {"i": i})
    em.text.emit(f"msg{i}")
    if i % 500 == 0:
        gc.collect()
app.processEvents()


# --- 2. emission from QRunnables on a QThreadPool, queued to the main thread
class Job(QRunnable):
    def __init__(self, signals, n):
        super().__init__()
        self.signals = signals
        self.n = n

    def run(self):
        s = self.signals
        for i in range(self.n):
            s.flag.emit(i % 3 == 0)
            s.number.emit(i)
            s.anything.emit(payload)
            s.triple.emit(i, self.n, {"partial": i} if i % 2 else payload)
            s.text.emit(f"msg{i}")
        s.done.emit()


queued = Receiver()
jobs_signals = []
for _ in range(N_RUNNABLES):
    sig = Emitter()  # created in the main thread, emitted from the pool thread
    for name in ("flag", "number", "anything", "triple", "text", "done"):
        getattr(sig, name).connect(getattr(queued, "on_" + name), Qt.QueuedConnection)
    jobs_signals.append(sig)

pool = QThreadPool()
pool.setMaxThreadCount(2)
for sig in jobs_signals:
    job = Job(sig, N_THREADED)
    job.setAutoDelete(True)
    pool.start(job)

deadline = time.monotonic() + 120
expected = N_THREADED * N_RUNNABLES
while time.monotonic() < deadline:
    app.processEvents()
    if queued.counts["done"] == N_RUNNABLES and all(
        queued.counts[k] == expected for k in ("flag", "number", "anything", "triple", "text")
    ):
        break
    time.sleep(0.002)
pool.waitForDone(10000)
app.processEvents()

del jobs_signals, em
gc.collect()
app.processEvents()
gc.collect()
refs = {"True": sys.getrefcount(True), "False": sys.getrefcount(False),
        "payload": sys.getrefcount(payload)}
print(json.dumps({
    "qt": __import__("PySide6").__version__,
    "direct": direct.counts, "plain": plain, "queued": queued.counts,
    "bad": direct.bad + queued.bad,
    "queued_in_main_thread": queued.threads == {main_ident},
    "base_refs": base_refs, "refs": refs,
}))
"""


def test_signal_emits_survive_and_arrive(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONFAULTHANDLER="1")
    env.setdefault("LANG", "C.UTF-8")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(N_DIRECT), str(N_THREADED), str(N_RUNNABLES)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(tmp_path),
    )
    tail = (proc.stdout[-2000:] + "\n" + proc.stderr[-4000:]).strip()
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{tail}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])

    for key in ("flag", "number", "anything", "triple", "text"):
        assert result["direct"][key] == N_DIRECT, (key, result)
        assert result["queued"][key] == N_THREADED * N_RUNNABLES, (key, result)
    for key in ("flag", "number", "anything", "triple"):
        assert result["plain"][key] == N_DIRECT, (key, result)
    assert result["queued"]["done"] == N_RUNNABLES
    assert result["bad"] == [], "slots received wrong values"
    assert result["queued_in_main_thread"], "queued slots ran outside the main thread"

    # Every reference an emit takes must be given back. Python 3.12+ makes True/False
    # immortal (constant count); on 3.11 an over-release shows up as a falling count
    # well before the interpreter aborts.
    base, refs = result["base_refs"], result["refs"]
    for key in ("True", "False", "payload"):
        assert abs(refs[key] - base[key]) <= 50, (key, base, refs)
