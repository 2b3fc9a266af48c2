"""The sandbox image's build sources ship with the code verifier, and its tag hashes all of them."""

import shutil
from pathlib import Path

from prm_factory.verifiers.code import image


def test_build_sources_are_package_data_beside_the_verifier():
    sources = image.sandbox_dir()
    assert sources.parent == Path(image.__file__).resolve().parent
    assert {"build_rootfs.sh", "Dockerfile"} <= {p.name for p in sources.iterdir()}


def test_the_tag_changes_with_any_build_source_but_not_the_readme(tmp_path, monkeypatch):
    copy = tmp_path / "sandbox_image"
    shutil.copytree(image.sandbox_dir(), copy)
    monkeypatch.setenv("PRM_SANDBOX_DIR", str(copy))
    original = image.content_tag()
    (copy / "README.md").write_text("docs only\n")
    assert image.content_tag() == original
    (copy / "Dockerfile").write_text((copy / "Dockerfile").read_text() + "\n# drift\n")
    assert image.content_tag() != original
