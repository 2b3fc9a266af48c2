"""The documentation site (mkdocs.yml over docs/) builds with --strict, so a broken link or a nav entry
without its page fails the suite; the README's links point at files that exist. MkDocs comes with the `dev`
extra: a missing mkdocs fails here, it is never skipped."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)


def broken_links(markdown: str, base: Path) -> list[str]:
    """Relative link targets in `markdown` that name no file or folder under `base`."""
    targets = [t for t in LINK.findall(markdown) if not re.match(r"[a-z]+:|#", t)]
    return [t for t in targets if not (base / t.split("#")[0]).exists()]


def test_the_site_builds_strict_with_the_changelog_included(tmp_path: Path) -> None:
    result = build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    changelog = (tmp_path / "site" / "changelog" / "index.html").read_text(encoding="utf-8")
    assert "Reference alignment" in changelog and "--8&lt;--" not in changelog


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy(ROOT / "CHANGELOG.md", copy / "CHANGELOG.md")
    with (copy / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [a page that is not there](no-such-page.md).\n")
    result = build(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stdout + result.stderr


def test_readme_links_resolve(tmp_path: Path) -> None:
    assert broken_links((ROOT / "README.md").read_text(encoding="utf-8"), ROOT) == []
    (tmp_path / "there.md").write_text("x", encoding="utf-8")
    sample = "[a](there.md#part) [b](gone.md) [c](https://example.com) [d](#anchor)"
    assert broken_links(sample, tmp_path) == ["gone.md"]
