"""Checks of the configured model files before anything is loaded, so a bad file fails in milliseconds
with its path named (rather than deep inside a backend, or after the other models took seconds to load).

For each configured model: the catalogue knows the name and kind; its folder and every file resolve
inside the models folder (symlinks are followed, and one pointing outside is refused); every file exists
with the catalogue's size (a truncated download is caught); a GGUF starts with the GGUF magic.
"""

from __future__ import annotations

from pathlib import Path

from voice.config.config import Config
from voice.models import (
    Catalogue,
    ModelEntry,
    ModelMissingError,
    find_gguf,
    locate,
    model_dir,
    resolve_inside,
)


def check_model_files(config: Config, models_root: Path, catalogue: Catalogue) -> list[Path]:
    """Raise :class:`~voice.models.ModelError` naming the first bad path; return the model folders (STT,
    LLM, TTS, then the end-of-turn model's and the words model's, each if configured; a stage on a Wyoming
    server is not checked)."""
    models_root = Path(models_root).absolute()
    folders: list[Path] = []
    # (the config key that names it, its kind in the catalogue, its name)
    wanted = [
        ("[stt] model", "stt", config.stt.model),
        ("[llm] model", "llm", config.llm.model),
        ("[tts] model", "tts", config.tts.model),
    ]
    if config.turn.end_of_turn_model:
        wanted.append(("[turn] end_of_turn_model", "turn", config.turn.end_of_turn_model))
    if config.turn.reads_words:
        wanted.append(("[turn] words_model", "llm", config.turn.reads_words))
    # A stage on a Wyoming server ([stt]/[tts] backend = "wyoming") reads no model files here.
    remote = {f"[{s}] model" for s, section in (("stt", config.stt), ("tts", config.tts)) if section.backend != "local"}
    for key, kind, name in wanted:
        if key == "[llm] model" and config.llm.backend != "llama":
            folders.append(models_root)  # served by a server ([llm] backend): no local file to check
            continue
        entry = catalogue.get(name)
        if key in remote:
            folders.append(model_dir(models_root, entry))
            continue
        if entry.kind != kind:
            raise ModelMissingError(f"{key} = {name!r} is a {entry.kind} model in the catalogue, not a {kind} model")
        folder = _inside(models_root, model_dir(models_root, entry), entry)
        for f in entry.files:
            _inside(models_root, folder / f.name, entry)
        locate(models_root, entry)  # every file present with the catalogue's size
        if kind == "llm":
            find_gguf(folder, name)  # the GGUF magic
        folders.append(folder)
    return folders


def _inside(root: Path, path: Path, entry: ModelEntry) -> Path:
    resolve_inside(root, path)  # raises ModelPathError naming the path
    return path
