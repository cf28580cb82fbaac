"""The settings panel's ladder engine field: path by default, carried into the run's
settings and back, hidden for the joint schemes, and the resolution note follows it."""

from __future__ import annotations

from dataclasses import replace

from wsvmgui.app.settings import RunSettings
from wsvmgui.gui.settings_panel import SettingsPanel


def test_engine_round_trips_and_sets_the_resolution_note(qtbot):
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.settings().engine == "path"
    assert "exact" in panel.resolution.text()
    for engine in ("grid", "auto", "path"):
        panel.set_settings(replace(RunSettings(), engine=engine, n_weights=20))
        assert panel.engine.currentText() == engine
        assert panel.settings().engine == engine
    panel.engine.setCurrentText("grid")
    assert panel.settings().engine == "grid"
    assert "1/20 grid" in panel.resolution.text()  # quantised on the grid only
    assert panel.settings().screen is True
    panel.set_settings(replace(RunSettings(), screen=False))
    assert not panel.screen_box.isChecked() and panel.settings().screen is False
    panel.screen_box.setChecked(True)
    assert panel.settings().screen is True
    panel.set_settings(replace(RunSettings(), scheme="joint-direct"))
    assert not panel.engine.isVisible()
