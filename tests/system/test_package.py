"""The package as a packager and a reader meet it: one import name, layers that point one way, no cycles.

The import walk reads every module's source (no import runs): `import` and `from … import` at module
level, inside functions and under TYPE_CHECKING, and string constants naming a project module (the
modules the registry and the CLI load with importlib) — so a late import cannot hide a cycle.
"""

from __future__ import annotations

import ast
import os
import pty
import select
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("core", "net", "tui")  # imports may point only to the left


def project_modules() -> dict[str, Path]:
    modules = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(["dicetable", *parts])] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every project module `name` imports, wherever the import sits."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), or a self-loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
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
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer(module: str) -> int:
    return LAYERS.index(module.split(".")[1])


def test_the_walk_sees_late_and_string_imports():
    graph = import_graph()
    assert "dicetable.tui.commands.host" in graph["dicetable.tui.cli"]  # importlib by name
    assert "dicetable.core.tricolor_bots" in graph["dicetable.core.registry"]
    assert "dicetable.tui.screens.home_screen" in graph["dicetable.tui.app"]  # inside a method
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_imports_point_one_way_tui_net_core():
    backwards = [f"{a} -> {b}" for a, deps in import_graph().items() for b in deps if layer(b) > layer(a)]
    assert backwards == []


def test_rules_modules_do_not_import_their_bots():
    graph = import_graph()
    for game in ("trice", "triad", "dicebreaker", "tricolor", "diceroom"):
        bots = {m for m in graph[f"dicetable.core.{game}"] if m.endswith("bots")}
        assert bots == set(), f"core/{game}.py imports {bots}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # built from a copy of what the package is made of: an in-tree build leaves build/ behind, whose
    # stale files a later wheel would pick up
    source = tmp_path_factory.mktemp("source")
    for part in ("pyproject.toml", "README.md", *LAYERS):
        copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
        copy(ROOT / part, source / part, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}))
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                            "--wheel-dir", str(out), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    (found,) = out.glob("dicetable-*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_installs_one_import_name(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"dicetable", next(t for t in tops if t.endswith(".dist-info"))}
    for needed in ("dicetable/core/trice.py", "dicetable/net/log/wire.py", "dicetable/tui/cli.py",
                   "dicetable/tui/app.tcss", "dicetable/tui/screens/tricolor.tcss",
                   "dicetable/tui/rules/tricolor-line.md"):
        assert needed in names
    assert not any(n.startswith(("core/", "net/", "tui/", "tests/", "scripts/")) for n in names)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the wheel; its dependencies come from this venv's site-packages
    through a path file, so nothing is downloaded and the checkout is not importable from it."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    fresh_python = venv / "bin" / "python"
    site = subprocess.run([str(fresh_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # a path line adds the directory but runs none of its .pth files: the checkout's editable finder stays out
    Path(site, "deps.pth").write_text(ours + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(fresh_python), "install", "--quiet",
                           "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return venv


def run_installed(venv: Path, tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["DICETABLE_HOME"] = str(tmp_path / "home")
    return subprocess.run([str(venv / "bin" / "dicetable"), *argv], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)


@pytest.mark.slow
def test_the_installed_wheel_runs_its_commands(installed, tmp_path):
    where = subprocess.run([str(installed / "bin" / "python"), "-c",
                            "import dicetable.core.trice as t, importlib.util as u; print(t.__file__);"
                            "print([u.find_spec(n) for n in ('core', 'net', 'tui')])"],
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout.splitlines()
    assert where[0].startswith(str(installed)) and where[1] == "[None, None, None]"
    rules = run_installed(installed, tmp_path, "rules", "tricolor")
    assert rules.returncode == 0 and rules.stdout.startswith("# Tricolor Line")
    played = run_installed(installed, tmp_path, "selfplay", "trice", "--games", "2", "--bots", "random,greedy")
    assert played.returncode == 0 and "greedy" in played.stdout, played.stderr


@pytest.mark.slow
def test_the_installed_wheel_opens_the_app(installed, tmp_path):
    """The app from the wheel paints in a real terminal (a pty, 80 x 24): the first-run name prompt,
    then, with a name given, the home screen."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR")}
    env.update(DICETABLE_HOME=str(tmp_path / "home"), TERM="xterm-256color", COLUMNS="80", LINES="24")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the installed command in the pty
        os.chdir(tmp_path)
        os.execve(str(installed / "bin" / "dicetable"), ["dicetable"], env)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    seen = b""

    def read_until(text: bytes) -> None:
        nonlocal seen
        end = time.monotonic() + 60
        while time.monotonic() < end and text not in seen:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
        assert text in seen, seen[-2000:]

    try:
        read_until(b"Welcome to dicetable")  # a first run asks for the player's name
        os.write(fd, b"ann\r")
        read_until(b"Play against a bot")
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
