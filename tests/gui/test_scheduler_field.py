"""The settings panel's Dask scheduler field: it carries the address into the run's
settings and back (empty: this machine)."""

from __future__ import annotations

from dataclasses import replace

from wsvmgui.app.settings import RunSettings
from wsvmgui.gui.settings_panel import SettingsPanel


def test_scheduler_address_round_trips_through_the_panel(qtbot):
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    assert panel.settings().scheduler == ""  # default: fits run here
    panel.set_settings(replace(RunSettings(), scheduler="tcp://10.0.0.5:8786"))
    assert panel.scheduler.text() == "tcp://10.0.0.5:8786"
    assert panel.settings().scheduler == "tcp://10.0.0.5:8786"
    panel.scheduler.setText("  tcp://h:1  ")
    assert panel.settings().scheduler == "tcp://h:1"
    panel.scheduler.setText("   ")
    assert panel.settings().scheduler == ""
