"""Build the sandbox image offline and cache it under a content tag.

No image registry is reachable on the machines this runs on, so `FROM python:...` cannot build. The
Debian package mirror is reachable: `sandbox_image/build_rootfs.sh` debootstraps a minimal bookworm with
python3 and a non-root user into a tarball, and `docker import` turns that into an image.

The tag is a hash of the build inputs (every build source), so an unchanged recipe is never rebuilt and a
changed one never reuses a stale image. The rootfs tarball is cached outside the repo
(`~/.cache/prm-factory/sandbox/`), so re-importing after `docker system prune` takes seconds, not the
~50 s of debootstrap.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path

import docker
import docker.errors

from prm_factory.verifiers.code.sandbox import docker_client

log = logging.getLogger(__name__)

IMAGE_REPOSITORY = "prm-factory-sandbox"
# Image config applied at import: the untrusted code never runs as root even without `--user`.
IMPORT_CHANGES = ["USER 10001:10001", "WORKDIR /work", "ENV PATH=/usr/local/bin:/usr/bin:/bin"]


def sandbox_dir() -> Path:
    """Where the build files live: `$PRM_SANDBOX_DIR`, else `sandbox_image/` beside this module (package
    data, so an installed wheel can build the image too)."""
    override = os.environ.get("PRM_SANDBOX_DIR")
    path = Path(override) if override else Path(__file__).resolve().parent / "sandbox_image"
    if not (path / "build_rootfs.sh").is_file():
        raise FileNotFoundError(f"sandbox build files not found in {path}; set PRM_SANDBOX_DIR")
    return path


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "prm-factory" / "sandbox"


def content_tag() -> str:
    """Hash of everything that shapes the image: every build source (the script, the Dockerfile; not the
    README) and the import changes, so neither recipe can drift unnoticed."""
    digest = hashlib.sha256()
    for source in sorted(sandbox_dir().iterdir()):
        if source.is_file() and source.suffix != ".md":
            digest.update(source.name.encode())
            digest.update(source.read_bytes())
    digest.update("\n".join(IMPORT_CHANGES).encode())
    return digest.hexdigest()[:16]


def image_name() -> str:
    return f"{IMAGE_REPOSITORY}:{content_tag()}"


def ensure_image(*, rebuild: bool = False, refresh_rootfs: bool = False) -> str:
    """Return the sandbox image tag, building it only when the engine does not have it yet.

    `rebuild` re-imports the image from the cached rootfs tarball; `refresh_rootfs` also re-runs
    debootstrap (needs root and the Debian mirror).
    """
    client = docker_client()
    name = image_name()
    if not rebuild and not refresh_rootfs:
        try:
            client.images.get(name)
            return name
        except docker.errors.ImageNotFound:
            log.info("sandbox image %s not found; building it", name)
    tarball = cache_dir() / f"rootfs-{content_tag()}.tar"
    if refresh_rootfs or not tarball.is_file():
        build_rootfs(tarball)
    previous = _image_id(client, name)
    log.info("importing %s as %s", tarball, name)
    client.api.import_image_from_file(
        str(tarball), repository=IMAGE_REPOSITORY, tag=content_tag(), changes=IMPORT_CHANGES
    )
    imported = client.images.get(name)  # raises if the import did not produce the tag
    if previous and previous != imported.id:
        # The re-import left the old image untagged; drop it unless a container still uses it.
        try:
            client.images.remove(previous)
        except docker.errors.APIError as exc:
            log.info("previous sandbox image %s kept: %s", previous[:19], exc)
    return name


def _image_id(client: docker.DockerClient, name: str) -> str | None:
    try:
        return client.images.get(name).id
    except docker.errors.ImageNotFound:
        return None


def build_rootfs(tarball: Path) -> None:
    """Run the debootstrap build script; its output is the tarball `docker import` reads."""
    tarball.parent.mkdir(parents=True, exist_ok=True)
    script = sandbox_dir() / "build_rootfs.sh"
    log.info("building sandbox rootfs with %s (about a minute)", script)
    completed = subprocess.run(["bash", str(script), str(tarball)], capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(
            f"sandbox rootfs build failed (exit {completed.returncode}):\n{completed.stderr[-4000:]}"
        )
