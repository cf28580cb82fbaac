"""Scheme-specific views: divide-and-conquer ladders, the joint simplex, the scheme list.

The schemes come from the registry when it has them; until the registry lists them, the
test registers the core's estimators under the same names (monkeypatch, undone after).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import run_and_wait

from wsvmgui.app import schemes as registry
from wsvmgui.app.settings import RunSettings


def _ensure(monkeypatch, name: str, module: str, build) -> None:
    if name in registry.SCHEMES and registry.SCHEMES[name].availability()[0]:
        return
    try:
        importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not in this build")
    monkeypatch.setitem(
        registry.SCHEMES,
        name,
        registry.Scheme(name, name, f"{name} (registered by the test)", True, module, build),
    )


def _pairwise(s: RunSettings):
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    return MulticlassWeightedSVMClassifier(
        scheme="pairwise",
        kernel=s.kernel,
        n_weights=s.n_weights,
        lambdas=s.lambdas,
        sigmas=s.sigmas,
        n_jobs=1,
        random_state=s.seed,
    )


def _joint(s: RunSettings):
    from wsvmgui.estimators.joint import JointWSVMClassifier

    return JointWSVMClassifier(
        n_weights=s.joint_n, kernel=s.kernel, lam=s.lambdas[0], random_state=s.seed
    )


@pytest.fixture
def k3_window(window):
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    window.data_panel.n_points.setValue(150)
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    return window


def test_pairwise_boundaries_per_subproblem_and_ladders(qtbot, monkeypatch, k3_window):
    _ensure(monkeypatch, "pairwise", "wsvmgui.estimators.multiclass", _pairwise)
    window = k3_window
    window.settings_panel.refresh_availability(3)
    settings = RunSettings(scheme="pairwise", n_weights=5, lambdas=[0.005], sigmas=[1.0], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    view = window.boundary_view
    names = [view.sub_combo.itemText(i) for i in range(view.sub_combo.count())]
    assert len(names) == 3 and view.sub_combo.isEnabled()
    decisions = result.estimator.subproblem_decisions  # (n, M - 1) per sub-problem
    for k in range(3):
        view.sub_combo.setCurrentIndex(k)
        curves = view.left.boundary_data()
        assert len(curves) == 4
        for m, (x, y) in enumerate(curves):
            if x.size == 0:
                continue
            # curves in raw units, the model on standardised inputs
            f = decisions(result.split.transform(np.column_stack([x, y])))[k][:, m]
            scale = np.abs(decisions(result.split.X_all)[k][:, m]).max()
            assert np.max(np.abs(f)) < 0.05 * scale
    # the selected point's three ladders, one row each, with their brackets
    row = int(result.split.test.index[0])
    window.selection.select(row)
    lad = window.simplex_view.ladder_arrays()
    assert lad["sign_x"].size == 3 * 4
    expected = np.ravel([[lad_.lo[row], lad_.hi[row]] for lad_ in result.ladders])
    np.testing.assert_allclose(lad["bracket_x"], expected)
    # K = 3 bars: three stacked classes that sum to one
    bars = window.bars_view.bar_arrays()
    assert bars["heights"].shape[0] == 3
    np.testing.assert_allclose(bars["heights"].sum(axis=0), 1.0)


def test_results_show_each_subproblems_tuning_table(qtbot, monkeypatch, k3_window):
    _ensure(monkeypatch, "pairwise", "wsvmgui.estimators.multiclass", _pairwise)
    window = k3_window
    window.settings_panel.refresh_availability(3)
    settings = RunSettings(
        scheme="pairwise", n_weights=4, lambdas=[0.05, 0.005], sigmas=[1.0, 2.0], n_jobs=1
    )
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    view = window.results_view
    window.tabs.setCurrentWidget(view)
    fitted = result.estimator.subproblems_.fitted
    combo = view.surface_combo
    assert combo.isVisible() and combo.count() == 3
    assert view.tuning_stack.currentWidget() is view.graphics
    for k, f in enumerate(fitted):
        combo.setCurrentIndex(k)
        np.testing.assert_array_equal(view.tuning_table, f.tuning.egkl)
        i, j = view.best.data["x"][0], view.best.data["y"][0]
        assert f.tuning.lambdas[int(i)] == f.tuning.best_lambda
        assert f.tuning.sigmas[int(j)] == f.sigma
    # one lambda and one sigma: a note instead of a stale map, no picker
    one = RunSettings(scheme="pairwise", n_weights=4, lambdas=[0.005], sigmas=[1.0], n_jobs=1)
    assert run_and_wait(qtbot, window, one) is not None
    assert view.tuning_table is None and not combo.isVisible()
    assert view.tuning_stack.currentWidget() is view.no_table
    assert "not tuned" in view.no_table.text()


def test_joint_simplex_triangle(qtbot, monkeypatch, k3_window):
    name = "joint-indirect"
    _ensure(monkeypatch, name, "wsvmgui.estimators.joint", _joint)
    window = k3_window
    window.settings_panel.refresh_availability(3)
    settings = RunSettings(scheme=name, kernel="linear", joint_n=6, lambdas=[0.01], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    simplex = result.simplex
    assert simplex is not None and simplex.grid.shape == (10, 3)
    row = int(result.split.test.index[2])
    window.selection.select(row)
    view = window.simplex_view
    view.ensure_drawn()  # drawn when shown
    xy = simplex.grid @ np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    np.testing.assert_allclose(view.grid_points.data["x"], xy[:, 0])
    # each grid weight is coloured by the class predicted there for this point
    colors = [b.color().getRgb()[:3] for b in view.grid_points.data["brush"]]
    from wsvmgui.app.plane import class_colors

    expected = [tuple(int(v) for v in class_colors(3)[k]) for k in simplex.predictions[row]]
    assert colors == expected
    border = view.border_mark.data
    bxy = simplex.border[row] @ np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    np.testing.assert_allclose([border["x"][0], border["y"][0]], bxy)
    x, y = view.partition.getData()
    assert x.size == 6  # three lines from the border weight to the edges
    np.testing.assert_allclose(x[::2], bxy[0])


def test_partition_lines_meet_the_edges_where_the_classes_tie():
    from wsvmgui.gui.views.simplex_view import partition_segments

    border = np.array([0.2, 0.3, 0.5])
    p = (1 / border) / np.sum(1 / border)
    for start, end in partition_segments(border):
        np.testing.assert_allclose(start, border)
        assert np.isclose(end.sum(), 1.0) and np.sum(end == 0) == 1
        j, k = np.flatnonzero(end > 0)
        assert end[j] * p[j] == pytest.approx(end[k] * p[k])  # pi_j p_j = pi_k p_k


def test_unavailable_scheme_is_listed_but_disabled(qtbot, monkeypatch, settings_folder):
    from wsvmgui.gui.settings_panel import SettingsPanel

    monkeypatch.setitem(
        registry.SCHEMES,
        "ghost",
        registry.Scheme("ghost", "Ghost", "not built", True, "wsvmgui.no_such_module", _pairwise),
    )
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    row = panel.scheme.findData("ghost")
    assert row >= 0
    item = panel.scheme.model().item(row)
    assert not item.isEnabled()
    assert "no_such_module" in item.toolTip()
    assert panel.scheme_enabled("binary")


def test_compact_names_drop_the_shared_class_prefix_only():
    from wsvmgui.gui.views.common import compact_name

    classes = ["class_0", "class_1", "class_2"]
    assert compact_name("class_2|class_1,class_2", classes) == "2|1,2"
    assert compact_name("class_2|class_0,class_2", classes) == "2|0,2"  # still distinct
    assert compact_name("class_1|rest", classes) == "1|rest"
    assert compact_name("2|1,2", [1, 2, 3]) == "2|1,2"  # no shared prefix
    assert compact_name("ab|a,ab", ["a", "ab"]) == "ab|a,ab"  # a label is the prefix
