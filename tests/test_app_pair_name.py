"""The name of a binary ladder: positive class first, signs on labels -1 and 1."""

from __future__ import annotations

import numpy as np
import pytest

from wsvmgui.app.capabilities import pair_name


@pytest.mark.parametrize(
    "classes, name",
    [
        (np.array([-1, 1]), "+1 vs -1"),  # read as "1 vs -1" (one minus one) before
        (np.array([-1.0, 1.0]), "+1.0 vs -1.0"),
        (np.array([0, 1]), "1 vs 0"),
        (np.array([1, 2]), "2 vs 1"),
        (np.array(["benign", "malignant"]), "malignant vs benign"),
        (np.array(["-1", "1"]), "1 vs -1"),  # text labels are shown as they are
    ],
)
def test_the_positive_class_comes_first_and_signs_are_shown(classes, name):
    # the positive class is the second of the sorted classes, whose p_hat the ladder gives
    assert pair_name(classes[1], classes[0]) == name
