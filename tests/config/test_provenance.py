"""What a run records about its code (config/provenance.py): the checkout's commit, marked dirty when it has
uncommitted changes, "unknown" when git cannot say; the versions of the tracked packages installed."""

from __future__ import annotations

import re
import subprocess

from prm_factory.config import provenance


def test_git_commit_is_the_head_of_this_checkout():
    commit = provenance.git_commit()
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", commit), commit


def test_git_commit_is_unknown_when_git_cannot_answer(monkeypatch):
    def fail(*args, **kwargs):
        raise subprocess.CalledProcessError(128, args[0])

    monkeypatch.setattr(provenance.subprocess, "run", fail)
    assert provenance.git_commit() == "unknown"


def test_dirty_checkout_is_marked(monkeypatch):
    outputs = iter(["abc123\n", " M README.md\n"])

    def run(*args, **kwargs):
        return subprocess.CompletedProcess(args[0], 0, stdout=next(outputs))

    monkeypatch.setattr(provenance.subprocess, "run", run)
    assert provenance.git_commit() == "abc123+dirty"


def test_package_versions_list_installed_tracked_packages_only(monkeypatch):
    versions = provenance.package_versions()
    assert "duckdb" in versions and "sympy" in versions
    assert set(versions) <= set(provenance.TRACKED_PACKAGES)
    monkeypatch.setattr(provenance, "TRACKED_PACKAGES", ("no-such-package-anywhere",))
    assert provenance.package_versions() == {}
