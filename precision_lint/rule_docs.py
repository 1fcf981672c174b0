"""Rule pages: ``rules/<CODE>.md`` in a checkout, ``precision_lint/rule_pages`` once installed."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

_HERE = Path(__file__).resolve().parent


def page_dirs() -> List[Path]:
    return [d for d in (_HERE / "rule_pages", _HERE.parent / "rules") if d.is_dir()]


def page_path(code: str) -> Optional[Path]:
    for folder in page_dirs():
        candidate = folder / f"{code.upper()}.md"
        if candidate.is_file():
            return candidate
    return None


def page_text(code: str) -> Optional[str]:
    path = page_path(code)
    return path.read_text(encoding="utf-8") if path else None


def documented_codes() -> List[str]:
    codes = set()
    for folder in page_dirs():
        codes.update(p.stem for p in folder.glob("MP*.md"))
    return sorted(codes)
