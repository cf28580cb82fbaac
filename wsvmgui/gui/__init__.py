"""The desktop application (PySide6 + pyqtgraph).

Only the modules that draw or run Qt objects import Qt; :mod:`wsvmgui.app.contours` and
:mod:`wsvmgui.app.analysis` (the run and the modules it builds on) are plain numpy so that
the work they do runs (and is tested) without a display.
"""
