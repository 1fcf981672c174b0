"""Library knowledge as data (``*.toml`` beside this module), read once.

Rules and the project join ask here what a library class derives from and which
libraries patch others on import; the facts of the user's code never say that.
"""
from __future__ import annotations

import fnmatch
from functools import lru_cache
from importlib import resources
from typing import Dict, Iterable, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


@lru_cache(maxsize=None)
def _table(name: str) -> dict:
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return tomllib.loads(text)


@lru_cache(maxsize=None)
def library_bases() -> Dict[str, Tuple[str, ...]]:
    """Library class -> the library classes it derives from."""
    return {k: tuple(v) for k, v in _table("libraries.toml").get("bases", {}).items()}


def patched_keywords(imported_modules: Iterable[str], target: str) -> Tuple[str, ...]:
    """Keywords that ``target`` (a qualified class name) accepts because a patching library
    is imported in the unit (``unsloth`` makes TRL trainers accept ``tokenizer=``)."""
    imported = {m.split(".")[0] for m in imported_modules}
    out = []
    for patch in _table("libraries.toml").get("patches", []):
        if patch["library"] in imported and any(fnmatch.fnmatchcase(target, t) for t in patch["targets"]):
            out.extend(patch.get("accepts", ()))
    return tuple(out)


def derives_from(qualname: str, base: str) -> bool:
    """Whether a library class (``trl.GRPOConfig``, also as ``trl.trainer.grpo_config.GRPOConfig``)
    is, or derives from, ``base`` according to the table."""
    parts = qualname.split(".")
    stack = [f"{parts[0]}.{parts[-1]}" if len(parts) > 2 else qualname]
    seen = set()
    while stack:
        name = stack.pop()
        if name == base:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(library_bases().get(name, ()))
    return False
