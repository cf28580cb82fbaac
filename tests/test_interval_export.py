"""Per-point intervals in the results (issue 23 item 5): the settings that ask for them
and for the calibration and tuning options, the report columns, the CSV and its sidecar
(command line and model file alike), and refusals of what cannot give intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.schemes import make_estimator
from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.errors import InputError
from wsvmgui.estimators.binary import WeightedSVMClassifier
from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier
from wsvmgui.estimators.report import with_intervals
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io.modelfile import load_model
from wsvmgui.io.results import probability_columns, read_results

SMALL = dict(lambdas=[0.01, 0.002], sigmas=[0.7, 1.4])


@pytest.fixture(scope="module")
def calibrated():
    d = simulate("wang2008_ex1", 200, 4)
    est = WeightedSVMClassifier(calibration="isotonic", cv=3, **SMALL).fit(d.X, d.y)
    return est, d


def test_settings_hold_and_check_the_options():
    s = RunSettings(calibration="auto", ties="key", tuning_score="log_loss", tuning_rule="one_se")
    s.intervals = True
    back = RunSettings.from_json(s.validate().to_json())
    assert back == s
    est = make_estimator(back, 2)
    assert est.get_params()["calibration"] == "auto"
    assert est.get_params()["tuning_score"] == "log_loss"
    assert est.get_params()["tuning_rule"] == "one_se"
    multi = make_estimator(RunSettings(scheme="pairwise", ties="key", calibration="beta"), 3)
    assert multi.get_params()["ties"] == "key" and multi.get_params()["calibration"] == "beta"
    # left at None: the estimators' defaults (recalibrated, EGKL, "auto": the binary
    # scheme's widest one-SE cell up to 500 rows, the multiclass pair schemes' widest
    # within half an SE up to 1000 rows, One-vs-All's minimum: docs/notes/calibration.md,
    # multiclass_accuracy.md)
    for scheme, K, rule in (("binary", 2, "auto"), ("ova", 3, "auto")):
        params = make_estimator(RunSettings(scheme=scheme), K).get_params()
        assert [params[k] for k in ("calibration", "tuning_score", "tuning_rule")] == [
            "auto", "egkl", rule
        ]  # fmt: skip
    for bad, needle in (
        ({"calibration": "platt"}, "unknown calibration"),
        ({"ties": "random"}, "unknown ties"),
        ({"tuning_score": "auc"}, "unknown tuning_score"),
        ({"tuning_rule": 1}, "tuning_rule must be a name"),
        ({"intervals": "yes"}, "intervals must be true or false"),
        ({"intervals": True, "calibration": "none"}, "need the binary scheme and a calibration"),
        ({"intervals": True, "calibration": "auto", "scheme": "ova"}, "scheme 'ova'"),
    ):
        with pytest.raises(InputError, match=needle):
            RunSettings.from_dict(bad)
    # the default (None) is the binary estimator's recalibration: intervals need no option
    assert RunSettings.from_dict({"intervals": True}).validate().intervals


def test_report_columns_hold_the_intervals_of_both_classes(calibrated):
    est, d = calibrated
    X = d.X[:50]
    rep = with_intervals(est.report(X), est, X)
    lo1, hi1 = est.predict_interval(X)
    lo, hi = rep.interval()
    np.testing.assert_array_equal(lo[:, 1], lo1)
    np.testing.assert_allclose(lo[:, 0], 1 - hi1)
    np.testing.assert_allclose(hi[:, 0], 1 - lo1)
    assert np.all(lo <= rep.proba + 1e-12) and np.all(rep.proba <= hi + 1e-12)
    cols, desc = probability_columns(rep, np.arange(1, 51))
    for c in ("-1", "1"):
        assert f"p_{c}_lo" in cols and f"p_{c}_hi" in cols
        assert "90% interval" in desc[f"p_{c}_lo"]
    np.testing.assert_array_equal(cols["p_1_hi"], hi1)
    assert est.report(X).interval() is None  # only when asked for


def test_estimators_without_intervals_are_refused(calibrated):
    _, d = calibrated
    plain = WeightedSVMClassifier(lam=0.01, sigma=1.0, calibration="none").fit(d.X, d.y)
    with pytest.raises(InputError, match="calibration"):
        with_intervals(plain.report(d.X[:5]), plain, d.X[:5])
    m = simulate("wu2010_ex1", 90, 0)
    multi = MulticlassWeightedSVMClassifier(scheme="ova", lam=0.01, sigma=1.0).fit(m.X, m.y)
    with pytest.raises(InputError, match="no per-point intervals"):
        with_intervals(multi.report(m.X[:5]), multi, m.X[:5])


def _csv(path, d):
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame["label"] = np.where(d.y > 0, "good", "bad")
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_writes_intervals_and_records_the_options(capsys, tmp_path):
    train = _csv(tmp_path / "train.csv", simulate("wuliu2011_ex6", 120, 1))
    out, model = tmp_path / "p.csv", tmp_path / "m.wsvm"
    args = [
        "fit", train, "--label", "label", "--out", out, "--model", model, "--quiet",
        "--lambda", "0.01,0.002", "--sigma", "0.7,1.4", "--cv", "3", "--calibration", "sigmoid",
        "--tuning-score", "brier", "--one-se", "--intervals",
    ]  # fmt: skip
    assert main([str(a) for a in args]) == 0, capsys.readouterr().err
    frame = pd.read_csv(out)
    for c in ("bad", "good"):
        lo, p, hi = frame[f"p_{c}_lo"], frame[f"p_{c}"], frame[f"p_{c}_hi"]
        assert ((lo <= p + 1e-9) & (p <= hi + 1e-9) & (lo >= 0) & (hi <= 1)).all()
    np.testing.assert_allclose(frame["p_bad_lo"], 1 - frame["p_good_hi"], atol=1e-9)
    sidecar = read_results(out)[1]
    settings = sidecar["settings"]
    assert settings["calibration"] == "sigmoid" and settings["intervals"] is True
    assert settings["tuning_score"] == "brier" and settings["tuning_rule"] == "one_se"
    # the saved model predicts the same intervals
    again = tmp_path / "q.csv"
    assert main(["predict", str(model), train, "--out", str(again), "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(again), frame)
    loaded = load_model(str(model))
    assert loaded.estimator.tuning_.rule == "one_se"


def test_cli_refuses_intervals_without_a_calibration(capsys, tmp_path):
    train = _csv(tmp_path / "train.csv", simulate("wuliu2011_ex6", 40, 1))
    code = main(["fit", train, "--label", "label", "--out", str(tmp_path / "p.csv"),
                 "--intervals", "--calibration", "none", "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and "need the binary scheme and a calibration" in err
    assert not (tmp_path / "p.csv").exists()
