"""RunSettings: JSON round trip and validation of every field."""

from __future__ import annotations

import json

import pytest

from wsvmgui.app.settings import SETTINGS_VERSION, RunSettings
from wsvmgui.errors import InputError


def test_defaults_validate():
    assert RunSettings().validate() == RunSettings()


def test_json_round_trip():
    s = RunSettings(
        kernel="poly",
        degree=2,
        coef0=0.5,
        poly_gamma=2.0,
        n_weights=9,
        joint_n=12,
        lambdas=[0.1, 0.01],
        sigmas=[0.5],
        rule="extreme",
        tuning="tune-set",
        tune_fraction=0.25,
        refit=False,
        seed=7,
        n_jobs=2,
        solver="qp",
        options={"learner": "svm", "level": 0.2},
    ).validate()
    text = s.to_json()
    data = json.loads(text)
    assert data["settings_version"] == SETTINGS_VERSION
    back = RunSettings.from_json(text)
    assert back == s
    assert RunSettings.from_dict(s.to_dict()) == s


def test_partial_dict_takes_defaults():
    s = RunSettings.from_dict({"kernel": "linear", "seed": 3})
    assert s.kernel == "linear" and s.seed == 3 and s.rule == "count"


def test_unknown_keys_raise():
    with pytest.raises(InputError, match="colour"):
        RunSettings.from_dict({"kernel": "rbf", "colour": "blue"})


def test_not_json_raises():
    with pytest.raises(InputError):
        RunSettings.from_json("{kernel: rbf")
    with pytest.raises(InputError):
        RunSettings.from_json("[1, 2]")


def test_wrong_version_raises():
    with pytest.raises(InputError, match="version"):
        RunSettings.from_dict({"settings_version": SETTINGS_VERSION + 1})


@pytest.mark.parametrize(
    "bad",
    [
        {"scheme": "nope"},
        {"kernel": "gauss"},
        {"rule": "median"},
        {"tuning": "loo"},
        {"cv_folds": 1},
        {"solver": "cplex"},
        {"n_weights": 1},
        {"n_weights": "5"},
        {"n_weights": 5.5},
        {"joint_n": 2},
        {"joint_n": "20"},
        {"tune_fraction": 0},
        {"tune_fraction": 1.5},
        {"tune_fraction": "0.3"},
        {"tune_fraction": float("nan")},
        {"lambdas": []},
        {"lambdas": [-1.0]},
        {"lambdas": ["a"]},
        {"lambdas": 0.5},
        {"lambdas": [float("nan")]},
        {"sigmas": [0.0]},
        {"degree": 0},
        {"degree": 2.5},
        {"degree": True},
        {"n_jobs": -1},
        {"n_jobs": 1.5},
        {"seed": "abc"},
        {"seed": 1.5},
        {"seed": None},
        {"refit": "yes"},
        {"coef0": "a"},
        {"poly_gamma": "x"},
        {"options": [1, 2]},
    ],
)
def test_invalid_values_raise_input_error(bad):
    with pytest.raises(InputError):
        RunSettings.from_dict(bad)


def test_resolved_n_jobs():
    assert RunSettings(n_jobs=3).resolved_n_jobs() == 3
    assert RunSettings(n_jobs=0).resolved_n_jobs() >= 1


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"coef0": float("nan")}, "coef0 must be a finite number"),
        ({"poly_gamma": float("inf")}, "poly_gamma must be a finite number"),
        ({"poly_gamma": 0.0}, "poly_gamma must be positive"),
        ({"n_weights": 10**12}, "2 <= M <= 100000"),
        ({"joint_n": 10**6}, "3 <= N <= 1000"),
        ({"degree": 200}, "between 1 and 100"),
        ({"seed": 10**5000}, "seed is too large"),
        ({"sigmas": [1e-300]}, "sigma 1e-300 is outside"),
        ({"lambdas": [1e300]}, r"lambda 1e\+300 is outside"),
        ({"tuning_extend": -1}, "tuning_extend must be 0 to 10"),
        ({"tuning_extend": 11}, "tuning_extend must be 0 to 10"),
        ({"tuning_extend": 1.5}, "tuning_extend must be an integer"),
        ({"scheduler": "not a url"}, "is not HOST:PORT"),
        ({"scheduler": "tcp://host"}, "is not HOST:PORT"),
        ({"options": {"a": [[[[[[[[]]]]]]]] * 1}}, None),
    ],
)
def test_values_that_would_fail_later_are_refused_naming_them(data, needle):
    if needle is None:  # moderate nesting in options is fine here (the scheme checks keys)
        RunSettings.from_dict(data)
        return
    with pytest.raises(InputError, match=needle):
        RunSettings.from_dict(data)


def test_deep_nesting_is_refused_without_recursion():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InputError, match="nest more than"):
        RunSettings.from_dict({"options": {"a": deep}})


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"seed": ' + "1" * 5001 + "}", "more than 4300 digits"),
        ('{"options": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep"),
        ('{"coef0": NaN}', "NaN is not a JSON number"),
        ('{"coef0": -Infinity}', "-Infinity is not a JSON number"),
    ],
)
def test_json_that_is_not_strict_is_refused(text, needle):
    with pytest.raises(InputError, match=needle):
        RunSettings.from_json(text)


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "[::1]:8786"])
def test_scheduler_addresses_with_a_port_are_accepted(address):
    assert RunSettings(scheduler=address).validate().scheduler == address


def test_tuning_extend_reaches_the_binary_estimator_and_none_keeps_its_default():
    from wsvmgui.app.schemes import make_estimator
    from wsvmgui.estimators.binary import WeightedSVMClassifier

    default = WeightedSVMClassifier().tuning_extend
    assert make_estimator(RunSettings(), 2).tuning_extend == default
    assert make_estimator(RunSettings(tuning_extend=3).validate(), 2).tuning_extend == 3
    s = RunSettings(tuning_extend=0).validate()
    assert RunSettings.from_json(s.to_json()) == s and make_estimator(s, 2).tuning_extend == 0
    # the multiclass schemes have no such parameter: the setting is the binary scheme's
    multi = make_estimator(RunSettings(scheme="pairwise", tuning_extend=3).validate(), 3)
    assert "tuning_extend" not in multi.get_params()


@pytest.mark.parametrize("value", [None, "folds", "holdout"])
def test_pair_tuning_round_trips_and_reaches_the_pair_schemes(value):
    from wsvmgui.app.schemes import make_estimator

    s = RunSettings(scheme="bp1", pair_tuning=value).validate()
    assert (
        RunSettings.from_json(s.to_json()) == s and json.loads(s.to_json())["pair_tuning"] == value
    )
    est = make_estimator(s, 3)
    assert est.get_params()["pair_tuning"] == (value or "folds")  # None: the estimator's
    # two classes: every divide-and-conquer scheme is the binary ladder, which has none
    assert "pair_tuning" not in make_estimator(s, 2).get_params()


def test_a_settings_file_written_before_pair_tuning_loads_as_the_estimators_default():
    """Files saved before the setting existed have no key: they load as None, which the
    pair schemes run as the estimator's default ("folds": what such a file has run as
    since the multiclass default changed)."""
    from wsvmgui.app.schemes import make_estimator
    from wsvmgui.estimators.multiclass import MulticlassWeightedSVMClassifier

    old = RunSettings(scheme="pairwise", seed=4).to_dict()
    del old["pair_tuning"]
    s = RunSettings.from_json(json.dumps(old))
    assert s.pair_tuning is None and s.seed == 4
    default = MulticlassWeightedSVMClassifier().get_params()["pair_tuning"]
    assert make_estimator(s, 3).get_params()["pair_tuning"] == default == "folds"


@pytest.mark.parametrize(
    ("value", "needles"),
    [("fold", ["unknown pair_tuning 'fold'", "folds, holdout"]), (3, ["pair_tuning", "name"])],
)
def test_a_bad_pair_tuning_is_named(value, needles):
    with pytest.raises(InputError) as info:
        RunSettings.from_dict({"pair_tuning": value})
    for needle in needles:
        assert needle in str(info.value)
