"""Missing values in the data panel, model files and scoring new tables (wsvmgui.io)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_and_wait

from wsvmgui.app.settings import RunSettings

SETTINGS = RunSettings(n_weights=6, lambdas=[0.01], sigmas=[1.5], n_jobs=1)


def _table(path, X, y, names=("a", "b", "c")):
    lines = [",".join([*names, "label"])]
    for row, label in zip(X, y, strict=True):
        cells = ["" if np.isnan(v) else repr(float(v)) for v in row]
        lines.append(",".join([*cells, str(label)]))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def gappy(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    X[[4, 17, 40], [1, 2, 0]] = np.nan
    return _table(tmp_path / "gappy.csv", X, y), X, y


def test_missing_values_error_drop_impute(qtbot, window, gappy):
    path, X, y = gappy
    panel = window.data_panel
    before = panel.dataset
    assert not panel.open_file(str(path))
    assert window.messages.level == "error" and "missing" in window.messages.text()
    assert panel.dataset is before and panel.missing.isVisibleTo(panel)
    panel.missing.setCurrentText("drop")
    panel._missing_chosen()
    assert (
        panel.dataset.X.shape[0] == 87
        and "3 rows with missing values dropped" in panel.summary.text()
    )
    panel.missing.setCurrentText("impute")
    panel._missing_chosen()
    ds = panel.dataset
    assert ds.X.shape[0] == 90 and int(np.isnan(ds.X).sum()) == 3
    result = run_and_wait(qtbot, window, SETTINGS)
    assert result is not None, window.messages.text()
    assert result.settings.missing == "impute" and result.settings.standardize
    split = result.split
    # the views see the gaps filled with medians of the training rows only
    train = X[split.train.index]
    medians = np.nanmedian(train, axis=0)
    for r, c in ((4, 1), (17, 2), (40, 0)):
        assert split.dataset.X[r, c] == pytest.approx(medians[c])
        assert not np.isnan(split.X_all[r]).any()
    assert not np.isnan(window.bars_view.bar_arrays()["heights"]).any()


def test_save_load_model_and_score_a_file(qtbot, window, tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 3)) * [1.0, 10.0, 0.1] + [0, 50, 3]
    y = np.where(X[:, 0] + 0.1 * (X[:, 1] - 50) > 0, "up", "down")
    path = _table(tmp_path / "train.csv", X, y)
    assert window.data_panel.open_file(str(path))
    result = run_and_wait(qtbot, window, SETTINGS)
    assert result is not None, window.messages.text()
    model_path = tmp_path / "m.wsvm"
    assert window.files.save_model(str(model_path)), window.messages.text()
    assert window.files.load_model(str(model_path))
    assert "scheme binary" in window.messages.text()
    # score the test rows from a new file: the same probabilities as the app's result
    test = result.split.test.index
    new = _table(tmp_path / "new.csv", X[test], y[test])
    out = tmp_path / "scored.csv"
    assert window.files.score_file(str(new), str(out)) is not None
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert "Scored" in window.messages.text() and "error" in window.messages.text()
    from wsvmgui.io.results import read_probabilities_csv

    frame, _settings, _meta = read_probabilities_csv(out)
    for k, c in enumerate(result.report.classes):
        np.testing.assert_allclose(
            frame[f"p_{c}"].to_numpy(float), result.report.proba[test, k], atol=1e-9
        )


def test_scoring_needs_a_model_and_bad_model_files_are_refused(qtbot, window, tmp_path):
    assert window.files.score_file("whatever.csv", str(tmp_path / "o.csv")) is None
    assert window.messages.level == "error" and "run an analysis" in window.messages.text()
    bad = tmp_path / "bad.wsvm"
    bad.write_bytes(b"\x80\x04not a model")
    assert not window.files.load_model(str(bad))
    assert window.messages.level == "error" and "\n" not in window.messages.text()
    assert window.files.model is None
