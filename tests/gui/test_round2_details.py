"""Smaller items of issue 21 in the real window: the scheme follows K, the title names
the data once, PNGs at a chosen resolution, whole names in the slice table, the info
line forgets the last result's counts while a run goes."""

from __future__ import annotations

import numpy as np
from conftest import TINY, run_and_wait
from PySide6.QtGui import QImage

from wsvmgui.app.settings import RunSettings


def test_the_scheme_follows_the_number_of_classes(window):
    from wsvmgui.app.presets import default_scheme

    panel = window.settings_panel
    assert window.data_panel.load_builtin("sklearn:iris")
    assert panel.settings().scheme == default_scheme(3)
    assert "the default for 3 classes" in window.messages.text()
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")  # K = 2 after K = 3
    assert panel.settings().scheme == default_scheme(2) == "binary"
    assert "the default for 2 classes" in window.messages.text()


def test_the_title_names_the_data_once(window):
    assert window.data_panel.load_builtin("sklearn:wine")
    title = window.windowTitle()
    assert title.count("wsvmgui") == 1 and "wine" in title


def test_png_at_twice_the_screen_resolution_is_drawn_again(qtbot, window, tmp_path):
    run_and_wait(qtbot, window, TINY)
    one, two = tmp_path / "1.png", tmp_path / "2.png"
    view = window.boundary_view
    assert window.files.export_plot(str(one), view, 1.0)
    assert window.files.export_plot(str(two), view, 2.0)
    a, b = QImage(str(one)), QImage(str(two))
    assert (b.width(), b.height()) == (2 * a.width(), 2 * a.height())
    assert round(b.dotsPerMeterX() * 0.0254) == 192

    # drawn again, not enlarged pixels: more distinct colours along the edges
    def colours(img):
        arr = np.frombuffer(img.convertToFormat(QImage.Format.Format_RGB32).constBits(), np.uint32)
        return np.unique(arr).size

    assert colours(b) > colours(a)
    assert not window.files.export_plot(str(tmp_path / "x.png"), view, 100.0)


def test_slice_table_shows_whole_names(qtbot, window):
    """Every name in the slice table shows whole at 1024 x 700: it wraps at its
    separators, and inside a long word (with a hyphen), so no piece is wider than the
    column (``proanthocyanins`` was cut)."""
    import re

    from wsvmgui.gui.views.boundary_parts import breakable

    window.resize(1024, 700)
    window.tabs.setCurrentWidget(window.boundary_view)
    assert window.data_panel.load_builtin("sklearn:wine")
    table = window.boundary_view.slice_panel.table
    qtbot.waitUntil(lambda: table.isVisible() and table.columnWidth(0) > 0, timeout=10000)
    qtbot.wait(100)
    names = [table.item(i, 0).toolTip() for i in range(table.rowCount())]
    assert "od280/od315_of_diluted_wines" in names and "proanthocyanins" in names
    metrics = table.fontMetrics()
    room = (
        table.columnWidth(0)
        + 2
        - 2 * (table.style().pixelMetric(table.style().PixelMetric.PM_FocusFrameHMargin) + 1)
    )
    for i, name in enumerate(names):
        text = table.item(i, 0).text()
        assert text == breakable(name)
        assert re.sub("[\u200b\u00ad]", "", text) == name
        for piece in re.split("(?<=[\u200b\u00ad ])", text):  # a hyphen shows at a soft one
            wide = metrics.horizontalAdvance(piece.replace("\u00ad", "-").strip("\u200b "))
            assert wide <= room, f"{piece!r} of {name!r}: {wide} px in a {room} px column"
    assert table.textElideMode().name == "ElideNone" and table.wordWrap()


def test_the_info_line_forgets_the_last_result_while_running(qtbot, window):
    run_and_wait(qtbot, window, TINY)
    before = window.boundary_view.info.text()
    window.boundary_view.begin_run()
    assert window.boundary_view.info.text() != before
    assert "Running" in window.boundary_view.info.text()


def test_a_class_too_small_for_the_split_is_refused_before_the_run(window, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(41, 2))
    y = ["a"] * 20 + ["b"] * 20 + ["c"]  # one row of class c: it cannot be fitted
    path = tmp_path / "small.csv"
    path.write_text(
        "x1,x2,label\n"
        + "".join(f"{a!r},{b!r},{c}\n" for (a, b), c in zip(X.tolist(), y, strict=True))
    )
    assert window.data_panel.open_file(str(path)), window.messages.text()
    window.settings_panel.set_settings(RunSettings(scheme="pairwise", n_weights=5, n_jobs=1))
    assert window.start_run() is None
    assert not window.runs.is_running() and window.result is None
    message = window.messages.text()
    assert (
        window.messages.level == "error" and "class 'c'" in message and "test fraction" in message
    )


def test_a_text_id_column_does_not_block_the_load(window, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    rows = [f"S-{i:03d},{a!r},{b!r},{'ab'[i % 2]}\n" for i, (a, b) in enumerate(X.tolist())]
    path = tmp_path / "samples.csv"
    path.write_text("sample,x1,x2,label\n" + "".join(rows))
    assert window.data_panel.open_file(str(path)), window.messages.text()
    ds = window.data_panel.dataset
    assert window.data_panel.id_column == "sample" and ds.feature_names == ["x1", "x2"]
    assert ds.ids[0] == "S-000" and "'sample'" in window.messages.text()


def test_the_pi_bar_title_stays_beside_its_gradient_after_being_hidden(qtbot, window):
    """Hidden by a scheme without ladders while the window was wide, shown again in a
    narrow one: pyqtgraph left its axis 0 pixels wide and the title over the gradient."""
    window.resize(1600, 1000)
    window.data_panel.n_points.setValue(150)
    window.data_panel.discard_pending()
    assert window.data_panel.load_builtin("design:wu2010_ex1")
    joint = RunSettings(scheme="joint-direct", joint_n=6, lambdas=[0.01], sigmas=[1.0], n_jobs=1)
    assert run_and_wait(qtbot, window, joint) is not None, window.messages.text()
    bar = window.boundary_view.colorbar
    assert not bar.isVisible()
    window.resize(1024, 700)
    assert window.data_panel.load_builtin("design:wuliu2011_ex1")
    window.settings_panel.compare.setChecked(True)
    linear = RunSettings(kernel="linear", n_weights=8, lambdas=[0.001], n_jobs=1)
    assert run_and_wait(qtbot, window, linear) is not None, window.messages.text()
    qtbot.wait(200)
    assert bar.isVisible()
    label = bar.getAxis("left").label
    title = label.mapRectToScene(label.boundingRect())
    gradient = bar.bar.mapRectToScene(bar.bar.boundingRect())
    assert title.right() <= gradient.left(), (title, gradient)
