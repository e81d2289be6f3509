"""The shape of the house, by check: the imports of every module of pbm, read with ``ast``
(those inside functions too), against the layers of ``docs/architecture.md``.

- A module imports only its own layer and the layers below it (``LAYERS``,
  bottom first); ``pbm.games`` imports nothing else of pbm; every module has
  its layer; no import cycles.
- The database library is the store's: nothing above it imports sqlalchemy or
  sqlmodel, or runs a statement; the shell may name the library's errors (to
  catch them) and the session's type (``SHELL_MAY_NAME``).
- No module outside ``pbm/games`` names a game: its package, its name, its own
  record formats or the program its computer player needs, as an import or a
  string (docstrings aside). ``KNOWN_GAME_NAMERS`` lists the offenders known
  today; it only shrinks.
- No module outside ``pbm/games`` and the migrations is over ``MAX_LINES`` lines
  (``KNOWN_LONG``: the one that is today; it only shrinks).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pbm
import pbm.games

PACKAGE = Path(pbm.__file__).parent

# Bottom first: a module may import its own layer and the ones below it. A name is a
# module or the package that holds it (``pbm`` alone is the package's own __init__).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("games", ("pbm.games",)),
    (
        "values",
        (
            "pbm",
            "pbm.model",
            "pbm.refusals",
            "pbm.replies",
            "pbm.ratings",
            "pbm.glicko",
            "pbm.timecontrol",
            "pbm.config",
            "pbm.verbs",
            "pbm.logs",
        ),
    ),
    ("store", ("pbm.store", "pbm.migrations")),
    ("use cases", ("pbm.usecases",)),
    ("commands", ("pbm.commands",)),
    ("mail", ("pbm.mail", "pbm.usecases.pictures.raster")),
    ("shell", ("pbm.smtp", "pbm.runners", "pbm.web", "pbm.cli", "pbm.__main__")),
)
DATABASE_LIBRARIES = ("sqlalchemy", "sqlmodel")
# What the shell may import of the database library: its errors, the session's type.
SHELL_MAY_NAME = {("sqlalchemy", "exc"), ("sqlalchemy.exc", "*"), ("sqlmodel", "Session")}
# Calls that run SQL: none above the store.
SESSION_CALLS = {"execute", "scalar", "scalars", "begin_nested", "connection", "get_bind"}

# (module, word) -> occurrences: the modules outside pbm/games that name a game today.
# Each needs a change of design; when it is made, its line goes.
KNOWN_GAME_NAMERS: dict[tuple[str, str], int] = {}
MAX_LINES = 500
KNOWN_LONG: set[str] = set()


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module imported (or the one a name is imported from)
    name: str  # the name imported from ``target`` ("*" for a whole module)
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def sources() -> tuple[tuple[Path, str, ast.Module], ...]:
    """Every module of pbm: its file, its name, its tree (read once)."""
    return tuple(
        (path, module_name(path), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    )


MODULES = {name for _, name, _ in sources()}


def imports(module: str, path: Path, tree: ast.Module) -> Iterator[Import]:
    """Every import of ``tree``, at any depth: ``from pbm import games`` imports the
    module ``pbm.games``; ``from pbm.games import Outcome`` a name of ``pbm.games``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, "*", node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = (
                    module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                )
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:
                    yield Import(module, full, "*", node.lineno)
                else:
                    yield Import(module, base, alias.name, node.lineno)


def layer_of(module: str) -> int | None:
    """The index in ``LAYERS`` of the longest name that holds ``module``."""
    best: tuple[int, int] | None = None
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            holds = module == name or (name != "pbm" and module.startswith(name + "."))
            if holds and (best is None or len(name) > best[1]):
                best = (index, len(name))
    return None if best is None else best[0]


def is_pbm(target: str) -> bool:
    return target == "pbm" or target.startswith("pbm.")


@functools.cache
def all_imports() -> tuple[Import, ...]:
    return tuple(i for path, name, tree in sources() for i in imports(name, path, tree))


def test_every_module_has_a_layer() -> None:
    assert [m for m in sorted(MODULES) if layer_of(m) is None] == []


def test_imports_point_down() -> None:
    upward = []
    for i in all_imports():
        if not is_pbm(i.target):
            continue
        mine, theirs = layer_of(i.module), layer_of(i.target)
        assert mine is not None and theirs is not None, i
        if theirs > mine:
            upward.append(
                f"{i.module}:{i.line} ({LAYERS[mine][0]}) imports {i.target} ({LAYERS[theirs][0]})"
            )
    assert upward == []


def test_games_import_nothing_else_of_pbm() -> None:
    found = [
        f"{i.module}:{i.line} imports {i.target}"
        for i in all_imports()
        if i.module.startswith("pbm.games")
        and is_pbm(i.target)
        and not (i.target == "pbm.games" or i.target.startswith("pbm.games."))
    ]
    assert found == []


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in all_imports():
        if i.target in MODULES and i.target != i.module:
            graph[i.module].add(i.target)
    cycles = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(" -> ".join([*path[path.index(module) :], module]))
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_only_the_store_speaks_sql() -> None:
    store = next(i for i, (name, _) in enumerate(LAYERS) if name == "store")
    shell = len(LAYERS) - 1
    found = []
    for i in all_imports():
        library = i.target.split(".")[0]
        if library not in DATABASE_LIBRARIES:
            continue
        mine = layer_of(i.module)
        if mine == store:
            continue
        if mine == shell and (
            (i.target, i.name) in SHELL_MAY_NAME or (i.target, "*") in SHELL_MAY_NAME
        ):
            continue
        found.append(f"{i.module}:{i.line} imports {i.target} {i.name}")
    assert found == []


def test_no_statement_runs_above_the_store() -> None:
    store = next(i for i, (name, _) in enumerate(LAYERS) if name == "store")
    found = []
    for _, module, tree in sources():
        layer = layer_of(module)
        if layer is None or layer == store or layer == len(LAYERS) - 1:
            continue  # the shell hands sessions to the store and out of it
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in SESSION_CALLS
            ):
                found.append(f"{module}:{node.lineno} calls .{node.func.attr}()")
    assert found == []


def game_words() -> set[str]:
    """What names a game: each package under pbm/games, its game's name, its own record
    formats' names and endings, the program its computer player needs."""
    words = set()
    for folder in (PACKAGE / "games").iterdir():
        if not (folder / "__init__.py").exists():
            continue
        words.add(folder.name)
        game = pbm.games.get(folder.name)
        words.add(game.name)
        for record_format in pbm.games.record_formats(game):
            words |= {record_format.name, record_format.suffix}
        program = getattr(game, "computer_program", None)
        if program:
            words.add(program)
    return {w.lower() for w in words}


def docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def game_namers() -> dict[tuple[str, str], int]:
    words = game_words()
    pattern = re.compile(rf"\b({'|'.join(sorted(words))})\b", re.IGNORECASE)
    found: dict[tuple[str, str], int] = {}

    def count(path: Path, text: str) -> None:
        for match in pattern.finditer(text):
            key = (str(path.relative_to(PACKAGE.parent)), match.group(1).lower())
            found[key] = found.get(key, 0) + 1

    for path, module, tree in sources():
        if module.startswith("pbm.games") or module.startswith("pbm.migrations"):
            continue
        skip = docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    count(path, alias.name.replace(".", " "))
            elif isinstance(node, ast.ImportFrom):
                count(path, (node.module or "").replace(".", " "))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
            ):
                count(path, node.value)
    return found


def test_game_words_are_found() -> None:
    assert {"accasta", "chess", "pgn"} <= game_words()


def test_no_module_outside_the_games_names_a_game() -> None:
    found = game_namers()
    new = {k: n for k, n in found.items() if n > KNOWN_GAME_NAMERS.get(k, 0)}
    assert new == {}, "a game named outside pbm/games: ask the game through pbm.games"
    gone = {k: n for k, n in KNOWN_GAME_NAMERS.items() if found.get(k, 0) < n}
    assert gone == {}, "fewer than KNOWN_GAME_NAMERS says: shrink it"


def test_modules_are_small() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path, module, _ in sources()
        if not module.startswith(("pbm.games", "pbm.migrations"))
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert set(long) == KNOWN_LONG, long
