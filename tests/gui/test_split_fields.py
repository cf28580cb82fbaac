"""The settings panel's tune fraction and CV folds: enabled where the tuning mode reads
them (split and tune-set, cv), hidden where it reads the other, and under tuning "auto",
which ignores both, shown disabled with what auto does instead (app.schemes.auto_split)."""

from __future__ import annotations

from dataclasses import replace

from wsvmgui.app.schemes import make_estimator
from wsvmgui.app.settings import RunSettings


def test_auto_shows_both_disabled_and_says_what_it_does(shown_panel):
    panel = shown_panel(2)
    panel.set_settings(replace(RunSettings(), scheme="binary", tuning="auto"))
    for field in (panel.tune_fraction, panel.cv_folds):
        assert field.isVisible() and not field.isEnabled()
        assert "not used: tuning auto" in field.toolTip()
    assert panel.split_note.isVisible()
    assert panel.split_note.text().startswith(
        "tuning auto: 5-fold CV up to 500 rows, a 30% hold-out above"
    )
    panel.set_settings(replace(RunSettings(), scheme="preconditioned", tuning="auto"))
    assert panel.split_note.text().startswith("tuning auto: a 30% hold-out;")


def test_the_pair_tuning_changes_what_auto_says(shown_panel):
    panel = shown_panel(3)
    panel.set_settings(replace(RunSettings(), scheme="pairwise", tuning="auto"))
    assert panel.split_note.text().startswith("tuning auto: 3-fold CV;")
    panel.pair_tuning.setCurrentIndex(panel.pair_tuning.findData("holdout"))  # as a user
    assert panel.split_note.text().startswith("tuning auto: a 30% hold-out;")


def test_a_mode_that_reads_a_field_enables_it_and_the_value_reaches_the_estimator(shown_panel):
    panel = shown_panel(2)
    panel.set_settings(replace(RunSettings(), scheme="binary", tuning="auto"))
    panel.tuning.setCurrentText("split")  # as a user
    assert panel.tune_fraction.isVisible() and panel.tune_fraction.isEnabled()
    assert not panel.cv_folds.isVisible() and not panel.split_note.isVisible()
    panel.tune_fraction.setValue(0.4)
    assert make_estimator(panel.settings(), 2).cv == 0.4
    panel.tuning.setCurrentText("cv")
    assert panel.cv_folds.isVisible() and panel.cv_folds.isEnabled()
    assert not panel.tune_fraction.isVisible()
    panel.cv_folds.setValue(7)
    assert make_estimator(panel.settings(), 2).cv == 7
    panel.tuning.setCurrentText("tune-set")
    assert panel.tune_fraction.isEnabled() and not panel.cv_folds.isVisible()
    panel.tuning.setCurrentText("auto")  # the values stay, unused
    s = panel.settings()
    assert (s.tune_fraction, s.cv_folds) == (0.4, 7) and make_estimator(s, 2).cv == "auto"
    assert not panel.tune_fraction.isEnabled() and not panel.cv_folds.isEnabled()
