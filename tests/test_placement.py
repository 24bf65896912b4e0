"""The placement package's face (uncertainty_claims.placement): a few names, what a process
sets up through them, and where this thread computes as the order builders read it."""

from __future__ import annotations

import ast
import os
import threading
import types
from pathlib import Path

import pytest

from uncertainty_claims import placement
from uncertainty_claims.placement import _child, _compile_cache

LIB = Path(placement.__file__).resolve().parents[1]
MAX_NAMES = 6


def test_placement_speaks_with_a_few_names():
    """At most `MAX_NAMES` public names, each in `__all__`; everything else is its private
    modules'."""
    public = {
        name
        for name, value in vars(placement).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(placement.__all__)
    assert len(placement.__all__) <= MAX_NAMES


RECIPES = ("calibration", "uncertainty")
"""The recipe packages under lib/: they compute; the order builders (lib/orders/) choose
where."""


def _placement_imports(source: str) -> list[str]:
    """What a module's source imports from the placement package, its face or its private
    modules, in any spelling: `from ..placement import x`, `from ..placement._devices import
    x`, `from .. import placement`, `import uncertainty_claims.placement`."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if "placement" in module.split("."):
                names += [f"{module}.{alias.name}" for alias in node.names]
            else:
                names += [f"{module}.{a.name}" for a in node.names if a.name == "placement"]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if "placement" in a.name.split(".")]
    return names


@pytest.mark.parametrize(
    "line",
    [
        "from ..placement import on_host",
        "from ..placement._devices import carry_placement",
        "from .. import placement",
        "import uncertainty_claims.placement._where",
        "def f():\n    from uncertainty_claims.placement import where",
    ],
)
def test_the_import_check_sees_every_spelling(line):
    """Each way a module can reach the placement package is found (the check below could
    not fail otherwise); a name that merely contains the word is not."""
    assert _placement_imports(line)
    assert not _placement_imports("from ..sharding import placed_inputs\nimport replacement")


def test_no_recipe_module_imports_from_placement():
    """No module under lib/calibration/ or lib/uncertainty/ imports from the placement
    package, public or private: the recipes compute, and the order builders (lib/orders/)
    choose where each order runs."""
    found = {
        str(path.relative_to(LIB)): _placement_imports(path.read_text())
        for recipe in RECIPES
        for path in sorted((LIB / recipe).rglob("*.py"))
    }
    assert len(found) > 2 * len(RECIPES)  # both packages' modules were read
    assert {path: names for path, names in found.items() if names} == {}


def test_only_the_package_face_is_imported_outside_placement():
    """No module of lib/ but the mesh path's (sharding.py, which hands a thread's placement to
    its compiling thread) reaches into the package's private modules: the order builders
    choose placement by its public names."""
    private = {
        str(path.relative_to(LIB)): [n for n in _placement_imports(path.read_text()) if "._" in n]
        for path in LIB.rglob("*.py")
        if "placement" not in path.parts
    }
    assert {path: names for path, names in private.items() if names} == {
        "sharding.py": ["placement._devices.carry_placement"],
    }


def test_prepare_process_sets_the_childrens_budget_and_the_program_cache(tmp_path, monkeypatch):
    """One call sets what a run's process needs before computing: the budget a child process
    may take, and the compiled-program folder under the cache folder given, exported to the
    processes it starts. On a CPU-only machine no accelerator is named."""
    monkeypatch.setattr(_child, "timeout_s", _child.timeout_s)
    monkeypatch.delenv(_compile_cache.FOLDER_VARIABLE, raising=False)
    monkeypatch.delenv(_compile_cache.SWITCH_VARIABLE, raising=False)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    monkeypatch.setattr(placement._devices, "accelerator_platform", lambda: None)
    kept = {
        "jax_compilation_cache_dir": None,
        "jax_persistent_cache_min_compile_time_secs": None,
        "jax_persistent_cache_min_entry_size_bytes": None,
    }
    import jax

    kept = {name: getattr(jax.config, name) for name in kept}
    try:
        platform = placement.prepare_process(
            "gw1", 2, cache_dir=tmp_path, budget_s=7.0, try_start=False, open_now=True
        )
        assert platform is None
        assert _child.timeout_s == 7.0
        folder = tmp_path / _compile_cache.FOLDER_NAME
        assert folder.is_dir() and os.environ[_compile_cache.FOLDER_VARIABLE] == str(folder)
    finally:
        for name, value in kept.items():
            jax.config.update(name, value)


def test_prepare_process_refuses_a_switch_that_is_neither_on_nor_off(tmp_path, monkeypatch):
    """CLAIMS_COMPILATION_CACHE=maybe: a ValueError naming the variable, before anything is
    set up (conftest.py turns it into a usage error)."""
    monkeypatch.setenv(_compile_cache.SWITCH_VARIABLE, "maybe")
    with pytest.raises(ValueError, match="CLAIMS_COMPILATION_CACHE='maybe'"):
        placement.prepare_process(
            None, 0, cache_dir=tmp_path, budget_s=None, try_start=False, open_now=False
        )


def test_where_on_a_cpu_changes_nothing():
    """On this CPU: the platform is the CPU, no mesh, the two arithmetics are this process's
    XLA_FLAGS and the other vector width's, `spread` without a one-by-one path computes every
    item here in this thread, and `side_by_side` runs the faithful order first."""
    from uncertainty_claims.placement._arithmetic import other_flags

    here = placement.where()
    flags = os.environ.get("XLA_FLAGS", "")
    assert (here.platform, here.mesh) == ("cpu", None)
    assert here.arithmetics == [flags, other_flags(flags)]
    assert here.backends == ["cpu"]
    thread = threading.current_thread().name
    spread = here.spread(
        lambda items: [(i, threading.current_thread().name) for i in items], [1, 2]
    )
    assert spread == [(1, thread), (2, thread)]
    calls: list[str] = []
    assert here.side_by_side(
        lambda: calls.append("faithful") or 1, lambda: calls.append("others") or 2
    ) == (1, 2)
    assert calls == ["faithful", "others"]


def test_on_host_is_the_default_device_only_when_asked():
    """`on_host(False)` leaves the default device alone; `on_host()` on a CPU-only machine
    too (the CPU is the default already), so no figure of a CPU run moves by a bit."""
    import jax

    before = jax.config.jax_default_device
    with placement.on_host(False):
        assert jax.config.jax_default_device == before
    with placement.on_host():
        assert placement.where().platform == "cpu"
