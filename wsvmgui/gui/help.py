"""Help > User guide and Help > About."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from .._version import __version__

GUIDE = """
<h2>wsvmgui: class probabilities from weighted SVMs</h2>
<p>A weighted SVM with class weight &pi; puts its boundary where the probability of the
second class is &pi;.  Fitting a ladder of weights and reading where a point's label flips
brackets its probability.  The app fits such ladders (and the multiclass schemes built on
them), shows the boundaries, the probabilities and how well they are calibrated.</p>

<h3>1. Data</h3>
<ul>
<li><b>Data</b> (left, tab <i>Data</i>): a built-in data set, or <b>File &#9656; Open
data</b> (Ctrl+O), or drop a CSV/TSV file on the window.  Simulation designs know the true
probabilities; changing their <i>n</i> or <i>seed</i> draws them again at once.</li>
<li>If the label column is not guessed right, <b>File &#9656; Choose columns</b>.  A
column named <i>id</i> or <i>&hellip;_id</i>, or holding integers that step by one (row
numbers), is taken as the rows' <b>id</b>: never a feature, and carried into every
export; the message line says so, and the dialog changes it.</li>
<li>A share of the rows is held out as the <i>test</i> part: every measure, the
calibration diagram and the probability bars use it.  Features are standardised by the
training part unless you untick it; plots stay in the original units.</li>
</ul>

<h3>2. Settings and cost</h3>
<ul>
<li>A <b>preset</b> fills every setting for the scheme and the data: <i>quick</i> runs in
seconds on the built-in data, <i>standard</i> uses the library's defaults (more
penalties, widths and folds; can take minutes).  Editing a field makes them
<i>custom</i>.  Hover over any field for what it does.</li>
<li><b>Engine</b> and <b>weights M</b>: the default engine, the exact <i>path</i> in
&pi;, gives each point's probability exactly where its own decision value changes sign,
on no grid; M only sets how many boundaries (and ladder steps) the views draw.  The
<i>grid</i> engine fits M &minus; 1 weighted SVMs instead, and its probabilities come out
on a 1/M grid (ends 1/(2M) and 1 &minus; 1/(2M)).</li>
<li><b>Calibration</b> (advanced settings): a monotone map fitted to cross-fitted
estimates of the training rows corrects the ladder's reading (<i>auto</i> chooses the
map); with the binary scheme, <b>per-point 90% intervals</b> then come with every
probability.  The tuning score and rule are there too.</li>
<li>Before anything is fitted the app counts the run's fits and times a few of them on
the data (about a second); a run expected to take more than a minute asks first and
offers the quick preset.  The status line starts with the time left.</li>
</ul>

<h3>3. Run</h3>
<p><b>Run</b> (Ctrl+R) fits on the training part; <b>Esc</b> cancels at once and the last
finished result comes back.  The status bar shows the phase, the fits and the time left,
for the comparison fit too.</p>

<h3>4. Views</h3>
<ul>
<li><b>Boundaries</b> (Ctrl+1): every fitted boundary {f<sub>&pi;</sub> = 0}, coloured by
&pi;, over the data; behind them the estimated probability (the most probable class's
colour, white where classes tie).  Black crosses: two boundaries cross inside the
training hull (dashed); grey: outside it.  Orange rings: points whose sign ladder is not
monotone.  With more than two features the plane is a <i>slice</i> through the selected
point (or values you type in the panel beside it); points far from the slice are
faded.  For a binary ladder, <i>boundary at &pi;</i> and its slider draw the boundary
at any weight from the exact solution path (thick dashed).</li>
<li>The <b>non-crossing</b> ladder (tick "side by side", two classes) keeps its boundaries
apart where Wu &amp; Liu's constraints act: in the training hull for a linear kernel; in
the hull of the kernel rows (feature space) for RBF and polynomial kernels, which is not
the drawn plane.  The info line gives the crossings found over the whole hull in both
spaces.</li>
<li><b>Simplex and ladders</b> (Ctrl+2): the selected point's sign ladder in each
sub-problem and its f<sub>&pi;</sub>(x) over &pi; (for a binary ladder the exact path:
piecewise linear between its breakpoints, its zeros marked), and for the joint simplex
scheme with three classes the triangle of class weights.  The signs, the bracket, the
diamond and the zeros are the ladder's own reading on the &pi; axis; with a calibration
the probability reported is its mapped value, the blue triangle.</li>
<li><b>Probabilities</b> (Ctrl+3): stacked estimated probabilities of every test point,
grouped by class; black dashes: true probabilities when known; light bands: the per-point
intervals, when the run has them.</li>
<li><b>Calibration</b> (Ctrl+4): the reliability diagram with bin counts, and log loss,
Brier score, ECE and AUC of the scheme and of three baselines.</li>
<li><b>Results</b> (Ctrl+5): the measures of every part and the tuning surface of each
tuned problem (pick the sub-problem above it; the star marks the chosen candidate; the
final fit keeps the chosen C, so its &lambda; is for its own number of points).</li>
</ul>
<p>Click a point or a bar to select it in every view.</p>

<h3>5. Saving</h3>
<ul>
<li><b>File &#9656; Export probabilities</b> (Ctrl+E): a CSV of the rows' ids (the id
column, or row numbers from 1 = the first data row), parts, predicted and observed
classes, probabilities and brackets, with a JSON sidecar of the settings.  <b>Export
table with probabilities</b>: the input table as read, every row and column, with the
probability columns appended.  <b>Export plot</b> (Ctrl+Shift+E): the current view as
SVG, or as PNG at the resolution you choose.  <b>Export report</b>: one HTML file with
the data, settings, package versions, measures against the baselines, the plots and the
papers behind the scheme.</li>
<li><b>File &#9656; Save session</b> (Ctrl+S) stores the data reference, settings, view
and the probabilities; <b>Open session</b> (Ctrl+Shift+O) loads it, runs it again and
checks that it reproduces the saved probabilities.</li>
</ul>

<h3>No display?</h3>
<p>The app needs a display; on a server run <code>xvfb-run -a wsvmgui</code>, or use the
command line (<code>wsvmgui --help</code>).</p>
"""

ABOUT = f"""
<h3>wsvmgui {__version__}</h3>
<p>Class probability estimation with weighted large-margin classifiers: the binary ladder
(Wang, Shen &amp; Liu 2008), non-crossing boundaries (Wu &amp; Liu 2011), the joint
multiclass simplex (Wu, Zhang &amp; Liu 2010), divide and conquer (Wang, Zhang &amp; Wu
2019; Zeng &amp; Zhang) and probing (Langford &amp; Zadrozny).</p>
<p>BSD-3-Clause licence.  Built with PySide6 and pyqtgraph.</p>
"""


class TextDialog(QDialog):
    """A dialog showing rich text (:attr:`browser`) with a Close button."""

    def __init__(self, parent: QWidget, title: str, html: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(html)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)


def show_text(
    parent: QWidget, title: str, html: str, size: tuple[int, int] = (640, 560)
) -> TextDialog:
    """A non-modal dialog showing ``html``; returned so tests can read and close it."""
    dialog = TextDialog(parent, title, html)
    dialog.resize(*size)
    dialog.show()
    return dialog
