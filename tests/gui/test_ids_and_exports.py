"""The real window with an id column: never a feature, carried into every export; the
non-crossing note counts what the panel draws (issue 21 items 2, 3, 5, predictions as
columns)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import TINY, run_and_wait

from wsvmgui.app.datasets import load_builtin
from wsvmgui.app.settings import RunSettings


@pytest.fixture
def demo_with_id(tmp_path):
    """The demo data as a CSV whose first column ``sample_id`` steps by one in class
    order: as a feature it would separate the classes by itself."""
    ds = load_builtin("demo")
    order = np.argsort(ds.y, kind="stable")
    lines = ["sample_id,x1,x2,label"]
    for i, r in enumerate(order):
        lines.append(f"{1001 + i},{float(ds.X[r, 0])!r},{float(ds.X[r, 1])!r},{ds.y[r]}")
    path = tmp_path / "demo-ids.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, ds.X[order], ds.y[order]


def test_an_id_column_is_no_feature_and_names_every_export(qtbot, window, tmp_path, demo_with_id):
    from wsvmgui.io.results import read_probabilities_csv, read_results

    path, X, y = demo_with_id
    panel = window.data_panel
    assert panel.open_file(str(path)), window.messages.text()
    ds = panel.dataset
    assert ds.feature_names == ["x1", "x2"] and panel.id_column == "sample_id"
    np.testing.assert_array_equal(ds.X, X)
    assert "'sample_id'" in window.messages.text() and "not as a feature" in window.messages.text()
    assert "id sample_id" in panel.label_column.text()
    # the boundaries are drawn on the features, never on the id
    assert window.boundary_view.plane() == (0, 1)

    result = run_and_wait(qtbot, window, TINY)
    assert result is not None, window.messages.text()
    test = result.split.test.index

    out = tmp_path / "probs.csv"
    assert window.files.export_csv(str(out))
    frame, settings, meta = read_probabilities_csv(out)
    assert "pair_tuning" in settings  # the sidecar records every setting of the run
    assert RunSettings.from_dict(settings) == result.settings
    np.testing.assert_array_equal(frame["sample_id"].astype(int), 1001 + test)
    np.testing.assert_array_equal(frame["observed"].astype(str), y[test])
    assert meta["id"] == "sample_id" and meta["features"] == ["x1", "x2"]
    for k, c in enumerate(result.report.classes):
        np.testing.assert_allclose(frame[f"p_{c}"], result.report.proba[test, k], atol=1e-9)

    # predictions as columns: the whole input table, probabilities appended
    table = tmp_path / "with-probs.csv"
    assert window.files.export_table(str(table))
    lines = table.read_text().splitlines()
    assert lines[0].split(",")[:4] == ["sample_id", "x1", "x2", "label"]
    assert len(lines) == 1 + len(y)
    head = lines[0].split(",")
    cells = [line.split(",") for line in lines[1:]]
    p_col = head.index(f"p_{result.report.classes[1]}")
    got = np.array([float(c[p_col]) for c in cells])
    np.testing.assert_allclose(got, result.report.proba[:, 1], atol=1e-9)
    sidecar = read_results(table)[1]
    assert sidecar["rows"] == len(y)

    # the saved model needs the features only; 'Score a file' names rows by the id
    # when the table has it, else by 1-based row numbers
    model = tmp_path / "m.wsvm"
    assert window.files.save_model(str(model))
    scored = tmp_path / "scored.csv"
    assert window.files.score_file(str(path), str(scored)) is not None
    qtbot.waitUntil(lambda: scored.exists() and not window.is_busy(), timeout=30000)
    frame, _s, _m = read_probabilities_csv(scored)
    np.testing.assert_array_equal(frame["sample_id"].astype(int), 1001 + np.arange(len(y)))
    no_id = tmp_path / "no-id.csv"
    no_id.write_text("x1,x2\n" + "\n".join(f"{float(a)!r},{float(b)!r}" for a, b in X[:5]) + "\n")
    scored2 = tmp_path / "scored2.csv"
    assert window.files.score_file(str(no_id), str(scored2)) is not None
    qtbot.waitUntil(lambda: scored2.exists() and not window.is_busy(), timeout=30000)
    frame, _s, _m = read_probabilities_csv(scored2)
    np.testing.assert_array_equal(frame["row"].astype(int), [1, 2, 3, 4, 5])
    described = {c["name"]: c["description"] for c in json.loads(
        (tmp_path / "scored2.csv.json").read_text())["columns"]}  # fmt: skip
    assert "1 = first data row" in described["row"]


def test_the_non_crossing_note_counts_what_the_panel_draws(qtbot, window):
    """On 2 features the plane is the input space: the note's count of crossing pairs in
    input space includes every pair drawn inside the hull, and it names the marks."""
    import re

    window.settings_panel.compare.setChecked(True)
    settings = RunSettings(n_weights=12, lambdas=[0.005], sigmas=[0.5], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None and result.comparison is not None, window.messages.text()
    layer = next(x for x in result.plane.layers if "on-crossing" in x.title)
    drawn = {tuple(p) for p in layer.crossing_pairs[0].tolist()}
    marks = len(layer.crossings[0])
    note = window.boundary_view.info.text() + " " + window.boundary_view.info.toolTip()
    said = re.search(r"Input space: (\d+) pairs? cross", note)
    assert said is not None, note
    assert int(said.group(1)) >= len(drawn)
    assert f"{marks} mark" in note and f"{len(drawn)} pair" in note
    checks = result.crossing_checks[layer.title]
    hull_pairs = {tuple(p) for p in checks["input"]["pairs"]} if "input" in checks else set()
    assert int(said.group(1)) == len(hull_pairs | drawn)


def test_the_apps_report_holds_every_section_and_the_plots(qtbot, window, tmp_path):
    from wsvmgui.app.report import SECTIONS

    assert not window.menu_actions["export_report"].isEnabled()
    window.settings_panel.compare.setChecked(True)
    result = run_and_wait(qtbot, window, TINY)
    assert result is not None and window.menu_actions["export_report"].isEnabled()
    qtbot.waitUntil(lambda: window.runs.baselines is not None, timeout=60000)
    path = tmp_path / "r.html"
    assert window.files.export_report(str(path)), window.messages.text()
    text = path.read_text()
    for anchor, _title in SECTIONS:
        assert f'id="{anchor}"' in text
    # the calibration diagram and one inline SVG per plot view, nothing linked
    assert text.count("<svg") >= 1 + 4 and "<?xml" not in text and "src=" not in text
    assert "non-crossing (test)" in text and "logistic regression (test)" in text
    assert result.split.dataset.digest() in text
    assert "Wang, J., Shen, X. and Liu, Y. (2008)" in text
    # every id once on the page: one figure's clip paths never clip another's plot
    import re

    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)) and any("clip" in i for i in ids)
    for ref in set(re.findall(r"url\(#([^)]+)\)", text)):
        assert ref in ids
