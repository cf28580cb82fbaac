"""Which split settings the tuning mode reads (the settings panel disables the others),
and what tuning "auto" holds out instead, against the split each estimator resolves."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from wsvmgui.app.schemes import SCHEMES, auto_split, make_estimator, split_settings_read
from wsvmgui.app.settings import TUNING_MODES, RunSettings
from wsvmgui.estimators.cost import _prepared
from wsvmgui.estimators.cost_plan import _folds
from wsvmgui.evaluation.designs import DESIGNS


@pytest.mark.parametrize("mode", TUNING_MODES)
def test_the_split_settings_each_tuning_mode_reads(mode):
    read = split_settings_read(replace(RunSettings(), tuning=mode))
    assert read == {"auto": (), "split": ("tune_fraction",), "cv": ("cv_folds",),
                    "tune-set": ("tune_fraction",)}[mode]  # fmt: skip


def test_auto_ignores_the_fraction_and_the_folds_in_the_estimator():
    """Under "auto" the estimator's cv is "auto" whatever the fraction and folds say."""
    for s in (RunSettings(), RunSettings(tune_fraction=0.6, cv_folds=9)):
        assert make_estimator(s, 2).get_params()["cv"] == "auto"
    assert make_estimator(RunSettings(tuning="split", tune_fraction=0.6), 2).cv == 0.6
    assert make_estimator(RunSettings(tuning="cv", cv_folds=9), 2).cv == 9


def _resolved(settings: RunSettings, n: int, k: int) -> tuple[int, float]:
    """Folds, and the first fold's held-out share, of the estimator's own cv="auto"."""
    data = DESIGNS["wuliu2011_ex1" if k == 2 else "wu2010_ex1"].sample(n, 0)
    est, X, codes = _prepared(make_estimator(settings, k), data.X, data.y)
    labels = est.classes_[codes]
    if settings.scheme.startswith("joint"):
        folds = _folds(est, labels, holdout=True, holdout_share=0.5)
    else:
        folds = _folds(est, labels, holdout=getattr(est, "_auto_holdout", False))
    assert folds
    return len(folds), folds[0][1].size / n


def _expected(text: str, n: int) -> tuple[int, float]:
    if text.startswith("5-fold CV up to 500 rows"):
        return (5, 0.2) if n <= 500 else (1, 0.3)
    if m := re.fullmatch(r"(\d)-fold CV", text):
        return int(m.group(1)), 1 / int(m.group(1))
    m = re.fullmatch(r"a (\d+)% hold-out", text)
    assert m, text
    return 1, int(m.group(1)) / 100


SCHEME_CASES = [
    (name, k)
    for name, scheme in SCHEMES.items()
    for k in (2, 3)
    if scheme.availability()[0] and (k == 2 or scheme.multiclass)
]


@pytest.mark.parametrize("name, k", SCHEME_CASES, ids=[f"{n}-{k}" for n, k in SCHEME_CASES])
def test_what_auto_says_is_the_split_the_estimator_makes(name, k):
    for n in (150, 900):
        for pair_tuning in (None, "holdout"):
            s = replace(RunSettings(), scheme=name, pair_tuning=pair_tuning)
            text = auto_split(s, k)
            folds, share = _resolved(s, n, k)
            want_folds, want_share = _expected(text, n)
            assert folds == want_folds, (name, k, n, pair_tuning, text)
            assert share == pytest.approx(want_share, abs=0.02), (name, k, n, text)
