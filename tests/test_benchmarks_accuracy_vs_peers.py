"""The accuracy benchmark of record's record definitions and target verdicts
(benchmarks/accuracy_vs_peers.py): a record is reported only under today's definition of
its method, and the verdicts read the paired ratios right."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from wsvmgui.app.presets import default_scheme
from wsvmgui.app.schemes import make_estimator, prepare_scheme
from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.designs import DESIGNS

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy_vs_peers.py"


@pytest.fixture(scope="module")
def acc():
    spec = importlib.util.spec_from_file_location("accuracy_vs_peers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _by_record(acc, stale: dict) -> dict:
    """``state["stale"]`` keyed by the records' keys (it is keyed by key and definition)."""
    out = {acc.record_key(k): v for k, v in stale.items()}
    assert len(out) == len(stale)  # one definition per record here
    return out


def _row(data, n, seed, K, method, **measures):
    base = {"log_loss": 0.3, "brier": 0.2, "ece": 0.01, "accuracy": 0.9, "cpu": 1.0}
    return {"data": data, "n": n, "seed": seed, "K": K, "method": method, **base, **measures}


@pytest.mark.parametrize("K", [2, 3, 5])
def test_default_is_the_command_lines_and_worker_agrees(acc, K):
    """``wsvmgui`` is RunSettings' defaults with the app's scheme for K, and the worker's
    estimator (built as ``wsvmgui fit`` builds it) has the driver's definition."""
    est = make_estimator(RunSettings(scheme=default_scheme(K)), K)
    want = est.get_params(deep=False)
    got = json.loads(acc._method_definition("wsvmgui", K))
    assert got["estimator"] == type(est).__name__
    assert "n_jobs" not in got
    for name in ("calibration", "tuning_score", "tuning_rule", "ties", "scheme"):
        if name in want:
            assert got[name] == want[name], name
    for group in ("wsvmgui", "wsvmgui_recal", "wsvmgui_key"):
        settings, rest = acc._settings(group, K)
        est, _, _ = prepare_scheme(settings, [[0.0]] * K, list(range(K)))
        est.set_params(**{k: v for k, v in rest.items() if k in est.get_params()})
        assert acc._estimator_definition(est) == json.loads(acc._method_definition(group, K))


def test_default_follows_a_change_of_the_apps_scheme(acc, monkeypatch):
    import wsvmgui.app.presets as presets

    acc._method_definition.cache_clear()
    monkeypatch.setattr(presets, "default_scheme", lambda k: "bp2")
    try:
        assert json.loads(acc._method_definition("wsvmgui", 5))["scheme"] == "bp2"
    finally:
        monkeypatch.undo()
        acc._method_definition.cache_clear()
    assert json.loads(acc._method_definition("wsvmgui", 5))["scheme"] == default_scheme(5)


def test_pinned_variants_keep_the_old_default(acc):
    """``wsvmgui_plain`` is the default before the fourth sitting (no recalibration, the
    papers' coupling, the grid as given); ``wsvmgui_key`` is that with ``ties="key"``,
    which only the baseline schemes have."""
    for K in (2, 3, 5):
        plain = json.loads(acc._method_definition("wsvmgui_plain", K))
        assert plain["calibration"] == "none"
        assert plain.get("coupling", "baseline") == "baseline"
        assert plain.get("tuning_extend", 0) == 0
        assert plain.get("pair_tuning", "holdout") == "holdout"
    key5 = json.loads(acc._method_definition("wsvmgui_key", 5))
    plain5 = json.loads(acc._method_definition("wsvmgui_plain", 5))
    assert key5["ties"] == "key" and plain5["ties"] == "pairs"  # its records' value
    assert {k: v for k, v in key5.items() if k != "ties"} == {
        k: v for k, v in plain5.items() if k != "ties"
    }
    # the binary estimator has no ties: the two are one definition there
    assert acc._method_definition("wsvmgui_key", 2) == acc._method_definition("wsvmgui_plain", 2)


def test_reconcile_sorts_legacy_records(acc):
    peers = [_row("iris", 105, 0, 3, m) for m in acc.SVM_PEERS]
    state = {
        "runs": {
            "wuliu2011_ex1|100|0|wsvmgui": [_row("wuliu2011_ex1", 100, 0, 2, "wsvmgui", L1=0.1)],
            "zeng_ex3|500|0|wsvmgui": [_row("zeng_ex3", 500, 0, 5, "wsvmgui", L1=0.3)],
            "wu2010_ex1|400|0|wsvmgui_ova": [_row("wu2010_ex1", 400, 0, 3, "wsvmgui_ova")],
            "iris|split|0|svm": peers,
            "iris|split|0|gone": [_row("iris", 105, 0, 3, "gone")],
            "wuliu2011_ex1|100|0|wsvmgui_ova": [],
        },
        "failures": {},
    }
    log = acc.reconcile(state, n_test=10_000)
    runs, stale = state["runs"], _by_record(acc, state["stale"])
    # binary: the old pinned values are the old default's -> wsvmgui_plain's now
    assert "wuliu2011_ex1|100|0|wsvmgui" not in runs
    kept = runs["wuliu2011_ex1|100|0|wsvmgui_plain"][0]
    assert kept["definition"] == acc.definition("wsvmgui_plain", 2, "wuliu2011_ex1", 10_000)
    assert kept["method"] == "wsvmgui_plain" and kept["L1"] == 0.1
    # K = 5: the old rows were ties="key" -> they are wsvmgui_key's now
    assert "zeng_ex3|500|0|wsvmgui" not in runs
    moved = runs["zeng_ex3|500|0|wsvmgui_key"][0]
    assert moved["method"] == "wsvmgui_key" and moved["L1"] == 0.3
    # One-vs-All with ties="key" is no current method's definition -> stale
    assert "wu2010_ex1|400|0|wsvmgui_ova" in stale and "iris|split|0|gone" in stale
    assert [r["method"] for r in runs["iris|split|0|svm"]] == list(acc.SVM_PEERS)
    assert runs["wuliu2011_ex1|100|0|wsvmgui_ova"] == []
    assert len(log) == len(stale) + 2  # the two re-keyed
    before = copy.deepcopy(state)
    assert acc.reconcile(state, n_test=10_000) == []
    assert state == before


def test_reconcile_moves_other_definitions_out_and_back(acc):
    current = acc.definition("wsvmgui", 2, "wang2008_ex1", 10_000)
    other = {**current, "method": {**current["method"], "calibration": "other"}}
    good = _row("wang2008_ex1", 100, 1, 2, "wsvmgui", definition=current)
    state = {
        "runs": {
            "wang2008_ex1|100|0|wsvmgui": [
                _row("wang2008_ex1", 100, 0, 2, "wsvmgui", definition=other)
            ],
            "wang2008_ex1|100|1|wsvmgui": [good],
        },
        "stale": {"wang2008_ex1|100|2|wsvmgui": [{**good, "seed": 2}]},
    }
    acc.reconcile(state, n_test=10_000)
    assert set(state["runs"]) == {"wang2008_ex1|100|1|wsvmgui", "wang2008_ex1|100|2|wsvmgui"}
    assert set(_by_record(acc, state["stale"])) == {"wang2008_ex1|100|0|wsvmgui"}
    # another test size is another definition for the designs (not for the real sets)
    acc.reconcile(state, n_test=2000)
    assert state["runs"] == {}
    acc.reconcile(state, n_test=10_000)
    assert len(state["runs"]) == 2


def test_report_states_short_rows_and_verdicts(acc):
    runs = {}
    for seed in range(5):
        rows = [_row("wuliu2011_ex1", 100, seed, 2, m, L1=0.2 + 0.1 * i, EGKL=0.1)
                for i, m in enumerate(acc.SVM_PEERS)]  # fmt: skip
        runs[f"wuliu2011_ex1|100|{seed}|svm"] = rows
        runs[f"wuliu2011_ex1|100|{seed}|wsvmgui"] = [
            _row("wuliu2011_ex1", 100, seed, 2, "wsvmgui", L1=0.18, EGKL=0.1, cpu=2.0)
        ]
    for seed in range(3):
        runs[f"wuliu2011_ex1|100|{seed}|wsvmgui_recal"] = [
            _row("wuliu2011_ex1", 100, seed, 2, "wsvmgui_recal", L1=0.25, EGKL=0.1, cpu=4.0)
        ]
    text = acc.report({"runs": runs, "failures": {}})
    # a default run's methods missing at a row run count as 0 of 5
    assert "- wuliu2011_ex1, n = 100: 0 of 5: logistic, hgb; 3 of 5: wsvmgui_recal\n" in text
    cells = next(line for line in text.splitlines() if line.startswith("| wuliu2011_ex1 | 100 | 0"))
    assert "0.90 ✓" in cells and "1.25 ✗ [3]" in cells
    lines = text.split("### Verdict per method")[1].splitlines()
    verdicts = {line.split(" | ")[0][2:]: line for line in lines if line.startswith("| wsvmgui")}
    n_rows = 2 * sum(d.n_classes == 2 for d in DESIGNS.values())
    assert f"incomplete (1 of {n_rows} run)" in verdicts["wsvmgui"]
    assert (
        "missed (0 of 1 rows run no worse; worse: wuliu2011_ex1 100: 1.25)"
        in verdicts["wsvmgui_recal"]
    )
    assert "missed (1 of 1 rows over; worst 2.00, wuliu2011_ex1 100)" in verdicts["wsvmgui_recal"]


def test_runs_off_the_record_stay_out_of_its_folder(acc, tmp_path, monkeypatch, capsys):
    """``--quick`` or another ``--n-test`` would mark the record's design records stale (a
    definition holds n_test): refused in the record's folder with a message saying why, and
    written to a temporary folder by default; the record's own runs still go to it."""
    import tempfile

    record = tmp_path / "results"
    record.mkdir()
    current = acc.definition("wsvmgui", 2, "wang2008_ex1", acc.RECORD_N_TEST)
    row = _row("wang2008_ex1", 100, 0, 2, "wsvmgui", L1=0.1, definition=current)
    state = {"runs": {"wang2008_ex1|100|0|wsvmgui": [row]}, "failures": {}}
    (record / "accuracy_vs_peers.json").write_text(json.dumps(state))
    before = (record / "accuracy_vs_peers.json").read_text()
    monkeypatch.setattr(acc, "RESULTS", record)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    for argv in (["--quick"], ["--n-test", "2000"], ["--quick", "--n-test", "500"]):
        with pytest.raises(SystemExit) as exc:
            acc.main([*argv, "--report-only", "--out-dir", str(record / ".." / "results")])
        assert exc.value.code == 2
        assert "would mark every design record there stale" in capsys.readouterr().err
    assert (record / "accuracy_vs_peers.json").read_text() == before
    assert not (record / "accuracy_vs_peers.md").exists()
    # by default a temporary folder per kind of run; the record's folder untouched
    (tmp_path / "tmp").mkdir()
    assert acc.main(["--n-test", "2000", "--report-only"]) == 0
    assert acc.main(["--quick", "--report-only"]) == 0
    for tag in ("n_test_2000", "quick"):
        assert (tmp_path / "tmp" / f"accuracy_vs_peers_{tag}" / "accuracy_vs_peers.md").exists()
    assert (record / "accuracy_vs_peers.json").read_text() == before
    assert not (record / "accuracy_vs_peers.md").exists()
    # a run of the record writes to its folder, keeping its records current
    assert acc.results_dir(None, acc.RECORD_N_TEST, False) == record
    assert acc.main(["--report-only"]) == 0
    assert (
        "| wang2008_ex1 | 100 | 2 | wsvmgui | 1 | 0.1000 |"
        in (record / "accuracy_vs_peers.md").read_text()
    )
    assert json.loads((record / "accuracy_vs_peers.json").read_text())["runs"] == state["runs"]
    # another folder may take any n_test
    other = tmp_path / "mine"
    assert acc.results_dir(str(other), 2000, True) == other


def test_a_change_of_what_auto_chooses_among_stales_the_auto_records(acc, monkeypatch):
    """Records computed while ``calibration="auto"`` chose among other maps (before main
    89b3625 it also tried beta) go stale, although no parameter changed; the peers' and
    the ``calibration="none"`` variants' records of the same time stay current."""
    import wsvmgui.ladder.recalibration as recalibration

    today = tuple(recalibration.AUTO_MAPS)
    data = {2: ("wuliu2011_ex1", 100), 3: ("wu2010_ex1", 400)}
    groups = ("wsvmgui", "wsvmgui_ova", "wsvmgui_recal", "wsvmgui_plain", "wsvmgui_key", "svm")

    def records() -> dict:
        runs = {}
        for K, (d, n) in data.items():
            for g in groups:
                if g == "wsvmgui_ova" and K == 2:
                    continue
                methods = acc.GROUPS[g]
                what = acc.definition(g, K, d, 10_000)
                runs[f"{d}|{n}|0|{g}"] = [_row(d, n, 0, K, m, definition=what) for m in methods]
        return runs

    acc._method_definition.cache_clear()
    monkeypatch.setattr(recalibration, "AUTO_MAPS", (*today, "beta"))
    # the binary "auto" chooses among these (binary.AUTO_CALIBRATION, ninth sitting)
    plateau = tuple(recalibration.AUTO_PLATEAU_MAPS)
    monkeypatch.setattr(recalibration, "AUTO_PLATEAU_MAPS", (*plateau, "beta"))
    try:
        old = records()
    finally:
        monkeypatch.undo()
        acc._method_definition.cache_clear()
    assert json.loads(acc._method_definition("wsvmgui", 2))["calibration=auto"] == list(plateau)
    assert json.loads(acc._method_definition("wsvmgui", 3))["calibration=auto"] == list(today)
    state = {"runs": copy.deepcopy(old), "failures": {}}
    acc.reconcile(state, n_test=10_000)
    auto = {k for k in old if k.rsplit("|", 1)[1] in ("wsvmgui", "wsvmgui_ova", "wsvmgui_recal")}
    assert set(_by_record(acc, state["stale"])) == auto and len(auto) == 5
    assert _by_record(acc, state["stale"]) == {k: old[k] for k in auto}  # kept, for audit
    assert state["runs"] == {k: v for k, v in old.items() if k not in auto}
    # the none variants record no choice: a change of AUTO_MAPS cannot touch them
    for K in data:
        assert "calibration=auto" not in json.loads(acc._method_definition("wsvmgui_plain", K))
    # records of today's maps are current
    fresh = {"runs": records(), "failures": {}}
    assert acc.reconcile(fresh, n_test=10_000) == [] and fresh["stale"] == {}


def test_a_change_of_the_spline_guard_stales_the_auto_records(acc, monkeypatch):
    """The guard's settings are part of what ``calibration="auto"`` computes: records of
    another guard go stale, records of today's stay current."""
    import wsvmgui.ladder.recalibration as recalibration

    def record() -> dict:
        what = acc.definition("wsvmgui", 2, "wuliu2011_ex1", 10_000)
        return {"wuliu2011_ex1|2000|0|wsvmgui": [_row("wuliu2011_ex1", 2000, 0, 2, "wsvmgui",
                                                       definition=what)]}  # fmt: skip

    today = json.loads(acc._method_definition("wsvmgui", 2))
    assert today["calibration=auto:AUTO_SPLINE_GUARD"] == recalibration.AUTO_SPLINE_GUARD
    assert today["calibration=auto:AUTO_SPLINE_MIN_PAIRS"] == recalibration.AUTO_SPLINE_MIN_PAIRS
    acc._method_definition.cache_clear()
    monkeypatch.setattr(recalibration, "AUTO_SPLINE_GUARD", None)
    try:
        old = record()
    finally:
        monkeypatch.undo()
        acc._method_definition.cache_clear()
    state = {"runs": copy.deepcopy(old), "failures": {}}
    acc.reconcile(state, n_test=10_000)
    assert _by_record(acc, state["stale"]) == old and state["runs"] == {}
    fresh = {"runs": record(), "failures": {}}
    assert acc.reconcile(fresh, n_test=10_000) == [] and fresh["stale"] == {}


def test_report_gives_recomputed_rows_before_and_after(acc):
    """A row recomputed after its records went stale is reported stale -> today's, paired
    over the seeds both ran, with its ratio to the best SVM peer before and after."""
    runs, stale = {}, {}
    for seed in range(3):
        peers = [_row("wuliu2011_ex1", 100, seed, 2, m, L1=0.2 + 0.1 * i)
                 for i, m in enumerate(acc.SVM_PEERS)]  # fmt: skip
        runs[f"wuliu2011_ex1|100|{seed}|svm"] = peers
        runs[f"wuliu2011_ex1|100|{seed}|wsvmgui"] = [
            _row("wuliu2011_ex1", 100, seed, 2, "wsvmgui", L1=0.3, cpu=2.0)
        ]
    for seed in range(2, 5):  # seeds 3, 4 have no record today: left out of the pairing
        stale[f"wuliu2011_ex1|100|{seed}|wsvmgui"] = [
            _row("wuliu2011_ex1", 100, seed, 2, "wsvmgui", L1=0.1 * seed, cpu=1.0)
        ]
    stale["wuliu2011_ex1|100|0|gone"] = [_row("wuliu2011_ex1", 100, 0, 2, "gone", L1=9.0)]
    text = acc.report({"runs": runs, "stale": stale, "failures": {}})
    section = text.split("## Recomputed rows")[1]
    assert "| wuliu2011_ex1 | 100 | wsvmgui | 1 | 0.2000 -> 0.3000 | 1.00 -> 1.50 (1) | " in section
    assert "gone" not in section
    assert "`wsvmgui` 3, `gone` 1." in text


def test_every_stale_definition_of_a_record_is_kept_and_reported(acc, tmp_path):
    """A record that goes stale under one definition, is run again under a second that
    goes stale too, keeps both sets of rows (keyed by record and definition), also when an
    older file keyed them by the record alone, and across --merge; the report counts them
    by method group and gives each definition its recomputed line."""
    today = acc.definition("wsvmgui", 2, "wuliu2011_ex1", 10_000)
    old = [{**today, "method": {**today["method"], "calibration": c}} for c in ("a", "b")]
    key = "wuliu2011_ex1|100|0|wsvmgui"

    def rows(what, L1):
        return [_row("wuliu2011_ex1", 100, 0, 2, "wsvmgui", L1=L1, definition=what)]

    state = {"runs": {key: rows(old[0], 0.5)}, "failures": {}}
    assert acc.reconcile(state, n_test=10_000) == [f"{key}: stale"]
    state["runs"][key] = rows(old[1], 0.4)  # run again under the second definition
    acc.reconcile(state, n_test=10_000)
    stale = state["stale"]
    assert len(stale) == 2 and {acc.record_key(k) for k in stale} == {key}
    assert sorted(r[0]["L1"] for r in stale.values()) == [0.4, 0.5]
    assert set(stale) == {acc.stale_key(key, rows(w, 0)) for w in old}
    # an older file's stale part (keyed by the record alone) is re-keyed, nothing lost
    legacy = {"runs": {}, "stale": {key: rows(old[0], 0.5)}, "failures": {}}
    acc.reconcile(legacy, n_test=10_000)
    assert list(legacy["stale"]) == [acc.stale_key(key, rows(old[0], 0))]
    before = copy.deepcopy(state)
    assert acc.reconcile(state, n_test=10_000) == [] and state == before
    # the report: counted by method group; a line per stale definition, paired with today's
    state["runs"][key] = rows(today, 0.3)
    state["runs"]["wuliu2011_ex1|100|0|svm"] = [
        _row("wuliu2011_ex1", 100, 0, 2, m, L1=0.2) for m in acc.SVM_PEERS
    ]
    text = acc.report(state)
    assert "2 records of other definitions" in text and "`wsvmgui` 2." in text
    section = text.split("## Recomputed rows")[1]
    for what, L1 in zip(old, ("0.5000", "0.4000"), strict=True):
        label = f"wsvmgui (definition {acc.stale_key(key, rows(what, 0)).rsplit('|', 1)[1]})"
        assert f"| wuliu2011_ex1 | 100 | {label} | 1 | {L1} -> 0.3000 |" in section
    # --merge adds the other file's stale records beside ours
    ours, theirs = tmp_path / "ours", tmp_path / "theirs.json"
    ours.mkdir()
    first = {"runs": {}, "stale": {acc.stale_key(key, rows(old[0], 0.5)): rows(old[0], 0.5)},
             "failures": {}}  # fmt: skip
    (ours / "accuracy_vs_peers.json").write_text(json.dumps(first))
    theirs.write_text(json.dumps({"runs": {}, "stale": {key: rows(old[1], 0.4)}}))
    acc.main(["--report-only", "--out-dir", str(ours), "--merge", str(theirs)])
    merged = json.loads((ours / "accuracy_vs_peers.json").read_text())["stale"]
    assert sorted(r[0]["L1"] for r in merged.values()) == [0.4, 0.5]


#: Groups and data of the tests of what ``tuning_rule="auto"`` records: the binary rule
#: (K = 2), the pair schemes' rule (pairwise at K = 3, BP1 at K = 5), One-vs-All (pins
#: "min"), the plain default (pins "min" and no recalibration) and a peer.
_RULE_DATA = {2: ("wuliu2011_ex1", 100), 3: ("wu2010_ex1", 400), 5: ("zeng_ex3", 500)}
_RULE_GROUPS = ("wsvmgui", "wsvmgui_ova", "wsvmgui_plain", "svm")


def _rule_records(acc, groups: tuple[str, ...] = _RULE_GROUPS) -> dict:
    """One record of every group of ``groups`` on every :data:`_RULE_DATA` set, with the
    definition of the constants in force (the cache cleared first)."""
    acc._method_definition.cache_clear()
    runs = {}
    for K, (d, n) in _RULE_DATA.items():
        for g in groups:
            if g == "wsvmgui_ova" and K == 2:
                continue
            what = acc.definition(g, K, d, 10_000)
            runs[f"{d}|{n}|0|{g}"] = [_row(d, n, 0, K, m, definition=what) for m in acc.GROUPS[g]]
    acc._method_definition.cache_clear()
    return runs


def test_tuning_rule_auto_records_its_estimators_constants(acc):
    """A binary method's definition records the binary rule's constants, a multiclass
    pair scheme's the ``PAIR_AUTO_*`` ones and its map; a method pinning another
    ``tuning_rule`` (One-vs-All, the plain default) records none of them."""
    import wsvmgui.estimators._ladder as ladder
    import wsvmgui.estimators.multiclass as multiclass

    binary = json.loads(acc._method_definition("wsvmgui", 2))
    assert binary["tuning_rule"] == "auto"
    assert binary["tuning_rule=auto"] == ladder.AUTO_ONE_SE
    assert binary["tuning_rule=auto:AUTO_SE_MULTIPLE"] == ladder.AUTO_SE_MULTIPLE
    assert "tuning_rule=auto:AUTO_ONE_SE_MAX_ROWS" not in binary  # no row limit since the ninth
    assert not any("PAIR_AUTO" in k for k in binary)
    for K in (3, 5):
        mc = json.loads(acc._method_definition("wsvmgui", K))
        assert mc["scheme"] == default_scheme(K) and mc["pair_tuning"] == "folds"
        assert mc["tuning_rule=auto"] == multiclass.PAIR_AUTO_ONE_SE
        assert mc["tuning_rule=auto:PAIR_AUTO_SE_MULTIPLE"] == multiclass.PAIR_AUTO_SE_MULTIPLE
        assert mc["tuning_rule=auto:PAIR_AUTO_ONE_SE_MAX_ROWS"] == (
            multiclass.PAIR_AUTO_ONE_SE_MAX_ROWS
        )
        assert mc["calibration=auto:PAIR_AUTO_MAP"] == multiclass.PAIR_AUTO_MAP
        assert "tuning_rule=auto:AUTO_ONE_SE_MAX_ROWS" not in mc
        ova = json.loads(acc._method_definition("wsvmgui_ova", K))
        assert ova["tuning_rule"] == "min" and ova["calibration"] == "auto"
        assert not any(k.startswith("tuning_rule=") or "PAIR_AUTO" in k for k in ova)
        assert "calibration=auto" in ova  # its calibration's choice is still recorded
    for K in (2, 3, 5):
        plain = json.loads(acc._method_definition("wsvmgui_plain", K))
        assert not any(k.startswith(("tuning_rule=", "calibration=")) for k in plain), plain


@pytest.mark.parametrize(
    ("module", "name", "other", "stale_keys"),
    [
        ("wsvmgui.estimators._ladder", "AUTO_SE_MULTIPLE", 0.5, {"wuliu2011_ex1|100|0"}),
        ("wsvmgui.estimators._ladder", "AUTO_ONE_SE", "smoothest", {"wuliu2011_ex1|100|0"}),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_AUTO_SE_MULTIPLE",
            1.0,
            {"wu2010_ex1|400|0", "zeng_ex3|500|0"},
        ),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_AUTO_ONE_SE_MAX_ROWS",
            2000,
            {"wu2010_ex1|400|0", "zeng_ex3|500|0"},
        ),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_AUTO_MAP",
            "isotonic",
            {"wu2010_ex1|400|0", "zeng_ex3|500|0"},
        ),
    ],
)
def test_a_change_of_a_tuning_rule_constant_stales_only_its_estimators_records(
    acc, monkeypatch, module, name, other, stale_keys
):
    """Records computed under another value of one of the rule's constants go stale
    exactly where the default uses it: the binary constants the binary default's
    record, the multiclass ones the pair schemes' defaults'; One-vs-All's, the plain
    default's and the peers' records stay current.  Records of today's values are
    current."""
    import importlib

    where = importlib.import_module(module)
    assert getattr(where, name) != other
    monkeypatch.setattr(where, name, other)
    try:
        old = _rule_records(acc)
    finally:
        monkeypatch.undo()
    state = {"runs": copy.deepcopy(old), "failures": {}}
    log = acc.reconcile(state, n_test=10_000)
    stale = _by_record(acc, state["stale"])
    assert set(stale) == {f"{k}|wsvmgui" for k in stale_keys}
    assert len(log) == len(stale_keys)
    assert stale == {k: old[k] for k in stale}  # kept, for audit
    assert state["runs"] == {k: v for k, v in old.items() if k not in stale}
    fresh = {"runs": _rule_records(acc), "failures": {}}
    assert acc.reconcile(fresh, n_test=10_000) == [] and fresh["stale"] == {}


def _without_added(runs: dict, acc, sittings: tuple[int, ...] = (0,)) -> dict:
    """``runs`` with the keys of :data:`ADDED_CHOICES` ``sittings`` (0: the eighth, 1: the
    ninth) taken out of every definition (as the script before they were recorded stored
    them)."""
    out = copy.deepcopy(runs)
    for rows in out.values():
        for r in rows:
            method = r["definition"]["method"]
            if isinstance(method, dict):
                added = set()
                for i in sittings:
                    added |= set(acc.ADDED_CHOICES[i].get(method["estimator"], {}))
                r["definition"]["method"] = {k: v for k, v in method.items() if k not in added}
    return out


def _reconciled_under(acc, monkeypatch, runs: dict, where, name: str, value) -> dict:
    """A state of a copy of ``runs`` reconciled with ``where.name`` set to ``value`` (the
    definitions' cache cleared before and after)."""
    monkeypatch.setattr(where, name, value)
    acc._method_definition.cache_clear()
    try:
        state = {"runs": copy.deepcopy(runs), "failures": {}}
        acc.reconcile(state, n_test=10_000)
    finally:
        acc._method_definition.cache_clear()
    return state


def test_records_stored_before_the_rule_was_recorded_are_stamped(acc, monkeypatch):
    """The migration: records stored without the ``tuning_rule="auto"`` constants (and the
    pair map) get :data:`ADDED_CHOICES`' values where their definition is otherwise
    today's, and stay current; under another value of a constant today they are not
    stamped but go stale (they were computed under the recorded values)."""
    import wsvmgui.estimators._ladder as ladder
    import wsvmgui.estimators.multiclass as multiclass

    # the values of the records stored before: ADDED_CHOICES' (today's, this sitting)
    for name, value in {
        "AUTO_ONE_SE": "widest",
        "AUTO_SE_MULTIPLE": 1.0,
    }.items():
        monkeypatch.setattr(ladder, name, value)
    for name, value in {
        "PAIR_AUTO_ONE_SE": "widest",
        "PAIR_AUTO_SE_MULTIPLE": 0.5,
        "PAIR_AUTO_ONE_SE_MAX_ROWS": 1000,
        "PAIR_AUTO_MAP": "sigmoid",
    }.items():
        monkeypatch.setattr(multiclass, name, value)
    today = _rule_records(acc)
    old = _without_added(today, acc)
    changed = {k for k in old if old[k] != today[k]}
    assert changed == {f"{d}|{n}|0|wsvmgui" for d, n in _RULE_DATA.values()}
    state = {"runs": copy.deepcopy(old), "failures": {}}
    log = acc.reconcile(state, n_test=10_000)
    assert sorted(log) == sorted(f"{k}: definition completed (ADDED_CHOICES)" for k in changed)
    assert state["runs"] == today and state["stale"] == {}
    assert acc.reconcile(state, n_test=10_000) == []  # once
    # a constant changed since: the old records are not stamped, and go stale
    state = _reconciled_under(acc, monkeypatch, old, multiclass, "PAIR_AUTO_SE_MULTIPLE", 1.0)
    stale = _by_record(acc, state["stale"])
    assert set(stale) == {"wu2010_ex1|400|0|wsvmgui", "zeng_ex3|500|0|wsvmgui"}
    assert all("tuning_rule=auto" not in r["definition"]["method"] for r in sum(stale.values(), []))
    assert state["runs"]["wuliu2011_ex1|100|0|wsvmgui"] == today["wuliu2011_ex1|100|0|wsvmgui"]


#: The groups of the tests of the ninth sitting's named choices: :data:`_RULE_GROUPS`
#: and the pair schemes above 1000 rows with the minimum and the sigmoid map.
_CHOICE_GROUPS = (*_RULE_GROUPS, "wsvmgui_large_min")
_BINARY = {f"wuliu2011_ex1|100|0|{g}" for g in ("wsvmgui", "wsvmgui_plain", "wsvmgui_large_min")}


def _mc(*groups: str) -> set[str]:
    """The records of ``groups`` on the multiclass sets of :data:`_RULE_DATA`."""
    return {f"{d}|{n}|0|{g}" for K, (d, n) in _RULE_DATA.items() if K > 2 for g in groups}


@pytest.mark.parametrize(
    ("module", "name", "other", "stale_keys"),
    [
        # calibration="auto": the spline's penalties where the spline can be taken (not
        # under the pair schemes' min_sigmoid, which takes the sigmoid)
        (
            "wsvmgui.ladder.recalibration",
            "SPLINE_PENALTIES",
            (0.1, 1.0),
            {"wuliu2011_ex1|100|0|wsvmgui", "wuliu2011_ex1|100|0|wsvmgui_large_min"}
            | _mc("wsvmgui", "wsvmgui_ova"),
        ),
        # large_n_auto="widest_spline": the pair schemes' default only
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_LARGE_MAPS",
            ("sigmoid", "isotonic"),
            _mc("wsvmgui"),
        ),
        # cv="auto": binary folds / hold-out by row count; the pair schemes' folds;
        # One-vs-All's and the hold-out variants' 30 %
        ("wsvmgui.ladder.splits", "AUTO_CV_MAX_N", 1000, _BINARY),
        ("wsvmgui.ladder.splits", "AUTO_FOLDS", 10, _BINARY),
        (
            "wsvmgui.ladder.splits",
            "DEFAULT_HOLDOUT",
            0.2,
            _BINARY | _mc("wsvmgui_ova", "wsvmgui_plain"),
        ),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_TUNING_FOLDS",
            5,
            _mc("wsvmgui", "wsvmgui_large_min"),
        ),
        # lambdas=None, sigmas=None: the pair schemes' coarse grid, the others' full grid
        (
            "wsvmgui.ladder.tuning",
            "DEFAULT_C_GRID",
            (0.1, 1.0, 10.0),
            _BINARY | _mc("wsvmgui_ova", "wsvmgui_plain"),
        ),
        (
            "wsvmgui.solvers.kernels",
            "DEFAULT_SIGMA_FACTORS",
            (0.5, 1.0),
            _BINARY | _mc("wsvmgui_ova", "wsvmgui_plain"),
        ),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_C_GRID",
            (0.1, 1.0, 10.0),
            _mc("wsvmgui", "wsvmgui_large_min"),
        ),
        (
            "wsvmgui.estimators.multiclass",
            "PAIR_SIGMA_FACTORS",
            (0.5, 1.0),
            _mc("wsvmgui", "wsvmgui_large_min"),
        ),
        # screen="auto": each estimator's row threshold, the share and cells kept of all
        ("wsvmgui.ladder.screening", "BINARY_MIN_ROWS", 250, _BINARY),
        ("wsvmgui.multiclass.ova", "OVA_SCREEN_MIN_ROWS", 1000, _mc("wsvmgui_ova")),
        (
            "wsvmgui.ladder.screening",
            "Screening.min_rows",
            500,
            _mc("wsvmgui", "wsvmgui_large_min", "wsvmgui_plain"),
        ),
        (
            "wsvmgui.ladder.screening",
            "Screening.keep",
            4,
            _BINARY | _mc("wsvmgui", "wsvmgui_ova", "wsvmgui_plain", "wsvmgui_large_min"),
        ),
    ],
)
def test_a_change_of_a_named_choices_constant_stales_exactly_its_users(
    acc, monkeypatch, module, name, other, stale_keys
):
    """Records computed under another value of a constant that ``cv="auto"``,
    ``screen="auto"``, ``lambdas=None``, ``sigmas=None``, ``large_n_auto="widest_spline"`` or
    ``calibration="auto"`` reads go stale exactly where the method's estimator uses it; the
    other records (the peers', the methods that do not read it) stay current.  Records of
    today's values are current."""
    import importlib

    where = importlib.import_module(module)
    *path, attribute = name.split(".")
    for part in path:
        where = getattr(where, part)
    assert getattr(where, attribute) != other
    monkeypatch.setattr(where, attribute, other)
    try:
        old = _rule_records(acc, _CHOICE_GROUPS)
    finally:
        monkeypatch.undo()
    state = {"runs": copy.deepcopy(old), "failures": {}}
    log = acc.reconcile(state, n_test=10_000)
    stale = _by_record(acc, state["stale"])
    assert set(stale) == stale_keys
    assert len(log) == len(stale_keys)
    assert stale == {k: old[k] for k in stale}  # kept, for audit
    assert state["runs"] == {k: v for k, v in old.items() if k not in stale}
    fresh = {"runs": _rule_records(acc, _CHOICE_GROUPS), "failures": {}}
    assert acc.reconcile(fresh, n_test=10_000) == [] and fresh["stale"] == {}


def test_the_ninth_sittings_named_choices_are_recorded_where_used(acc):
    """What each definition records of the ninth sitting's choices: the binary ladder its
    ``cv="auto"`` split rule and screening threshold, the pair schemes their folds,
    coarse grid and (the default only) the large-n maps, One-vs-All and the hold-out
    variants the 30 % hold-out, and no ``calibration="none"`` method the spline's
    penalties."""
    import wsvmgui.estimators.multiclass as multiclass
    from wsvmgui.ladder import recalibration, splits
    from wsvmgui.ladder.screening import BINARY_MIN_ROWS, Screening
    from wsvmgui.ladder.tuning import DEFAULT_C_GRID
    from wsvmgui.multiclass.ova import OVA_SCREEN_MIN_ROWS
    from wsvmgui.solvers.kernels import DEFAULT_SIGMA_FACTORS

    binary = json.loads(acc._method_definition("wsvmgui", 2))
    assert binary["cv=auto"] == splits.AUTO_CV_MAX_N
    assert binary["cv=auto:AUTO_FOLDS"] == splits.AUTO_FOLDS
    assert binary["cv=auto:DEFAULT_HOLDOUT"] == splits.DEFAULT_HOLDOUT
    assert binary["screen=auto"] == BINARY_MIN_ROWS
    assert binary["screen=auto:Screening.share"] == Screening.share
    assert binary["calibration=auto:SPLINE_PENALTIES"] == list(recalibration.SPLINE_PENALTIES)
    assert binary["lambdas=None"] == list(DEFAULT_C_GRID)
    assert binary["sigmas=None"] == list(DEFAULT_SIGMA_FACTORS)
    for K in (3, 5):
        mc = json.loads(acc._method_definition("wsvmgui", K))
        assert mc["cv=auto"] == multiclass.PAIR_TUNING_FOLDS
        assert mc["lambdas=None"] == list(multiclass.PAIR_C_GRID)
        assert mc["sigmas=None"] == list(multiclass.PAIR_SIGMA_FACTORS)
        assert not any("DEFAULT_C_GRID" in k or "DEFAULT_SIGMA" in k for k in mc)
        assert mc["large_n_auto=widest_spline"] == list(multiclass.PAIR_LARGE_MAPS)
        assert mc["screen=auto:Screening.min_rows"] == Screening.min_rows
        assert not any("DEFAULT_HOLDOUT" in k or "OVA_SCREEN" in k for k in mc)
        large_min = json.loads(acc._method_definition("wsvmgui_large_min", K))
        assert not any(k.startswith("large_n_auto=") or "SPLINE_PEN" in k for k in large_min)
        for group in ("wsvmgui_ova", "wsvmgui_plain"):
            other = json.loads(acc._method_definition(group, K))
            assert other["cv=auto:DEFAULT_HOLDOUT"] == splits.DEFAULT_HOLDOUT
            assert other["lambdas=None:DEFAULT_C_GRID"] == list(DEFAULT_C_GRID)
            assert other["sigmas=None:DEFAULT_SIGMA_FACTORS"] == list(DEFAULT_SIGMA_FACTORS)
            assert not any(k in other for k in ("cv=auto", "lambdas=None", "sigmas=None"))
        plain = json.loads(acc._method_definition("wsvmgui_plain", K))
        assert not any(k.startswith("calibration=") for k in plain)
        ova = json.loads(acc._method_definition("wsvmgui_ova", K))
        assert ova["screen=auto:OVA_SCREEN_MIN_ROWS"] == OVA_SCREEN_MIN_ROWS


def test_records_of_earlier_scripts_get_the_ninth_sittings_choices(acc):
    """The migration of the ninth sitting: records of the eighth sitting's script (without
    the ninth's keys) and of the script before it (without either sitting's) get
    :data:`ADDED_CHOICES`' values and stay current; a record with some of a sitting's keys
    but not all is no script's and goes stale; records under another value of a ninth
    constant today are not stamped but go stale.  ``ADDED_CHOICES``' values are today's
    here (this test fails when a constant changes: the values stay those the records were
    computed with, and this test's expectations change with them)."""
    today = _rule_records(acc, _CHOICE_GROUPS)
    wsvmgui = {k for k in today if not k.endswith("|svm")}
    for sittings in ((1,), (0, 1)):
        old = _without_added(today, acc, sittings)
        assert {k for k in old if old[k] != today[k]} == wsvmgui
        state = {"runs": copy.deepcopy(old), "failures": {}}
        log = acc.reconcile(state, n_test=10_000)
        assert sorted(log) == sorted(f"{k}: definition completed (ADDED_CHOICES)" for k in wsvmgui)
        assert state["runs"] == today and state["stale"] == {}
        assert acc.reconcile(state, n_test=10_000) == []  # once
    # some of the ninth sitting's keys but not all: not stamped, stale
    partial = _without_added(today, acc, (1,))
    key = "wuliu2011_ex1|100|0|wsvmgui"
    partial[key][0]["definition"]["method"]["cv=auto"] = 500
    state = {"runs": copy.deepcopy(partial), "failures": {}}
    acc.reconcile(state, n_test=10_000)
    assert set(_by_record(acc, state["stale"])) == {key}
    assert state["runs"] == {k: v for k, v in today.items() if k != key}


def test_unstamped_records_of_another_constant_go_stale(acc, monkeypatch):
    """Records stored without the ninth sitting's keys, when a constant they name has
    changed since (here the pair schemes' folds), are not stamped: exactly the methods
    using it go stale, every other record is stamped and current."""
    import wsvmgui.estimators.multiclass as multiclass

    old = _without_added(_rule_records(acc, _CHOICE_GROUPS), acc, (1,))
    state = _reconciled_under(acc, monkeypatch, old, multiclass, "PAIR_TUNING_FOLDS", 5)
    stale = _by_record(acc, state["stale"])
    assert set(stale) == _mc("wsvmgui", "wsvmgui_large_min")
    assert all("cv=auto" not in r["definition"]["method"] for r in sum(stale.values(), []))
    assert set(state["runs"]) == set(old) - set(stale)


def test_given_grids_and_splits_name_no_choice(acc):
    """An estimator given its grids (arrays) and its splits (a splitter) records none of
    the default grids' or ``cv="auto"``'s constants, and an array is never taken for a
    named value."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from wsvmgui import MulticlassWeightedSVMClassifier, WeightedSVMClassifier

    for est in (
        WeightedSVMClassifier(lambdas=np.array([0.1, 0.01]), sigmas=[0.5, 1.0], cv=3),
        MulticlassWeightedSVMClassifier(
            scheme="pairwise", lambdas=np.array([0.1]), sigma=1.0, cv=StratifiedKFold(3)
        ),
    ):
        got = acc._estimator_definition(est)
        assert not any(k.startswith(("lambdas=", "sigmas=", "cv=")) for k in got), got


def test_report_gives_the_ratio_to_each_peer_held_fixed(acc):
    """The fixed-peer section divides the default's mean by each peer's mean over the
    seeds the default and every peer ran, and names the row's hindsight best peer."""
    runs = {}
    peer_l1 = {"platt": 0.4, "sigmoid": 0.5, "isotonic": 0.2, "venn_abers": 0.25}
    for seed in range(4):
        # seed 3: isotonic did not run, so the pairing drops it (its L1 there would
        # have made isotonic the worst peer)
        rows = [_row("wuliu2011_ex1", 100, seed, 2, m, L1=v if seed < 3 else 9.0)
                for m, v in peer_l1.items() if not (seed == 3 and m == "isotonic")]  # fmt: skip
        runs[f"wuliu2011_ex1|100|{seed}|svm"] = rows
        runs[f"wuliu2011_ex1|100|{seed}|wsvmgui"] = [
            _row("wuliu2011_ex1", 100, seed, 2, "wsvmgui", L1=0.1 * (seed + 2))
        ]  # L1 0.2, 0.3, 0.4 on the paired seeds: mean 0.3
    text = acc.report({"runs": runs, "failures": {}})
    section = text.split("## `wsvmgui` against each SVM-based peer held fixed")[1]
    section = section.split("\n## ")[0]
    # 0.3 / 0.4, 0.3 / 0.5, 0.3 / 0.2, 0.3 / 0.25; best (smallest mean) is isotonic
    assert "| wuliu2011_ex1 | 100 | 3 | 0.75 | 0.60 | 1.50 | 1.20 | isotonic |" in section
    assert "| rows no worse | | | 1 of 1 | 1 of 1 | 0 of 1 | 0 of 1 | |" in section
    # the hindsight column of the other tables is the ratio to that best peer
    assert "| wuliu2011_ex1 | 100 | 1.50 ✗ [3] |" in text.split("### Binary designs")[1]
