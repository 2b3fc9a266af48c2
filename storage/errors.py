"""Errors the storage layer raises, so the CLI can turn each into one clear line and a non-zero exit."""

from __future__ import annotations


class StorageError(Exception):
    """Base of every error the storage layer raises on purpose."""


class NoDatasetError(StorageError):
    """The dataset root holds no committed dataset (no `runs` table)."""


class UnknownVersionError(StorageError):
    """A version number, tag or time that names no dataset version."""


class CommitConflictError(StorageError):
    """A write kept losing to concurrent writers after every retry."""
