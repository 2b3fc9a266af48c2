"""Every product module is named by at least one test (scripts/unnamed_modules.py): a new module without a
test fails here. PENDING would list modules still owed a test; it is empty and stays so."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
PENDING: set[str] = set()


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unnamed_modules", ROOT / "scripts" / "unnamed_modules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_product_module_is_named_by_a_test():
    unnamed = set(script().unnamed_modules())
    assert unnamed <= PENDING, f"modules no test names: {sorted(unnamed - PENDING)}"


def test_what_counts_as_naming_a_module():
    named_in = script().named_in
    assert {"a.b", "a.b.x"} <= named_in("from a.b import x\n")
    assert "a.b" in named_in("import a.b\n") and "a.c" in named_in("from a import c\n")
    assert "a.b" in named_in('MODULES = ["a.b"]\n')
    assert "a.b" not in named_in("from a import c\n")
    assert "a.b" not in named_in("ab = 1\n")


def test_an_init_with_only_imports_has_no_code_of_its_own():
    has_own_code = script().has_own_code
    assert not has_own_code('"""Doc."""\nfrom a import b\n__all__ = ["b"]\n')
    assert not has_own_code("")
    assert has_own_code('"""Doc."""\nX = 1\n')
    assert has_own_code("def f():\n    pass\n")


def test_product_modules_cover_packages_and_skip_empty_inits(tmp_path):
    module = script()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"pkg.schemas" = "schemas"\n"pkg.config" = "config"\n'
    )
    for package, body in (("schemas", ""), ("config", "X = 1\n")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(body)
        (tmp_path / package / "mod.py").write_text("Y = 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("from pkg.schemas import mod\n")
    assert {"pkg.schemas.mod", "pkg.config", "pkg.config.mod"} <= set(module.product_modules(tmp_path))
    assert "pkg.schemas" not in module.product_modules(tmp_path)
    assert set(module.unnamed_modules(tmp_path)) == {"pkg.config", "pkg.config.mod"}
