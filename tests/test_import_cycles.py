"""No import cycles in cubescale: every module's imports (also those inside functions, which
only postpone a cycle) form a graph without cycles. Imports under ``if TYPE_CHECKING:`` are
for annotations and never run, so they do not count."""

from __future__ import annotations

import ast
from pathlib import Path

import cubescale

ROOT = Path(cubescale.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _runtime_imports(tree: ast.AST):
    """Import nodes outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _targets(module: str, path: Path, node, modules) -> set[str]:
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        package = package.rpartition(".")[0]
    base = (f"{package}.{node.module}" if node.module else package) if node.level else node.module
    found = set()
    for alias in node.names:  # `from . import x` imports the submodule x
        found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules}


def import_graph() -> dict[str, set[str]]:
    """{module: the cubescale modules it imports at run time}."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = set().union(*(_targets(name, path, n, modules) for n in _runtime_imports(tree))) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_walk_sees_imports_inside_functions():
    graph = import_graph()
    assert "cubescale.threads" in graph["cubescale.report"]  # Report.aggregate_threads imports it late
    assert "cubescale.report" not in graph["cubescale.panes"]  # only under TYPE_CHECKING there


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []
