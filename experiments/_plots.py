"""Figures of the experiment scripts (matplotlib, the `eval` extra), drawn like the papers':
k on a logarithmic abscissa, one curve per strategy or representation. Imported lazily, so
the scripts run (and write their tables) where matplotlib is absent."""

from __future__ import annotations

from pathlib import Path

#: seed 000's colour code (Section IV-D): proportional blue, fillParent orange, oneClass
#: green, fillChild red - matplotlib's default cycle in that order
REPRESENTATION_COLOURS = {
    "proportional": "tab:blue",
    "fillparent": "tab:orange",
    "oneclass": "tab:green",
    "fillchild": "tab:red",
}
REPRESENTATION_LABELS = {
    "proportional": "proportional",
    "fillparent": "fillParent",
    "oneclass": "oneClass",
    "fillchild": "fillChild",
}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'anonsql[eval]'): no figures drawn")
        return None
    # fixed metadata so a rerun writes the same bytes
    plt.rcParams["svg.hashsalt"] = "anonsql"
    return plt


def save(fig, path: Path) -> None:
    fig.savefig(path, dpi=110, metadata={"Software": None})
    print(f"wrote {path}")


def curves(
    path: Path,
    title: str,
    panels: list[tuple[str, dict[str, tuple[list[float], list[float], list[float] | None]]]],
    colours: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    ylim: tuple[float, float] | None = None,
    ncols: int | None = None,
    ylabel: str | None = None,
) -> None:
    """Panels in rows of ``ncols`` (one row by default); each panel maps a curve name to
    (k values, means, stds or None). A std is drawn as a band (seed 000 shows it for the
    proportional curve only)."""
    plt = _pyplot()
    if plt is None:
        return
    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols, 3.6 * nrows + 0.4), squeeze=False)
    flat = axes.ravel()
    for ax, (panel_title, series) in zip(flat, panels, strict=False):
        for name, (xs, ys, sd) in series.items():
            colour = (colours or {}).get(name)
            ax.plot(
                xs, ys, marker="o", ms=3, lw=1.2, color=colour, label=(labels or {}).get(name, name)
            )
            if sd is not None:
                lo = [y - s for y, s in zip(ys, sd, strict=True)]
                hi = [y + s for y, s in zip(ys, sd, strict=True)]
                ax.fill_between(xs, lo, hi, color=colour, alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("k")
        ax.set_title(panel_title, fontsize=9)
        if ylim is not None:
            ax.set_ylim(*ylim)
        if ylabel:
            ax.set_ylabel(ylabel)
        ax.grid(True, which="major", lw=0.3)
    flat[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, path)
    plt.close(fig)
