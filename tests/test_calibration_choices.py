"""The ``calibration`` choices the app offers (``app.settings.CALIBRATION_CHOICES``): the
command line, the settings and the estimators accept the same names, and a map chosen by
name (``"plateau"``) reaches the fitted estimator, its maps and the sidecar's settings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.settings import CALIBRATION_CHOICES, RunSettings
from wsvmgui.cli import EXIT_INPUT, main
from wsvmgui.errors import InputError
from wsvmgui.evaluation.designs import simulate
from wsvmgui.io.modelfile import load_model
from wsvmgui.io.results import read_probabilities_csv
from wsvmgui.ladder.recalibration import CALIBRATIONS, MAPS

FAST = ["--lambda", "0.01", "--sigma", "1.0", "--weights", "5", "--quiet"]


def test_every_map_is_offered_and_every_choice_is_an_estimator_value():
    assert set(CALIBRATION_CHOICES) == {"none", "auto", *MAPS}
    assert set(CALIBRATION_CHOICES) <= set(CALIBRATIONS)  # both estimators' constraint
    assert "auto_plateau" not in CALIBRATION_CHOICES  # the binary "auto" by another name


@pytest.mark.parametrize("value", CALIBRATION_CHOICES)
def test_settings_round_trip_every_choice(value):
    s = RunSettings(calibration=value).validate()
    assert RunSettings.from_json(s.to_json()) == s
    assert RunSettings.from_dict({"calibration": value}).calibration == value


def test_a_calibration_the_app_does_not_offer_is_named():
    with pytest.raises(InputError, match="unknown calibration 'auto_plateau'.*plateau"):
        RunSettings.from_dict({"calibration": "auto_plateau"})


def _csv(path, n: int, design: str, seed: int) -> str:
    d = simulate(design, n, seed=seed)
    frame = pd.DataFrame(d.X, columns=["x1", "x2"])
    frame["label"] = np.array(["a", "b", "c"])[np.unique(d.y, return_inverse=True)[1]]
    frame.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize(("design", "scheme"), [("wuliu2011_ex1", "binary"), ("wu2010_ex1", "bp1")])
def test_plateau_reaches_the_fitted_maps_and_the_sidecar(capsys, tmp_path, design, scheme):
    train = _csv(tmp_path / "train.csv", 90, design, 1)
    out, model = tmp_path / "p.csv", tmp_path / "m.wsvm"
    argv = ["fit", train, "--label", "label", "--out", out, "--model", model, *FAST]
    code = main([str(a) for a in [*argv, "--scheme", scheme, "--calibration", "plateau"]])
    assert code == 0, capsys.readouterr().err
    est = load_model(model).estimator
    assert est.get_params()["calibration"] == "plateau"
    maps = [est.calibration_] if scheme == "binary" else est.calibrations_
    assert maps and all(g.name == "plateau" for g in maps)
    frame, settings, _meta = read_probabilities_csv(out)
    assert settings["calibration"] == "plateau"
    assert RunSettings.from_dict(settings).calibration == "plateau"
    p = frame[[f"p_{c}" for c in est.classes_]].to_numpy()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


def test_the_command_line_lists_the_choices_and_refuses_others(capsys, tmp_path):
    train = _csv(tmp_path / "train.csv", 40, "wuliu2011_ex1", 1)
    argv = ["fit", train, "--label", "label", "--out", str(tmp_path / "o.csv")]
    assert main([*argv, "--calibration", "auto_plateau"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "--calibration" in err and "'auto_plateau'" in err
    assert all(f"'{c}'" in err for c in CALIBRATION_CHOICES)
