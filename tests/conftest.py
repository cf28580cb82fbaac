"""Test-wide setup: headless Qt with a UTF-8 locale, fixed before anything imports Qt."""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
if os.environ.get("LANG", "C") in ("", "C", "POSIX"):
    os.environ["LANG"] = "C.UTF-8"
