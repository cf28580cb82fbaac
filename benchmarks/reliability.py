"""Issue 18's cases through the real command line, each in its own process.

    python benchmarks/reliability.py            # every case (about 3 min here)

For every case: exit status, the last stderr line, CPU seconds and peak resident memory
of the child (``resource.getrusage(RUSAGE_CHILDREN)`` of a fresh process per case), and
the verdict: ``ok`` (exit 2 with one line naming the value, or the expected success),
``crash`` (killed by a signal), ``hang`` (over the time limit), ``internal`` (exit 1),
``wrong success`` (exit 0 where a refusal was due), ``code ran`` (a marker file
appeared).  Model-file cases also give the bound loading respects: the file size and
the bytes its manifest declares.  Determinism: the same command run twice (with and
without ``--model``) compared byte for byte.

Writes ``benchmarks/results/reliability.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wsvmgui.evaluation.designs import simulate  # noqa: E402

FAST = ["--lambda", "0.05", "--sigma", "1", "--weights", "8", "--quiet", "--n-jobs", "1"]
LIMIT = 300.0


def _run(argv: list[str], folder: Path, timeout: float = LIMIT) -> dict:
    """One CLI run in a fresh process: status, stderr, CPU seconds and peak memory."""
    code = (
        "import resource, subprocess, sys, json\n"
        "p = subprocess.run(sys.argv[2:], capture_output=True, text=True,\n"
        "                   timeout=float(sys.argv[1]))\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'code': p.returncode, 'err': p.stderr, 'cpu': u.ru_utime + u.ru_stime,"
        " 'rss_mb': u.ru_maxrss / 1024}))\n"
    )
    wsvmgui = [sys.executable, "-m", "wsvmgui"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    start = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, str(timeout), *wsvmgui, *argv],
            capture_output=True, text=True, cwd=folder, env=env, timeout=timeout + 30,
        )  # fmt: skip
        result = json.loads(out.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        result = {"code": None, "err": "timeout", "cpu": float("nan"), "rss_mb": float("nan")}
    result["wall"] = time.perf_counter() - start
    return result


def _verdict(r: dict, expect: str, needle: str, folder: Path) -> str:
    if (folder / "ran").exists():
        return "code ran"
    if r["code"] is None:
        return "hang"
    if r["code"] < 0 or r["code"] >= 128 and r["code"] != 130:
        return "crash"
    if r["code"] == 1 or "internal error" in r["err"] or "Traceback" in r["err"]:
        return "internal"
    if expect == "ok":
        return "ok" if r["code"] == 0 else "refused"
    if r["code"] == 0:
        return "wrong success"
    lines = r["err"].strip().splitlines()
    if r["code"] != 2 or len(lines) != 1:
        return f"exit {r['code']}, {len(lines)} lines"
    return "ok" if needle.lower() in lines[0].lower() else "not named"


def _write_table(path: Path, header: list[str], rows: list[list[str]]) -> None:
    text = [",".join(header)] + [",".join(r) for r in rows]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


def _data(folder: Path) -> None:
    d = simulate("wuliu2011_ex1", 60, seed=1)
    rows = [[repr(float(a)), repr(float(b)), str(c)] for (a, b), c in zip(d.X, d.y, strict=True)]
    _write_table(folder / "bin.csv", ["x1", "x2", "label"], rows)
    rng = np.random.default_rng(0)
    cont = [[repr(float(v)) for v in r] for r in rng.normal(size=(60, 3))]
    _write_table(folder / "cont.csv", ["x1", "x2", "label"], cont)
    text = (folder / "bin.csv").read_text()
    (folder / "u16.csv").write_bytes(text.encode("utf-16"))
    lines = text.splitlines()
    lines[7] = '"' + lines[7]
    (folder / "quote.csv").write_text("\n".join(lines) + "\n")
    for cell, name in (("1_000", "us"), ("１２", "fw"), ("١٢", "ar")):
        lines = text.splitlines()
        parts = lines[3].split(",")
        parts[0] = cell
        lines[3] = ",".join(parts)
        (folder / f"num_{name}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    big = [[repr(float(a) * 1e140), repr(float(b) * 1e140), str(c)] for (a, b), c in
           zip(d.X, d.y, strict=True)]  # fmt: skip
    _write_table(folder / "big.csv", ["x1", "x2", "label"], big)
    (folder / "s_digits.json").write_text('{"seed": ' + "1" * 5001 + "}")
    (folder / "s_deep.json").write_text('{"options": ' + "[" * 100000 + "]" * 100000 + "}")
    (folder / "s_nan.json").write_text('{"coef0": NaN}')
    (folder / "s_grid.json").write_text('{"n_weights": 1000000000000}')
    (folder / "new.csv").write_text("x1,x2\n0.1,0.2\n-1,1\n")


def _members(data: bytes) -> tuple[dict, dict[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    return json.loads(members.pop("manifest.json")), members


def _zip(manifest: dict | str, members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "manifest.json", manifest if isinstance(manifest, str) else json.dumps(manifest)
        )
        for name, value in members.items():
            zf.writestr(name, value)
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _models(folder: Path, valid: bytes) -> dict[str, tuple[bytes, str]]:
    """Crafted model files of the issue: (bytes, word the refusal must name)."""
    out: dict[str, tuple[bytes, str]] = {}
    manifest, members = _members(valid)
    # 1. plan array of the exact path set to -10^6 (SIGSEGV before)
    plan = [i for i, d in enumerate(manifest["arrays"]) if d[0] == "<i8"]
    for i in plan:
        m, mem = _members(valid)
        arr = np.lib.format.read_array(io.BytesIO(mem[f"arrays/{i}.npy"]))
        mem[f"arrays/{i}.npy"] = _npy(np.full_like(arr, -(10**6)))
        out[f"int member arrays/{i}.npy = -10^6"] = (_zip(m, mem), f"arrays/{i}.npy")
    # 2. n_arrays = 10^12
    m, mem = _members(valid)
    m["n_arrays"] = 10**12
    out["n_arrays = 10^12"] = (_zip(m, mem), "declares")
    # 3. zip bomb: an unused 2 GiB array, and a used array declared 2 GiB
    m, mem = _members(valid)
    n = m["n_arrays"]
    zeros = np.zeros(2**31, dtype=np.int8)
    mem[f"arrays/{n}.npy"] = _npy(zeros)
    del zeros
    m["n_arrays"], m["arrays"] = n + 1, [*m["arrays"], ["|i1", [2**31]]]
    out["zip bomb, unused 2 GiB array"] = (_zip(m, mem), "inflates at most")
    # 4. tampering the self-check does not exercise; NaN in the manifest
    for name, edit, needle in (
        ("t_ptr out of range", "t_ptr", "t_ptr"),
        ("t_idx out of range", "t_idx", "t_idx"),
        ("ev_idx out of range", "ev_idx", "ev_idx"),
    ):
        m, mem = _members(valid)
        where = _where(m)
        i = next(k for k, p in where.items() if p.endswith("." + edit))
        arr = np.lib.format.read_array(io.BytesIO(mem[f"arrays/{i}.npy"])).copy()
        arr[len(arr) // 2] = 10**6
        mem[f"arrays/{i}.npy"] = _npy(arr)
        out[name] = (_zip(m, mem), needle)
    m, mem = _members(valid)
    text = json.dumps(m).replace('"schema": 2', '"schema": 2, "extra": NaN', 1)
    out["NaN in the manifest"] = (_zip(text, mem), "NaN")
    out["pickle with a payload"] = (pickle.dumps(_Payload(str(folder / "ran"))), "pickle")
    return out


def _where(manifest: dict) -> dict[int, str]:
    out: dict[int, str] = {}

    def walk(node, path):
        if isinstance(node, dict):
            if "$array" in node:
                out.setdefault(node["$array"], path)
            for k, v in node.items():
                if k == "$dict":
                    for key, val in v:
                        walk(val, f"{path}.{key}" if isinstance(key, str) else path)
                else:
                    walk(v, path)
        elif isinstance(node, list):
            for v in node:
                walk(v, path)

    walk(manifest["estimator"], "estimator")
    return out


def _svc_model(folder: Path) -> bytes:
    """A Probing SVC model whose support_ indices are 10^8."""
    r = _run(["fit", "bin.csv", "--label", "label", "--scheme", "probing", "--option",
              "learner=svm", "--option", "n_thresholds=3", "--out", "p.csv", "--model",
              "svc.wsvm", "--quiet"], folder)  # fmt: skip
    assert r["code"] == 0, r["err"]
    data = (folder / "svc.wsvm").read_bytes()
    m, mem = _members(data)
    i = next(k for k, p in _where(m).items() if p.endswith(".support_"))
    arr = np.lib.format.read_array(io.BytesIO(mem[f"arrays/{i}.npy"]))
    mem[f"arrays/{i}.npy"] = _npy(np.full_like(arr, 10**8))
    return _zip(m, mem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wsvm-rel-"))
    _data(folder)
    fit = ["fit", "bin.csv", "--label", "label", "--out", "o.csv"]
    lam = ["--lambda", "0.05", "--weights", "8"]

    def on(name: str) -> list[str]:
        return ["fit", name, "--label", "label", "--out", "o.csv", *FAST]

    poly = ["--kernel", "poly", "--degree"]
    big = ["--kernel", "linear"]
    cases: list[tuple[str, list[str], str, str]] = [
        ("--sigma 1e-300", [*fit, *lam, "--sigma", "1e-300"], "refuse", "1e-300"),
        ("--sigma 1e300", [*fit, *lam, "--sigma", "1e300"], "refuse", "1e300"),
        ("--kernel poly --degree 200", [*on("bin.csv"), *poly, "200"], "refuse", "200"),
        ("--kernel poly --degree 60", [*on("bin.csv"), *poly, "60"], "refuse", "degree 60"),
        (
            "--weights 10^12",
            [*fit, "--lambda", "0.05", "--sigma", "1", "--weights", "1000000000000"],
            "refuse",
            "1000000000000",
        ),
        ("settings: 5001-digit integer", [*on("bin.csv"), "--settings", "s_digits.json"],
         "refuse", "4300 digits"),
        ("settings: nested 100,000 deep", [*on("bin.csv"), "--settings", "s_deep.json"],
         "refuse", "nested too deep"),
        ("settings: coef0 NaN", [*on("bin.csv"), "--settings", "s_nan.json"], "refuse", "NaN"),
        ("settings: n_weights 10^12", [*on("bin.csv"), "--settings", "s_grid.json"],
         "refuse", "1000000000000"),
        ('--scheduler "not a url"', [*on("bin.csv"), "--scheduler", "not a url"],
         "refuse", "not a url"),
        ("continuous label, --scheme ova", [*on("cont.csv"), "--scheme", "ova"],
         "refuse", "continuous"),
        ("--lambda 0.1,,0.2", [*fit, "--lambda", "0.1,,0.2", "--sigma", "1"], "refuse", "empty"),
        ("feature cell 1_000", on("num_us.csv"), "refuse", "'1_000'"),
        ("feature cell full-width 12", on("num_fw.csv"), "refuse", "'１２'"),
        ("feature cell Arabic-Indic 12", on("num_ar.csv"), "refuse", "'١٢'"),
        ("UTF-16 file", on("u16.csv"), "refuse", "UTF-16"),
        ("unclosed quote on line 8", on("quote.csv"), "refuse", "line 8"),
        ("features near 1e140, linear kernel", [*on("big.csv"), *big, "--no-standardize"],
         "refuse", "too large for the linear kernel"),
        ("features near 1e140, standardised", [*on("big.csv"), *big], "ok", ""),
    ]  # fmt: skip
    results = []
    for name, argv, expect, needle in cases:
        r = _run(argv, folder)
        r.update(case=name, verdict=_verdict(r, expect, needle, folder))
        results.append(r)
        print(f"{name:45s} {r['verdict']:14s} {r['err'].strip().splitlines()[-1:]}", flush=True)
    # model files
    r = _run([*fit, *FAST, "--model", "m.wsvm"], folder)
    assert r["code"] == 0, r["err"]
    valid = (folder / "m.wsvm").read_bytes()
    crafted = _models(folder, valid)
    crafted["Probing SVC with support_ = 10^8"] = (_svc_model(folder), "support_")
    for name, (data, needle) in crafted.items():
        (folder / "x.wsvm").write_bytes(data)
        declared = 0
        try:
            declared = sum(
                int(np.prod(s)) * np.dtype(np.lib.format.descr_to_dtype(d)).itemsize
                for d, s in _members(data)[0]["arrays"]
            )
        except Exception:  # noqa: BLE001 - not a readable manifest: nothing declared
            declared = 0
        r = _run(["predict", "x.wsvm", "new.csv", "--out", "p2.csv"], folder)
        r.update(case=f"model: {name}", verdict=_verdict(r, "refuse", needle, folder),
                 file_bytes=len(data), declared_bytes=declared)  # fmt: skip
        results.append(r)
        print(f"{r['case']:45s} {r['verdict']:14s} {r['rss_mb']:.0f} MB {r['cpu']:.2f} s "
              f"{r['err'].strip().splitlines()[-1:]}", flush=True)  # fmt: skip
    # determinism: the same command twice, with and without --model
    same = {}
    for with_model in (False, True):
        outs = []
        for k in range(2):
            argv = ["fit", "bin.csv", "--label", "label", "--out", f"d{k}.csv", "--lambda",
                    "0.02,0.1", "--sigma", "0.5,1", "--weights", "8", "--quiet"]  # fmt: skip
            if with_model:
                argv += ["--model", f"d{k}.wsvm"]
            r = _run(argv, folder)
            assert r["code"] == 0, r["err"]
            files = [f"d{k}.csv", f"d{k}.csv.json"] + ([f"d{k}.wsvm"] if with_model else [])
            digests = {}
            for f in files:
                text = (folder / f).read_bytes().replace(f"d{k}.".encode(), b"dK.")
                digests[f.replace(str(k), "K")] = hashlib.sha256(text).hexdigest()
            outs.append(digests)
        same["with --model" if with_model else "without --model"] = outs[0] == outs[1]
        if not with_model:
            plain_csv = (folder / "d0.csv").read_bytes()
    csv_same = plain_csv == (folder / "d0.csv").read_bytes()
    counts = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "reliability.json").write_text(
        json.dumps({"cases": results, "verdicts": counts, "same_bytes": same,
                    "csv_same_with_and_without_model": csv_same}, indent=1, default=str)
    )  # fmt: skip
    lines = [
        "# Issue 18's cases through the command line",
        "",
        "Each case in a fresh process (`python benchmarks/reliability.py`); CPU seconds and "
        "peak resident memory of that process (`getrusage(RUSAGE_CHILDREN)`).",
        "",
        f"Verdicts: {', '.join(f'{k}: {v}' for k, v in sorted(counts.items()))} "
        f"(of {len(results)} cases).",
        "",
        f"Same bytes for the same command and seed, run twice: without --model "
        f"{same['without --model']}, with --model {same['with --model']} (CSV, sidecar and "
        f"model file; file names aside); the CSV with --model equals the CSV without: "
        f"{csv_same}.",
        "",
        "| case | verdict | exit | CPU s | peak MB | file bytes | declared bytes | message |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        msg = (r["err"].strip().splitlines() or [""])[-1].replace("|", "/")
        msg = msg.replace(str(folder) + "/", "")[:160]
        lines.append(
            f"| {r['case']} | {r['verdict']} | {r['code']} | {r['cpu']:.2f} | {r['rss_mb']:.0f} "
            f"| {r.get('file_bytes', '')} | {r.get('declared_bytes', '')} | {msg} |"
        )
    (out_dir / "reliability.md").write_text("\n".join(lines) + "\n")
    print(counts, same)


if __name__ == "__main__":
    main()
