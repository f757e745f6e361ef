"""No import cycle among the modules of seed/ and envs/, nor among their packages, read
statically from their source.

Every ``import`` statement counts, the ones inside functions too (a lazy import
hides a cycle from the interpreter, not from the design). An import names the
most specific module it loads: ``from seed.runtime import checkpoint`` is an
edge to ``seed.runtime.checkpoint``, ``from seed.config import Config`` one to
``seed.config``.

Modules can be free of cycles while their packages are not (``seed.results.bench`` once imported
``seed.bench.timeline``, which imports ``seed.results.files``): the packages are checked too,
each module counted in the package right under the top one (``seed.runtime.seed_arch.learner``
in ``seed.runtime``; a module at the top, ``seed.cli``, stands for itself).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("seed", "envs")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imported(name: str, path: Path, known) -> set[str]:
    """The modules of ``known`` that the source of module ``name`` imports."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                parent = package[:len(package) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {m for m in found if m in known and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def _package(module: str) -> str:
    """The package a module is counted in: the top package and the next name."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, imported in graph.items():
        package = _package(module)
        out.setdefault(package, set()).update(
            p for p in map(_package, imported) if p != package)
    return out


def test_the_checker_sees_the_modules_and_their_imports():
    graph = _graph()
    assert "seed.runtime.run" in graph and "envs.toy" in graph and "seed" in graph
    assert "seed.runtime.checkpoint" in graph["seed.runtime.run"]  # from seed.runtime import ...
    assert "seed.config" in graph["seed.runtime.run"]  # from seed.config import Config
    assert "envs" in graph["envs.toy"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    packages = _package_graph({"s.a.x": {"s.b.y"}, "s.b.y": {"s.a.z.w"}, "s.a.z.w": set(),
                               "s.top": {"s.a.x"}})
    assert packages == {"s.a": {"s.b"}, "s.b": {"s.a"}, "s.top": {"s.a"}}
    assert _cycles(packages) == [["s.a", "s.b"]]


def test_no_import_cycle_among_the_modules():
    cycles = _cycles(_graph())
    assert not cycles, "modules that import each other (directly or around a loop): " + \
        "; ".join(" <-> ".join(c) for c in cycles)


def test_no_import_cycle_among_the_packages():
    cycles = _cycles(_package_graph(_graph()))
    assert not cycles, "packages that import each other (directly or around a loop): " + \
        "; ".join(" <-> ".join(c) for c in cycles)
