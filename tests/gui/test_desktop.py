"""Desktop conventions, honest slices, sessions and the comparison's progress."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TINY, run_and_wait
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QImage, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QLineEdit,
    QSpinBox,
)

from wsvmgui.app.settings import RunSettings


def _actions(window) -> dict[str, object]:
    out = {}
    for menu_action in window.menuBar().actions():
        for act in menu_action.menu().actions():
            if act.menu() is not None:
                for sub in act.menu().actions():
                    out[sub.text()] = sub
            out[act.text()] = act
    return out


def test_menus_and_shortcuts(window):
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles == ["File", "Edit", "View", "Run", "Help"]
    shortcuts = {
        a.shortcut().toString(): name
        for name, a in _actions(window).items()
        if not a.shortcut().isEmpty()
    }
    for key in (
        "Ctrl+O",
        "Ctrl+R",
        "Esc",
        "Ctrl+S",
        "Ctrl+Shift+O",
        "Ctrl+E",
        "Ctrl+Shift+E",
        "Ctrl+C",
        "Ctrl+Q",
        "Ctrl+1",
        "Ctrl+5",
    ):
        assert key in shortcuts, (key, shortcuts)
    assert QKeySequence(QKeySequence.StandardKey.HelpContents).toString() in shortcuts
    _actions(window)["Calibration"].trigger()
    assert window.deck.current() is window.calibration_view


def test_every_setting_has_a_tooltip(window):
    kinds = (QComboBox, QSpinBox, QDoubleSpinBox, QLineEdit, QCheckBox)
    widgets = [
        w
        for panel in (window.settings_panel, window.data_panel)
        for k in kinds
        for w in panel.findChildren(k)
    ]
    assert len(widgets) > 20
    for widget in widgets:
        if isinstance(widget.parentWidget(), (QSpinBox, QDoubleSpinBox, QComboBox)):
            continue  # the editor inside a spin box or combo box
        assert widget.toolTip(), f"{type(widget).__name__} {widget.objectName()} lacks one"


def _csv(path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    lines = ["u,v,kind"] + [f"{a},{b},{'p' if a + b > 0 else 'q'}" for a, b in X]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dropping_a_csv_opens_it_and_remembers_it(qtbot, window, tmp_path):
    path = _csv(tmp_path / "dropped.csv")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.data_panel.dataset.name == "dropped.csv", timeout=30000)
    assert window.data_panel.label == "kind"
    assert window.files.recent_files()[0] == str(path)
    recent = [a for a in window.files.recent_menu.actions() if "dropped.csv" in a.text()]
    assert len(recent) == 1
    assert window.data_panel.load_builtin("demo")
    recent[0].trigger()
    assert window.data_panel.dataset.name == "dropped.csv"
    # a file of another kind is refused
    other = QMimeData()
    other.setUrls([QUrl.fromLocalFile(str(tmp_path / "picture.png"))])
    assert window.files.dropped_path(other) is None


def test_help_shows_the_guide(window):
    window.show_guide()
    text = window.guide_dialog.browser.toPlainText()
    for words in ("Boundaries", "Calibration", "slice", "xvfb-run", "Ctrl+R"):
        assert words in text
    window.guide_dialog.close()
    window.show_about()
    assert "wsvmgui" in window.about_dialog.browser.toPlainText()
    window.about_dialog.close()


def test_messages_stay_readable_under_a_dark_palette(qtbot, app_state):
    from wsvmgui.gui.main_window import MainWindow
    from wsvmgui.gui.messages import contrast

    app = QApplication.instance()
    old = app.palette()
    dark = QPalette()
    for role, color in (
        (QPalette.ColorRole.Window, "#2b2b2b"),
        (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.Button, "#3a3a3a"),
        (QPalette.ColorRole.ButtonText, "#e6e6e6"),
    ):
        dark.setColor(role, QColor(color))
    dark.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#9a9a9a"))
    app.setPalette(dark)
    try:
        win = MainWindow(app_state)
        qtbot.addWidget(win)
        window_color = win.palette().color(QPalette.ColorRole.Window)
        for show in (win.show_error, win.show_info):
            show("a message")
            css = win.messages.label.styleSheet()
            color = QColor(css.split("color:")[1].strip(" ;"))
            assert contrast(color, window_color) >= 4.5, css
        muted = win.settings_panel.scheme_info.palette().color(
            QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText
        )
        assert contrast(muted, window_color) >= 3.0
        win.runs.runner.cancel_all()
        win.runs.runner.wait(30000)
    finally:
        app.setPalette(old)


def _render(html: str) -> np.ndarray:
    label = QLabel(html)
    font = label.font()
    font.setPointSize(28)
    label.setFont(font)
    label.setStyleSheet("background: white; color: black;")
    label.adjustSize()
    image = label.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : image.width() * 3].reshape(image.height(), image.width(), 3).copy()


def test_p_hat_renders_with_the_installed_fonts(qapp):
    """The hat adds ink above the p (the combining mark the upright font drops does not)."""
    from wsvmgui.gui.views.common import PHAT

    hat, plain = _render(PHAT), _render("<i>p</i>")
    ink = lambda img: (img.min(axis=2) < 128).sum()  # noqa: E731
    assert ink(hat) > ink(plain) + 10


def test_slices_through_a_chosen_point_for_thirteen_features(qtbot, window):
    assert window.data_panel.load_builtin("sklearn:wine")
    view = window.boundary_view
    assert view.slice_panel.isVisible() or not window.isVisible()
    settings = RunSettings(scheme="pairwise", n_weights=6, lambdas=[0.01], sigmas=[3.0], n_jobs=1)
    result = run_and_wait(qtbot, window, settings)
    assert result is not None, window.messages.text()
    ds = result.split.dataset
    row = int(result.split.train.index[5])  # a training point: its slice meets the hull
    window.selection.select(row)
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    plane = result.plane
    np.testing.assert_allclose(plane.reference, ds.X[row])
    assert plane.is_slice and plane.hull.size > 0
    assert view.slice_title.text().startswith("slice at ash = ")
    assert f"{ds.X[row, 2]:.3g}" in view.slice_title.text()
    # the surface is the estimator on the slice: other features at the point's values
    from wsvmgui.app.measures import aligned_proba
    from wsvmgui.app.plane import plane_grid, surface_colors

    xs, ys, X_grid = plane_grid(result.split, 0, 1, plane.xs.size, ds.X[row])
    expected = surface_colors(aligned_proba(result.estimator.report(X_grid), ds.classes))
    np.testing.assert_array_equal(plane.image.reshape(-1, 3), expected)
    # points far from the slice are faded, the point itself is not
    alphas = np.array([b.color().alpha() for b in view.left.points.data["brush"]])
    assert alphas[row] >= 220 and alphas.min() < 100
    # typing another value moves the slice and stops following the selection
    item = view.slice_panel.table.item(2, 1)  # ash
    item.setText("2.5")
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert result.plane.reference[2] == 2.5 and not view.slice_panel.follow.isChecked()
    assert "ash = 2.5" in view.slice_title.text()
    window.selection.select(int(result.split.train.index[6]))
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    assert result.plane.reference[2] == 2.5  # not following
    view.slice_panel.means_button.click()
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=30000)
    np.testing.assert_allclose(result.plane.reference, ds.X.mean(axis=0))
    # the exported picture says which slice it shows
    assert "slice at" in view.slice_title.text()


@pytest.mark.parametrize("kernel, where", [("linear", "input space"), ("rbf", "feature space")])
def test_non_crossing_panel_says_where_the_guarantee_holds(qtbot, window, kernel, where):
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    window.settings_panel.compare.setChecked(True)
    settings = RunSettings(kernel=kernel, n_weights=8, lambdas=[0.001], sigmas=[1.0], n_jobs=1)
    statuses = []
    window.runs.status.connect(statuses.append)  # every RunStatus the run published
    result = run_and_wait(qtbot, window, settings)
    assert result is not None and result.comparison is not None, window.messages.text()
    info = window.boundary_view.info.text()
    assert where in info and "Non-crossing ladder" in info
    checks = result.crossing_checks["Non-crossing ladder"]
    assert set(checks) == {"input", "feature"}
    if kernel == "linear":
        # in the input space the constrained ladder does not cross inside the hull
        assert checks["input"]["n_crossing_pairs"] == 0
        assert len(result.plane.layers[1].crossings[0]) == 0
    # each panel lies over its own estimator's surface: the right one the comparison's
    from wsvmgui.app.measures import aligned_proba
    from wsvmgui.app.plane import plane_grid, surface_colors

    plane = result.plane
    _, _, X_grid = plane_grid(result.split, plane.ix, plane.iy, plane.xs.size, plane.reference)
    classes = result.split.dataset.classes
    own = surface_colors(aligned_proba(result.comparison.report(X_grid), classes))
    np.testing.assert_array_equal(plane.comparison_image.reshape(-1, 3), own)
    assert not np.array_equal(plane.comparison_image, plane.image)
    view = window.boundary_view
    np.testing.assert_array_equal(view.right.image.image, plane.comparison_image)
    np.testing.assert_array_equal(view.left.image.image, plane.image)
    # the comparison is a phase of the progress, and its measures are shown
    phases = {s.phase for s in statuses if hasattr(s, "phase")}
    assert any("comparison" in p for p in phases), phases
    assert "non-crossing (test)" in window.results_view.table_values()


def test_session_round_trip_in_the_app(qtbot, window, tmp_path):
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    first = run_and_wait(qtbot, window, TINY)
    window.selection.select(int(first.split.test.index[3]))
    window.tabs.setCurrentWidget(window.bars_view)
    path = tmp_path / "s.wsvm-session.json"
    assert window.sessions.save_session(str(path))
    # somewhere else entirely, then back
    assert window.data_panel.load_builtin("demo")
    window.settings_panel.set_settings(RunSettings(n_weights=12))
    window.tabs.setCurrentWidget(window.results_view)
    again = window
    assert again.sessions.open_session(str(path))
    qtbot.waitUntil(lambda: again.result is not None and not again.is_busy(), timeout=60000)
    assert "reproduced the saved probabilities" in again.messages.text()
    np.testing.assert_allclose(again.result.report.proba, first.report.proba)
    assert again.settings_panel.settings() == TINY
    assert again.selection.row == int(first.split.test.index[3])
    assert again.deck.current() is again.bars_view
    assert again.data_panel.dataset.name == "design:wuliu2011_ex1"


@pytest.mark.parametrize("engine", ["path", "grid"])
def test_exact_path_curve_and_the_boundary_at_any_pi(qtbot, window, engine):
    settings = RunSettings(n_weights=8, lambdas=[0.005], sigmas=[0.5], n_jobs=1, engine=engine)
    statuses = []
    window.runs.status.connect(statuses.append)  # every RunStatus the run published
    result = run_and_wait(qtbot, window, settings)
    path = result.path
    assert path is not None and path.pis[0] == 0 and path.pis[-1] == 1
    # the path engine's fit keeps its own path; after a grid fit it is traced (a phase)
    traced = any(getattr(s, "phase", "") == "exact path" for s in statuses)
    assert path.source == ("stored" if engine == "path" else "traced") and traced == (
        engine == "grid"
    )
    # the path agrees with the ladder's own fits at its weights
    X = result.split.X_all
    ladder = result.estimator.ladder_decision(X)
    exact = np.column_stack([path.decision_at(X, w) for w in result.estimator.weights_])
    assert np.abs(ladder - exact).max() < 0.02 * np.abs(ladder).max()
    # the selected point's exact curve, its zero inside the ladder's bracket
    row = int(result.split.test.index[2])
    window.selection.select(row)
    view = window.simplex_view
    view.ensure_drawn()  # drawn when shown
    x, y = view.curves[0].getData()
    np.testing.assert_allclose(x, path.pis)
    np.testing.assert_allclose(y, path.curves(X[row : row + 1])[0])
    dots = view.fit_dots.data
    if path.source == "traced":  # after a grid fit: the grid's own fits sit on the curve
        np.testing.assert_allclose(dots["x"], result.estimator.weights_)
        np.testing.assert_allclose(dots["y"], ladder[row])
    else:
        assert dots.size == 0
    zeros = view.zero_marks.data["x"]
    lad = result.ladders[0]
    if zeros.size == 1 and lad.lo[row] < lad.hi[row]:
        assert lad.lo[row] - 1e-9 <= zeros[0] <= lad.hi[row] + 1e-9
    # the boundary at pi = 0.3 from the path: f_0.3 vanishes along it
    bv = window.boundary_view
    assert bv._pi_row.isEnabled()
    bv.pi_slider.setValue(300)
    qtbot.waitUntil(lambda: bv.pi_boundary_data()[0].size > 0, timeout=20000)
    bx, by = bv.pi_boundary_data()
    f = path.decision_at(result.split.transform(np.column_stack([bx, by])), 0.3)
    assert np.abs(f).max() < 0.05 * np.abs(path.decision_at(X, 0.3)).max()
    bv.pi_box.setChecked(False)
    assert bv.pi_boundary_data()[0].size == 0
