"""The result views of the main window, each a QWidget holding pyqtgraph plots."""
