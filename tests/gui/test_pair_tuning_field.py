"""The settings panel's pair tuning field: shown for the pair schemes on 3+ classes only,
bound to RunSettings.pair_tuning both ways, and disabled, saying why, where the tuning
mode and the grids leave it nothing to set."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt

from wsvmgui.app.schemes import make_estimator
from wsvmgui.app.settings import RunSettings
from wsvmgui.evaluation.designs import simulate


def test_pair_tuning_round_trips_and_reaches_the_estimator(shown_panel):
    panel = shown_panel(3)
    for value in (None, "folds", "holdout"):
        panel.set_settings(replace(RunSettings(), scheme="pairwise", pair_tuning=value))
        assert panel.pair_tuning.isVisible() and panel.pair_tuning.isEnabled()
        assert panel.settings().pair_tuning == value
    panel.pair_tuning.setCurrentIndex(panel.pair_tuning.findData("holdout"))  # as a user
    s = panel.settings()
    assert s.pair_tuning == "holdout" and panel.preset_name() == "custom"
    assert make_estimator(s, 3).get_params()["pair_tuning"] == "holdout"
    tips = {
        panel.pair_tuning.itemData(i): panel.pair_tuning.itemData(i, Qt.ItemDataRole.ToolTipRole)
        for i in range(panel.pair_tuning.count())
    }
    assert "3 stratified folds" in tips["folds"] and "30% hold-out" in tips["holdout"]
    assert "folds" in tips[None]
    assert panel.pair_note.text() == "sets the split, the \u03bb grid and the \u03c3 grid"


def test_pair_tuning_is_hidden_where_it_does_nothing(shown_panel):
    panel = shown_panel(3)
    panel.set_settings(replace(RunSettings(), scheme="ova"))
    assert not panel.pair_tuning.isVisible() and not panel.pair_note.isVisible()
    panel.set_settings(replace(RunSettings(), scheme="bp2"))
    assert panel.pair_tuning.isVisible()
    two = shown_panel(2)
    two.set_settings(replace(RunSettings(), scheme="pairwise"))
    assert not two.pair_tuning.isVisible()


def test_presets_leave_it_what_they_do_not_set_and_grids_typed_in_disable_it(shown_panel):
    """The quick preset keeps the pair schemes' own tuning on 3+ classes (the split and
    both grids are pair_tuning's); thorough sets the folds; grids typed in take the rest,
    and the field is disabled, saying why, where nothing is left to it."""
    panel = shown_panel(3)
    d = simulate("wu2010_ex1", 90, seed=0)
    panel.set_settings(replace(RunSettings(), scheme="pairwise"), preset="quick")
    panel.set_training_data(d.X, d.y)  # applies the quick preset: the estimator's tuning
    s = panel.settings()
    assert s.tuning == "auto" and s.lambdas is None and s.sigmas is None
    assert panel.pair_tuning.isEnabled() and panel.pair_tuning.isVisible()
    assert panel.pair_note.text() == "sets the split, the \u03bb grid and the \u03c3 grid"
    assert panel.apply_preset("thorough")  # 10 folds, blank grids: it sets the grids only
    assert panel.pair_tuning.isEnabled()
    assert (
        panel.pair_note.text() == "sets the \u03bb grid and the \u03c3 grid; the rest is set above"
    )
    panel.lambdas.setText("0.01, 0.001")  # a grid typed in: the sigma grid is left
    assert panel.pair_note.text() == "sets the \u03c3 grid; the rest is set above"
    panel.sigmas.setText("1")
    assert not panel.pair_tuning.isEnabled()
    assert panel.pair_note.text().startswith("no effect")
    assert "no effect" in panel.pair_tuning.toolTip()
