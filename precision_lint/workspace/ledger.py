"""What a whole check read of each file, so that a check after an edit that changed no fact
answers from the last one (#23: one file edited in a 2,860-file tree).

A run's findings follow from the facts of its files, the configuration, the config files the
join read (side files, as :class:`~.cache.RunCache` keeps them) and what the rules read of
each file's text besides its facts (``rules.base.TextReads``). The ledger of a check keeps,
per file, its content key, the modules its text imports (which decide the gate, and so which
files are analysed), the key its facts are cached under, and what the rules read of its text:
the ranges read with a digest of what they held, or that the whole text was read.

A later check of the same files in which some changed answers with the ledger's findings when,
for each changed file: it is a plain Python file; its text imports the same modules; its facts
are the facts it had (an edit of a comment, of a docstring, of a name nothing reads), so every
finding's place is the same, where the facts the join reads by question (a module variable's
summary, a name its top level binds: ``facts.model.FactsAsked``) are compared by the questions
the check asked of them, a constant nobody imports being no question; and every range the rules read of it holds the same text, the whole
text never having been read (a finding with a fix reads it whole: the engine asks its header
whether it is vendored, and the plan applies the fix to it). Anything else, or anything missing,
is a full check. Ledger entries are keyed by the files' paths and names, the configuration and
the rules (never by their contents), one entry per such set, replaced by each full check.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from dataclasses import field
from typing import Dict, Iterable, Optional, Tuple

from .._dataclass import dataclass
from .cache import FileStates, _load, _store, fingerprint, states_hold

Ranges = Optional[Tuple[Tuple[Tuple[int, int], ...], str]]  # (ranges read, digest of their text); None: the whole text


def ranges_digest(text: str, ranges: Iterable[Tuple[int, int]]) -> str:
    """A digest of what ``ranges`` of ``text`` hold (a range past the end holds less)."""
    digest = hashlib.sha1()
    for start, end in ranges:
        digest.update(f"{start}:{end}:".encode())
        digest.update(text[start:end].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass(slots=True)
class Entry:
    """The ledger of one check: see the module's docstring."""

    contents: Dict[str, str]  # path → content key
    gate: Dict[str, Optional[Tuple[str, ...]]]  # path → the modules its text imports
    facts_keys: Dict[str, tuple]  # path → the key of its facts (``FactsCache``)
    reads: Dict[str, Ranges]  # path → what the rules read of its text, where they read any
    side_files: FileStates  # the config files the join read, as it read them
    diagnostics: list
    # path → what the joins asked of its facts read by question (``facts.model.FactsAsked``):
    # the return summaries and top-level names compared after an edit; nothing else of them
    asked: Dict[str, tuple] = field(default_factory=dict)

    def side_files_hold(self) -> bool:
        return states_hold(self.side_files)

    def reads_hold(self, path: str, text: str) -> bool:
        """Whether what the rules read of ``path``'s text is the same in ``text``."""
        if path not in self.reads:
            return True
        read = self.reads[path]
        return read is not None and ranges_digest(text, read[0]) == read[1]


def ranges_read(by_path: Dict[str, Optional[set]], texts: Dict[str, str]) -> Dict[str, Ranges]:
    """``TextReads.by_path`` as the ledger keeps it: each file's ranges, sorted, with the
    digest of what they hold in ``texts``."""
    out: Dict[str, Ranges] = {}
    for path, ranges in by_path.items():
        if ranges is None or path not in texts:
            out[path] = None
        else:
            ordered = tuple(sorted(ranges))
            out[path] = (ordered, ranges_digest(texts[path], ordered))
    return out


class Ledger:
    """The ledgers of the checks a cache has seen, one file each, keyed as the module says."""

    def __init__(self, root: str) -> None:
        self.folder = Path(root) / fingerprint() / "ledgers"

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def get(self, key: str) -> Optional[Entry]:
        entry = _load(self._path(key))
        if entry is None:
            return None
        stored_key, found = entry
        return found if stored_key == key and isinstance(found, Entry) else None

    def put(self, key: str, entry: Entry) -> None:
        _store(self._path(key), (key, entry), self.folder.parent.parent)
