"""No cycle between the service's modules (docs/architecture.md): import-linter keeps the floors
in order, this keeps every module of a floor importable on its own. Imports inside functions
count, as they do for import-linter."""

import grimp

from tests.core.conftest import APP_PACKAGES as APPS


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, imported in edges.items():
        if root in index:
            continue
        work = [(root, iter(sorted(imported)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_cycles_are_found_in_a_small_graph():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_service_imports_itself_back():
    graph = grimp.build_graph(*APPS)
    modules = {module for module in graph.modules if ".migrations" not in module}
    edges = {
        module: {
            imported
            for imported in graph.find_modules_directly_imported_by(module)
            if imported in modules
        }
        for module in modules
    }

    assert _cycles(edges) == []
