"""Every tuned scheme chooses and predicts as it did before the generic search.

``tests/reference/tuning_main.json`` was recorded on main before the tuning loops moved
onto :func:`wsvmgui.ladder.gridsearch.grid_search` (``python -m
tests.reference.tuning_cases record``): the chosen parameters, the tuning scores and the
probabilities at test points of thirteen tuned fits (the EGKL ladders with and without
screening and refit, three divide-and-conquer schemes, the non-crossing ladder, the
preconditioned SVM, the joint fit, Probing).  The same fits with the current code must
give the same choices and, to rounding, the same numbers.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from reference.tuning_cases import RECORD, case_names, run_case

RECORDED = json.loads(RECORD.read_text())
#: Names main used where the fitted vocabulary now has one name.
RENAMED = {"lam": "lambda"}


def _numbers(value) -> np.ndarray:
    """A recorded value (nested lists, "nan"/"inf" strings) as a flat float array."""
    if isinstance(value, dict):
        return np.concatenate([_numbers(value[k]) for k in sorted(value)])
    if isinstance(value, list):
        parts = [_numbers(v) for v in value]
        return np.concatenate(parts) if parts else np.empty(0)
    if isinstance(value, str):
        return np.array([float(value)])
    return np.array([math.nan if value is None else float(value)])


@pytest.mark.parametrize("name", case_names())
def test_same_choices_and_probabilities_as_main(name):
    old, new = RECORDED[name], run_case(name)
    chosen = {RENAMED.get(k, k): v for k, v in old["chosen"].items()}
    for key, value in chosen.items():
        if isinstance(value, dict):  # Probing's learner parameters: exactly the same
            assert new["chosen"][key] == value, key
        else:
            np.testing.assert_allclose(
                _numbers(new["chosen"][key]), _numbers(value), rtol=1e-9, err_msg=key
            )
    np.testing.assert_allclose(_numbers(new["table"]), _numbers(old["table"]), rtol=1e-9)
    np.testing.assert_allclose(
        np.asarray(new["proba"]), np.asarray(old["proba"]), rtol=0, atol=1e-8
    )
