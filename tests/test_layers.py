"""Imports run one way: each folder of ``voice/`` imports only its own layer or the layers below it.

The layers, top to bottom (``docs/architecture.md`` draws them):

* **front doors**: the CLI, the demo, the microphone and websocket clients, the benches, the soak, and
  ``voice/loader.py``, the composition root that builds the configured backends;
* **adapters**: ``backends/`` (the only code that imports faster-whisper, llama.cpp, piper, onnxruntime) and
  ``wyoming/`` (its server, and the client the Wyoming backends use). They implement the interfaces of
  ``runtime/`` and are reached only from the composition root, never from the serving code;
* ``serve/`` (the websocket server, its sessions, and the OpenAI Realtime endpoint);
* ``turn/`` (one turn from audio to reply, and the end-of-turn decision);
* ``conversation/`` (what the LLM sees);
* ``skills/`` (exact answers without the LLM);
* ``runtime/`` (the model interfaces and how turns share the models);
* the base: ``wire/``, ``models/``, ``config/``, ``audio.py``, ``clock.py``.

Parsed from the source (every ``import``, lazy ones and ``TYPE_CHECKING`` ones included), nothing is imported.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "front doors",
        (
            "voice.__main__",
            "voice.cli",
            "voice.reliability",
            "voice.bench",
            "voice.demo",
            "voice.talk",
            "voice.client",
            "voice.loader",
        ),
    ),
    ("adapters", ("voice.backends", "voice.wyoming")),
    ("serve", ("voice.serve",)),
    ("turn", ("voice.turn",)),
    ("conversation", ("voice.conversation",)),
    ("skills", ("voice.skills",)),
    ("runtime", ("voice.runtime",)),
    ("base", ("voice.wire", "voice.models", "voice.config", "voice.audio", "voice.clock", "voice")),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "voice").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``voice`` that ``module`` imports."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != module}


def _package(module: str) -> str:
    """The declared package (the longest one in :data:`LAYERS`) a module belongs to."""
    declared = [p for _, ps in LAYERS for p in ps if module == p or module.startswith(p + ".")]
    return max(declared, key=len)


def _rank(package: str) -> int:
    return next(i for i, (_, ps) in enumerate(LAYERS) if package in ps)


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {m: _imports(m, p, known) for m, p in modules.items()}


def test_every_module_is_in_a_declared_package() -> None:
    stray = [m for m in _modules() if _package(m) == "voice" and m != "voice"]
    assert stray == [], f"declare these in LAYERS (a folder, or a front door / base module): {stray}"


def test_no_import_climbs_to_a_higher_layer() -> None:
    climbs = []
    for module, targets in _graph().items():
        for target in targets:
            src, dst = _package(module), _package(target)
            if _rank(dst) < _rank(src):
                climbs.append(f"{module} ({LAYERS[_rank(src)][0]}) imports {target} ({LAYERS[_rank(dst)][0]})")
    assert climbs == [], "imports that climb back up:\n" + "\n".join(sorted(climbs))


def test_packages_import_each_other_one_way() -> None:
    """No two packages of one layer import each other, even through others (a cycle between folders)."""
    between: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        src = _package(module)
        between.setdefault(src, set()).update(_package(t) for t in targets if _package(t) != src)
    graphlib.TopologicalSorter(between).prepare()  # raises CycleError naming the cycle


def test_no_module_cycle() -> None:
    graphlib.TopologicalSorter(_graph()).prepare()


def test_the_check_sees_a_climbing_import(tmp_path: Path) -> None:
    """The parser finds absolute and relative imports of the package (so the tests above can fail)."""
    src = tmp_path / "voice" / "runtime" / "x.py"
    src.parent.mkdir(parents=True)
    src.write_text("from voice.serve import session\nfrom ..turn.pipeline import Turn\nimport voice.skills.timers\n")
    known = {"voice.serve", "voice.serve.session", "voice.turn.pipeline", "voice.skills.timers"}
    found = _imports("voice.runtime.x", src, known)
    assert found == {"voice.serve.session", "voice.turn.pipeline", "voice.skills.timers"}
    assert _rank(_package("voice.serve.session")) < _rank(_package("voice.runtime.x"))
