"""The page renders in a real headless browser (Debian's chromium) into a non-blank screenshot.

Skipped where /usr/bin/chromium is absent (`apt-get install chromium` provides it). The flags keep
chromium from reaching for the network, which makes it hang on a closed one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prm_factory.reports.dataset_report import COLOURS, write_report

CHROMIUM = Path("/usr/bin/chromium")
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",  # tests run as root in containers
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def screenshot(page: Path, png: Path, profile: Path, height: int = 3000) -> None:
    command = [
        str(CHROMIUM),
        *HEADLESS_FLAGS,
        f"--user-data-dir={profile}",
        f"--screenshot={png}",
        f"--window-size=1280,{height}",
        page.resolve().as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
)
def test_report_renders_in_headless_chromium(report_dataset, tmp_path):
    from PIL import Image  # matplotlib depends on Pillow

    page = tmp_path / "report.html"
    write_report(report_dataset, page, version=2)
    png = tmp_path / "report.png"
    screenshot(page, png, tmp_path / "profile")
    assert png.exists() and png.stat().st_size > 10_000
    image = Image.open(png).convert("RGB")
    assert image.size == (1280, 3000)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert len(colours) > 200  # text, plots and pills, not a blank or single-colour page
    # the label colours of the plots and pills reached the screen
    for label in ("correct", "incorrect", "disputed"):
        assert _rgb(COLOURS[label]) in colours, label
