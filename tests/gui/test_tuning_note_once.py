"""The tuning search's edge note has one source (``app.capabilities.tuning_notes`` of
``fit_info_``): it appears exactly once in the command line's output, the run report and
the app's Results summary (and the app's report) when a fit chooses a cell on the grid's
edge, and not at all when the chosen cell lies inside the grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wsvmgui.app.analysis import RunRequest, run_analysis
from wsvmgui.app.datasets import load_builtin, split_dataset
from wsvmgui.app.settings import RunSettings
from wsvmgui.cli import main
from wsvmgui.io.modelfile import load_model

#: Two lambdas: the chosen one is always at an end of the grid.
EDGE = {"lambdas": [0.05, 0.005], "sigmas": [1.0]}
#: One lambda (not tuned) and three widths, of which the demo data choose the middle one.
INSIDE = {"lambdas": [0.005], "sigmas": [0.1, 1.0, 10.0]}
#: The note's own words (``tuning_notes``), once per mention.
NOTE = "Tuning: the chosen cell"


def _grid_args(grid: dict) -> list[str]:
    return [
        "--lambda",
        ",".join(str(v) for v in grid["lambdas"]),
        "--sigma",
        ",".join(str(v) for v in grid["sigmas"]),
    ]


@pytest.fixture(scope="module")
def demo_csv(tmp_path_factory):
    ds = load_builtin("demo")
    frame = pd.DataFrame(ds.X, columns=list(ds.feature_names))
    frame["label"] = np.where(ds.y == "1", "yes", "no")
    path = tmp_path_factory.mktemp("notes") / "demo.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("grid, at_edge", [(EDGE, True), (INSIDE, False)])
def test_command_line_and_its_report(capsys, tmp_path, demo_csv, grid, at_edge):
    out, html, model = tmp_path / "p.csv", tmp_path / "r.html", tmp_path / "m.wsvm"
    argv = ["fit", str(demo_csv), "--label", "label", "--out", str(out), "--weights", "5"]
    argv += [*_grid_args(grid), "--report", str(html), "--model", str(model)]
    assert main(argv) == 0
    _, err = capsys.readouterr()
    edge = load_model(model).estimator.fit_info_["tuning_edge"]
    assert bool(edge) == at_edge, edge  # the fit itself chose as the case says
    assert err.count(NOTE) == int(at_edge), err
    assert html.read_text().count(NOTE) == int(at_edge)


@pytest.mark.parametrize("grid, at_edge", [(EDGE, True), (INSIDE, False)])
def test_app_summary_and_report(qapp, grid, at_edge):
    from wsvmgui.gui.export import report_input
    from wsvmgui.gui.views.results_view import ResultsView

    split = split_dataset(load_builtin("demo"), 0.0, 0.3, 0, standardise=True)
    settings = RunSettings(n_weights=5, tuning="cv", n_jobs=1, **grid)
    result = run_analysis(RunRequest(settings, split))
    assert bool(result.estimator.fit_info_["tuning_edge"]) == at_edge
    view = ResultsView()
    try:
        view.set_result(result)
        assert view.summary.text().count(NOTE) == int(at_edge), view.summary.text()
    finally:
        view.deleteLater()
    assert sum(n.count(NOTE) for n in report_input(result).notes) == int(at_edge)
