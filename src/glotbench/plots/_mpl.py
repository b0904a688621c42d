"""One place that imports matplotlib with the non-interactive Agg backend, and sets the font
fallback so task names, slice values and labels in Chinese, Mongolian (Cyrillic) or Hungarian
render: DejaVu Sans first, then every installed face that covers CJK (matplotlib >= 3.6 falls
back glyph by glyph through the ``font.family`` list; DejaVu alone drew empty boxes and warned
"Glyph ... missing from font(s) DejaVu Sans").

When no installed face covers a label's characters, a PNG shows boxes for them: :func:`save`
then says so once per process, with how to install one (Debian/Ubuntu ``fonts-noto-cjk``),
instead of matplotlib's warning per glyph. SVG for the HTML report keeps its text as text
(``svg.fonttype = 'none'``), so the browser draws it with its own fonts."""

from __future__ import annotations

import contextlib
import sys
import warnings
from pathlib import Path

# installed faces that cover CJK, by family name (Noto CJK, Source Han, WenQuanYi, Droid, ...)
_CJK_HINTS = ("cjk", "source han", "wenquanyi", "wqy", "droid sans fallback", "noto sans sc", "noto sans tc",
              "noto sans jp", "noto sans kr", "noto serif sc", "ar pl", "simhei", "simsun", "microsoft yahei",
              "pingfang", "hiragino", "heiti", "ukai", "uming", "ms gothic", "yu gothic", "malgun", "unifont")
_configured = False
_hinted = False
FONT_HINT = ("plots: no installed font covers some label characters (e.g. Chinese), so the PNG shows boxes for "
             "them; install a CJK font (Debian/Ubuntu: apt-get install fonts-noto-cjk) and run again")


def cjk_families(names) -> list[str]:
    """The family names in ``names`` that cover CJK (by name), in a stable order."""
    return sorted({n for n in names if any(h in n.lower() for h in _CJK_HINTS)})


def _set_fonts(matplotlib) -> None:
    global _configured
    if _configured:
        return
    _configured = True
    from matplotlib import font_manager

    extra = cjk_families(f.name for f in font_manager.fontManager.ttflist)
    if extra:  # explicit families: matplotlib resolves each and falls back glyph by glyph along the list
        matplotlib.rcParams["font.family"] = ["DejaVu Sans", *extra]


def pyplot():
    from glotbench.extras import require

    require("plots", "plotting (glotbench runs report, factuality plots)")
    import matplotlib

    matplotlib.use("Agg", force=True)
    _set_fonts(matplotlib)
    import matplotlib.pyplot as plt

    return plt


@contextlib.contextmanager
def missing_glyphs(hint: bool = True):
    """Drawing inside this block keeps matplotlib's "Glyph ... missing from font(s)" warnings to
    itself; with ``hint``, the first time any is seen in this process one line on stderr says how
    to get a font that has them (:data:`FONT_HINT`)."""
    global _hinted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    missing = False
    for w in caught:
        if "missing from" in str(w.message) and "font" in str(w.message).lower():
            missing = True
        else:  # anything else goes on as it came
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if missing and hint and not _hinted:
        _hinted = True
        print(FONT_HINT, file=sys.stderr)


def save(fig, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with missing_glyphs():
        fig.savefig(p, dpi=120, bbox_inches="tight")
    pyplot().close(fig)
    return p
