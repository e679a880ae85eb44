"""Open a run's report.html in headless Chromium and save a screenshot (the figures must show).

Usage: uv run python tools/dev/check_report_html.py RUN_DIR [--out screenshot.png]
Needs Debian's chromium (apt-get install chromium). Exits 1 if the page did not render or if any
embedded figure failed to decode (checked by the page itself and written into the DOM dump).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]
# appended to a copy of the page: reports how many images decoded with a non-zero size
PROBE = ("<script>window.addEventListener('load',()=>{const i=[...document.images];"
         "document.title='images:'+i.length+':decoded:'+i.filter(x=>x.complete&&x.naturalWidth>0).length;});</script>")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def check(run_dir: Path, out: Path) -> tuple[int, int]:
    """Screenshot ``run_dir/report.html`` into ``out``; return (images, decoded images)."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium not found: apt-get install chromium")
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"  # a copy outside the run dir: figures must come from the page itself
        page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        common = [exe, *FLAGS, f"--user-data-dir={tmp}/profile", "--virtual-time-budget=5000"]
        subprocess.run([*common, f"--screenshot={out}", "--window-size=1200,2400", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
        dom = subprocess.run([*common, "--dump-dom", page.as_uri()], check=True, capture_output=True, text=True,
                             timeout=120).stdout
    title = dom.split("<title>", 1)[1].split("</title>", 1)[0]
    _, n, _, ok = title.split(":")
    return int(n), int(ok)


def dump_dom(run_dir: Path) -> str:
    """The DOM of ``run_dir/report.html`` after Chromium has rendered it."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium not found: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp}/profile", "--virtual-time-budget=5000",
                               "--dump-dom", (Path(run_dir) / "report.html").resolve().as_uri()], check=True,
                              capture_output=True, text=True, timeout=120).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--out", type=Path, default=Path("report-screenshot.png"))
    args = ap.parse_args()
    n, ok = check(args.run_dir, args.out.resolve())
    print(f"{args.run_dir / 'report.html'}: {ok}/{n} figures decoded; screenshot {args.out}")
    return 0 if n > 0 and ok == n and args.out.stat().st_size > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
