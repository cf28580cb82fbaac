"""Messages in the app name its controls, not command-line flags or absolute paths."""

from __future__ import annotations

from wsvmgui.gui.messages import app_wording


def test_flags_become_the_apps_controls_and_paths_become_names():
    text = (
        "/home/ann/study/data.csv: feature 'x' row 3: 'n/a' is not a number; if the value "
        "means missing, add it to --na-values (--missing drop)"
    )
    out = app_wording(text)
    assert "--" not in out and "/home/ann" not in out
    assert out.startswith("data.csv: feature 'x' row 3") and "(Missing values: drop)" in out
    assert app_wording("choose the feature columns with --features").endswith(
        "(File \u25b8 Choose columns)"
    )
    assert app_wording("set --test-fraction lower") == "set the 'test fraction' setting lower"
    # ratios, relative paths and words with dashes stay
    for keep in ("1/M grid", "data/d.csv", "one-vs-all", "a -- b"):
        assert app_wording(keep) == keep
