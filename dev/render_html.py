"""Screenshot report/audit.html in headless Chromium, to see the page as a reader will.

    python dev/render_html.py [report/audit.html] [--out-dir DIR] [--width 1280]
        [--tile 1600]

Writes DIR/audit-page.png (the whole page, trimmed of the blank space below it) and
DIR/audit-01.png, audit-02.png, ... (the page cut into tiles `--tile` pixels high, for
viewers that shrink tall images). DIR defaults to a `screenshots/` folder beside the HTML.
Needs Chromium (Debian: `apt-get install chromium`); the test suite does not. The page
loads nothing from elsewhere, so Chromium runs offline.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 120


def browser() -> str:
    """The first Chromium-like browser on PATH; SystemExit with how to get one if none."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit(
        f"error: no Chromium found (looked for {', '.join(BROWSERS)}); "
        "on Debian: apt-get install chromium"
    )


def screenshot(html: Path, out: Path, *, width: int, height: int) -> None:
    """Render `html` in a width x height window into the PNG `out`."""
    url = html.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="render-html-") as profile:
        command = [
            browser(),
            "--headless",
            "--disable-gpu",
            "--no-sandbox",  # needed as root; the page is our own file
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={out.resolve()}",
            url,
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"error: Chromium did not finish within {TIMEOUT_S} s") from None
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"error: Chromium failed (exit {done.returncode}):\n{done.stderr[-2000:]}")


def cut(page: Path, out_dir: Path, tile: int) -> list[Path]:
    """Trim the blank space below the page; write it whole and in tiles `tile` pixels high."""
    import numpy as np
    from PIL import Image

    with Image.open(page) as image:
        grey = np.asarray(image.convert("L"))
        inked = np.flatnonzero(grey.min(axis=1) < 250)
        if inked.size and inked[-1] >= grey.shape[0] - 1:
            print(f"warning: the page is taller than the window ({grey.shape[0]} px): raise --max-height")  # fmt: skip
        bottom = min(grey.shape[0], (int(inked[-1]) if inked.size else 0) + 40)
        whole = image.crop((0, 0, image.width, bottom))
        whole.save(page)
        tiles = []
        for i, top in enumerate(range(0, bottom, tile), start=1):
            path = out_dir / f"{page.stem.removesuffix('-page')}-{i:02d}.png"
            whole.crop((0, top, whole.width, min(bottom, top + tile))).save(path)
            tiles.append(path)
    return [page, *tiles]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=Path, default=Path("report/audit.html"))
    parser.add_argument("--out-dir", type=Path, default=None, help="default: screenshots/ beside the HTML")  # fmt: skip
    parser.add_argument("--width", type=int, default=1280, help="window width, CSS pixels")
    parser.add_argument("--max-height", type=int, default=20000, help="window height, CSS pixels")
    parser.add_argument("--tile", type=int, default=1600, help="height of each tile, pixels")
    args = parser.parse_args(argv)
    if not args.html.is_file():
        parser.error(f"{args.html} is not a file (run `make audit` to write report/audit.html)")
    out_dir = args.out_dir or args.html.parent / "screenshots"
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / f"{args.html.stem}-page.png"
    screenshot(args.html, page, width=args.width, height=args.max_height)
    for path in cut(page, out_dir, args.tile):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
