"""The HTML report as users see it: rendered by a real headless browser (Debian's
chromium-headless-shell), not just parsed. Checks what a reader would notice: every chart
drawn with a size, no label cut off by its chart's edge, no "None" printed, the risk bars
adding up to the table, and a screenshot of the page's full size. Skips, saying why, where
no headless Chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess

import pytest

from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.evaluation.report import build_report, write_report
from anonsql.run import anonymize
from anonsql.spec import Spec

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")

#: run in the page: each chart's box, and every label of a chart that leaves its box
PROBE = """
<script>
window.addEventListener('load', () => {
  const out = {svgs: [], clipped: [], text: document.body.innerText};
  for (const svg of document.querySelectorAll('svg')) {
    const b = svg.getBoundingClientRect();
    out.svgs.push({label: svg.getAttribute('aria-label'), width: b.width, height: b.height});
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 ||
          r.bottom > b.bottom + 1) {
        out.clipped.push(t.textContent);
      }
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"no headless Chromium ({', '.join(BROWSERS)}) is installed")


def _run(browser: str, *args: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000"]
    return subprocess.run(
        [browser, *flags, *args], capture_output=True, text=True, timeout=120, check=True
    )


def _probe(browser: str, page, tmp_path) -> dict:
    probed = tmp_path / f"probe_{page.name}"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = _run(browser, "--dump-dom", probed.as_uri()).stdout
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert m, "the page did not finish loading in the browser"
    return json.loads(m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports")
    db = Database.open(folder / "r.duckdb")
    setup_demo(db, rows=600)
    qis = ["age", "sex", "zip"]
    # the census holds no identifiers: the columns that are not QIs are released as they are
    keep = [c for c in db.backend.columns("census") if c not in qis]
    lattice = anonymize(
        db,
        "census",
        Spec(qis=qis, k=5, suppression=0.05, output="lat", solutions=True, keep=keep),
    )
    greedy = anonymize(
        db, "census", Spec(qis=qis, k=5, algorithm="greedy", output="gaa", keep=keep)
    )
    pages = {}
    for name, run in (("lattice", lattice), ("greedy", greedy)):
        figures = build_report(db, run.run_id)
        _, html_path = write_report(figures, folder / name)
        pages[name] = (figures, html_path)
    db.close()
    return pages


@pytest.mark.parametrize("kind", ["lattice", "greedy"])
def test_report_renders_in_a_real_browser(reports, kind, tmp_path):
    browser = _browser()
    figures, page = reports[kind]
    shot = tmp_path / "page.png"
    _run(browser, f"--screenshot={shot}", "--window-size=1000,2400", page.as_uri())
    assert _png_size(shot) == (1000, 2400) and shot.stat().st_size > 20_000
    seen = _probe(browser, page, tmp_path)
    assert seen["svgs"], "no chart was drawn"
    for svg in seen["svgs"]:
        assert svg["width"] > 100 and svg["height"] > 40, svg
    assert not seen["clipped"], f"labels cut off by their chart: {seen['clipped']}"
    assert "None" not in seen["text"].split()
    # the risk bars are bands, and with the suppressed records they add up to the table
    assert "suppressed (no risk)" in seen["text"] and "0.1 < risk ≤ 0.2" in seen["text"]
    dist = figures["risk"]["distribution"]
    assert sum(d["records"] for d in dist) + figures["risk"]["suppressed_records"] == 600
    if kind == "lattice":
        assert any("transformations" in (s["label"] or "") for s in seen["svgs"])
        assert "nodes checked" in seen["text"]
    else:
        assert "class merges" in seen["text"] and "of None" not in seen["text"]
        assert "--solution-space" not in seen["text"]
        assert "No transformations to compare" in seen["text"]
