"""Imports flow downward only: models < infrastructure < domain < service < entry points."""

from __future__ import annotations

import ast
from pathlib import Path

import orcmem

PACKAGE = Path(orcmem.__file__).parent

LAYERS = {
    "orcmem.models": 0,
    "orcmem.text": 1,
    "orcmem.host": 1,
    "orcmem.retrieve": 1,
    "orcmem.embed": 1,
    "orcmem.store": 1,
    "orcmem.rules": 2,
    "orcmem.extract": 2,
    "orcmem.ingest": 2,
    "orcmem.setup_agents": 2,
    "orcmem.agent_context": 2,
    "orcmem.importing": 2,
    "orcmem.service": 3,
    "orcmem.team": 4,
    "orcmem.worker": 4,
    "orcmem.app": 4,
    "orcmem.hooks": 5,
    "orcmem.cli": 5,
    "orcmem.mcp_server": 5,
    "orcmem.web": 5,
    "orcmem.entry": 5,
    "orcmem.__main__": 5,
}


def layer_of(module: str) -> int | None:
    """The layer of a module, by its longest known prefix."""
    best = None
    for prefix, layer in LAYERS.items():
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("orcmem")}


def test_every_module_has_a_layer() -> None:
    unplaced = [
        module_name(p) for p in PACKAGE.rglob("*.py") if module_name(p) != "orcmem" and layer_of(module_name(p)) is None
    ]
    assert unplaced == []


def test_no_lower_layer_imports_a_higher_one() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        own = layer_of(name)
        for imported in imported_modules(path):
            other = layer_of(imported)
            if other is not None and own is not None and other > own:
                violations.append(f"{name} (layer {own}) imports {imported} (layer {other})")
    assert violations == []


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from orcmem.service.memory_service import MemoryService\nimport orcmem.cli.commands\n")
    assert imported_modules(bad) >= {"orcmem.service.memory_service", "orcmem.cli.commands"}
    assert layer_of("orcmem.store.memories") < layer_of("orcmem.service")


def test_all_sql_stays_in_the_store() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if module_name(path).startswith("orcmem.store"):
            continue
        text = path.read_text(encoding="utf-8")
        if any(word in text for word in ("SELECT ", "INSERT INTO", "UPDATE memories", "DELETE FROM")):
            offenders.append(module_name(path))
    assert offenders == []


def store_reach_ins(path: Path) -> list[str]:
    """Every `<something>.store` attribute read in a module, as `line: source`."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    return [
        f"{node.lineno}: {ast.get_source_segment(source, node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "store"
    ]


def test_only_the_service_reaches_the_store() -> None:
    """Entry points and domain modules go through the service: none reads a `.store` attribute."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name.startswith(("orcmem.service", "orcmem.store")):
            continue
        offenders += [f"{name}:{where}" for where in store_reach_ins(path)]
    assert offenders == []


def test_the_reach_in_checker_sees_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(service):\n    return service.store.jobs.counts()\n")
    assert store_reach_ins(bad) == ["2: service.store"]


def test_the_package_root_holds_only_the_program_door() -> None:
    """Every module lives in the package named for what it is; only the console script and `python -m` stay."""
    assert sorted(path.name for path in PACKAGE.glob("*.py")) == ["__init__.py", "__main__.py", "entry.py"]


def test_package_faces_are_empty() -> None:
    """A package's __init__ holds a docstring at most: names are imported from the module that defines them."""
    faces = {}
    for path in PACKAGE.rglob("__init__.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        if path.parent != PACKAGE and body:
            faces[module_name(path)] = len(body)
    assert faces == {}


def test_what_came_after_the_layout_lives_in_its_package() -> None:
    """The instruction flag (rules, learned layer and its weights) and the secret rule set (with its licence) are
    text rules, running git is the host's, the provenance check is extraction's; each data file beside its reader."""
    homes = {
        "text/instructions.py": 1,
        "text/instructions_learned.py": 1,
        "text/injection_weights.bin": 1,
        "text/secret_rules/rule_set.py": 1,
        "text/secret_rules/betterleaks.json": 1,
        "text/secret_rules/LICENSE.betterleaks": 1,
        "host/git_process.py": 1,
        "extract/provenance.py": 2,
        "ingest/transcript.py": 2,
    }
    missing = [home for home in homes if not (PACKAGE / home).is_file()]
    assert missing == []
    placed = {home: layer_of("orcmem." + home.rsplit(".", 1)[0].replace("/", ".")) for home in homes}
    assert placed == homes


def import_graph() -> dict[str, set[str]]:
    """Each module and the orcmem modules it imports anywhere (its head, TYPE_CHECKING blocks, function bodies)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in imported_modules(path) if m in modules and m != name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
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
                    work.append((child, iter(sorted(graph.get(child, ())))))
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


def package_of(module: str) -> str:
    """The folder a module lives in (`orcmem.cli` for `orcmem.cli.memories`; the root's modules are their own)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_module_imports_back_round_to_itself() -> None:
    """No circle of imports, not even through an annotation or a deferred import: each part of the service is
    built over the core and the narrow collaborators it is given, never over the service that holds it."""
    assert circles(import_graph()) == []


def test_no_folder_imports_back_round_to_itself() -> None:
    """The folders import one another without a circle (`mcp_server/` answers `orcmem search` with the output
    `app/formatting.py` writes, and `cli/` starts the server: neither folder imports the other back)."""
    graph: dict[str, set[str]] = {}
    for module, imported in import_graph().items():
        graph.setdefault(package_of(module), set()).update(package_of(m) for m in imported)
    for package, imported in graph.items():
        imported.discard(package)
    assert circles(graph) == []


def test_the_circle_finder_sees_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
