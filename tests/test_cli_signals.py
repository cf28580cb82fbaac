"""Real signals while ``wsvmgui fit`` writes its outputs: the model file, the CSV and its
sidecar are replaced together or not at all, and the message says exactly which.

The child process sends itself the signal at a chosen moment: between the renames of the
outputs (the moment the issue found a new CSV beside an old sidecar), while the
temporary files are written, or during the fit.
"""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wsvmgui.evaluation.designs import simulate
from wsvmgui.io.results import read_results

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT]
FAST = ["--lambda", "0.05", "--sigma", "1", "--weights", "6", "--quiet", "--n-jobs", "1"]

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignoring it
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(s, signal.SIG_DFL)
    from wsvmgui import cli
    from wsvmgui.cli import fit as cli_fit
    from wsvmgui.io import atomic
    sig, when = int(sys.argv[1]), sys.argv[2]
    if when == "between-renames":
        real = atomic.os.replace
        count = [0]
        def replace(src, dst):
            real(src, dst)
            count[0] += 1
            if count[0] == 1:
                os.kill(os.getpid(), sig)
        atomic.os.replace = replace
    elif when == "writing-temporaries":
        real_write = atomic._write_temp
        def write_temp(*args):
            name = real_write(*args)
            os.kill(os.getpid(), sig)
            return name
        atomic._write_temp = write_temp
    elif when == "fitting":
        real_fit = cli_fit.fit_scheme
        def fit(*args, **kwargs):
            os.kill(os.getpid(), sig)
            return real_fit(*args, **kwargs)
        cli_fit.fit_scheme = fit
    sys.exit(cli.main(sys.argv[3:]))
    """
)


@pytest.fixture(scope="module")
def train_csv(tmp_path_factory) -> Path:
    d = simulate("wuliu2011_ex1", 40, seed=5)
    path = tmp_path_factory.mktemp("data") / "t.csv"
    rows = [f"{float(a)!r},{float(b)!r},{c}" for (a, b), c in zip(d.X, d.y, strict=True)]
    path.write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    return path


def _run(sig: int, when: str, folder: Path, train: Path) -> subprocess.CompletedProcess:
    argv = ["fit", str(train), "--label", "label", "--out", str(folder / "o.csv")]
    argv += ["--model", str(folder / "m.wsvm"), *FAST]
    return subprocess.run(
        [sys.executable, "-c", _CHILD, str(int(sig)), when, *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _old_outputs(folder: Path) -> dict[str, bytes]:
    old = {"o.csv": b"old csv\n", "o.csv.json": b'{"old": 1}\n', "m.wsvm": b"old model"}
    for name, data in old.items():
        (folder / name).write_bytes(data)
    return old


def _status(sig: int) -> int:
    return 130 if sig == signal.SIGINT else 128 + int(sig)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_between_renames_replaces_all_three_and_says_so(tmp_path, train_csv, sig):
    _old_outputs(tmp_path)
    proc = _run(sig, "between-renames", tmp_path, train_csv)
    assert proc.returncode == _status(sig), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    name = signal.Signals(sig).name
    assert name in lines[0]
    assert (
        f"{tmp_path / 'm.wsvm'} and {tmp_path / 'o.csv'} and {tmp_path / 'o.csv.json'}"
        in (lines[0])
    )
    assert "had been written completely" in lines[0]
    # the pair belongs together (read_results checks the CSV's sha256), and the sidecar
    # records the model file that is there now
    frame, sidecar = read_results(tmp_path / "o.csv")
    assert len(frame) == 40
    model = (tmp_path / "m.wsvm").read_bytes()
    assert sidecar["meta"]["model"]["sha256"] == hashlib.sha256(model).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.wsvm", "o.csv", "o.csv.json"]


@pytest.mark.parametrize("when", ["writing-temporaries", "fitting"])
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_signal_before_the_renames_changes_nothing_and_says_so(tmp_path, train_csv, sig, when):
    old = _old_outputs(tmp_path)
    proc = _run(sig, when, tmp_path, train_csv)
    assert proc.returncode == _status(sig), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "nothing was written (existing outputs are unchanged)" in lines[0]
    for name, data in old.items():
        assert (tmp_path / name).read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(old)  # no temporary left


def test_a_new_csv_beside_an_old_sidecar_is_detected_by_readers(tmp_path, train_csv):
    """The pair's last line of defence (a SIGKILL between renames): the sidecar's hash."""
    proc = _run(signal.SIGTERM, "fitting", tmp_path, train_csv)  # nothing written
    assert proc.returncode == 143
    argv = ["fit", str(train_csv), "--label", "label", "--out", str(tmp_path / "o.csv"), *FAST]
    from wsvmgui.cli import main

    assert main(argv) == 0
    sidecar = json.loads((tmp_path / "o.csv.json").read_text())
    (tmp_path / "o.csv").write_text((tmp_path / "o.csv").read_text() + "1,x,0.5,0.5\n")
    with pytest.raises(Exception, match="does not belong"):
        read_results(tmp_path / "o.csv")
    assert sidecar["csv_sha256"]


@pytest.mark.parametrize("scheme", ["binary", "ova", "joint-indirect"])
def test_the_same_command_writes_the_same_bytes_with_or_without_a_model(tmp_path, scheme):
    """No timing in model files or sidecars: two runs of one command give equal files, and
    the CSV does not depend on whether a model file is written."""
    from wsvmgui.cli import main

    d = simulate("wu2010_ex1" if scheme != "binary" else "wuliu2011_ex1", 45, seed=2)
    rows = [f"{float(a)!r},{float(b)!r},{c}" for (a, b), c in zip(d.X, d.y, strict=True)]
    (tmp_path / "t.csv").write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    common = ["fit", str(tmp_path / "t.csv"), "--label", "label", "--scheme", scheme]
    common += ["--lambda", "0.02,0.1", "--sigma", "0.7,1.4", "--weights", "6", "--joint-n", "5"]
    common += ["--quiet", "--n-jobs", "1", "--seed", "7"]
    for k in ("a", "b"):
        out, model = tmp_path / f"{k}.csv", tmp_path / f"{k}.wsvm"
        assert main([*common, "--out", str(out), "--model", str(model)]) == 0
    assert main([*common, "--out", str(tmp_path / "plain.csv")]) == 0
    assert (tmp_path / "a.wsvm").read_bytes() == (tmp_path / "b.wsvm").read_bytes()
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    side_a = (tmp_path / "a.csv.json").read_text().replace("a.csv", "X").replace("a.wsvm", "Y")
    side_b = (tmp_path / "b.csv.json").read_text().replace("b.csv", "X").replace("b.wsvm", "Y")
    assert side_a == side_b
