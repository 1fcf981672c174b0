"""Code actions: a quick fix per fixable finding, "disable for this line", and fix-all.

- One ``quickfix`` per finding with a fix. Safe fixes are marked preferred (an editor's
  "auto fix" applies them); an unsafe fix (it may change results where the code worked, see
  the rule's page) says so in its title and is never preferred.
- One ``quickfix`` per finding that adds ``# noqa: CODE`` to the line it is suppressed from
  (the same edit ``--add-noqa`` makes).
- ``source.fixAll.precision-lint``: every safe fix of the file, as ``--fix`` applies them
  (repeated to a fixpoint, with the project joined). Editors run it on save when asked to.

Every edit is checked as ``--fix`` checks it: a fix whose result would not parse, or that
cannot be put back into a notebook's cells, is not offered.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from lsprotocol import types as lsp

from ..diagnostics import SAFE, Diagnostic
from ..fixes.fixer import apply_edits, apply_fixes
from ..workspace.notebook import NotebookError
from ..fixes.noqa import UNCHECKED, commentable_lines, line_edit
from .checker import Checked
from .convert import Locator, Related, diagnostic, document_edits, locator, workspace_edit

FIX_ALL = "source.fixAll.precision-lint"
PREFIX = "precision-lint"


def wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Whether the client asked for actions of ``kind`` (``only`` lists kinds or their parents)."""
    if not only:
        return True
    return any(kind == o or kind.startswith(o + ".") for o in only)


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    start = lambda r: (r.start.line, r.start.character)
    end = lambda r: (r.end.line, r.end.character)
    return start(a) <= end(b) and start(b) <= end(a)


class Actions:
    """The code actions of one checked buffer."""

    def __init__(self, checked: Checked, related: Related, encoding: str, document_changes: bool) -> None:
        self.checked = checked
        self.related = related
        self.encoding = encoding
        self.document_changes = document_changes
        self.where: Locator = locator(checked, encoding)
        self.text = checked.source.text or ""
        self._commentable = None

    def _edit(self, new_text: str) -> Optional[lsp.WorkspaceEdit]:
        b = self.checked.buffer
        try:
            changes = document_edits(b, self.checked.source, new_text, self.encoding)
        except NotebookError:
            return None
        if not changes:
            return None
        versions = {c.uri: c.version for c in b.cells} if b.cells is not None else {b.uri: b.version}
        return workspace_edit(changes, versions, self.document_changes)

    def at(self, uri: str, rng: lsp.Range) -> List[lsp.CodeAction]:
        """Quick fixes and noqa actions for the findings that touch ``rng`` of document ``uri``."""
        out: List[lsp.CodeAction] = []
        for d in self.checked.diagnostics:
            d_uri, item = diagnostic(d, self.where, self.related)
            if d_uri != uri or not _overlaps(item.range, rng):
                continue
            fix = self.quick_fix(d, item)
            if fix is not None:
                out.append(fix)
            noqa = self.noqa(d, item)
            if noqa is not None:
                out.append(noqa)
        # preferred (safe) fixes first, then unsafe ones, then noqa
        return sorted(out, key=lambda a: (not a.is_preferred, "Disable" in a.title))

    def quick_fix(self, d: Diagnostic, item: lsp.Diagnostic) -> Optional[lsp.CodeAction]:
        if d.fix is None or not d.fix.edits or d.code in UNCHECKED:
            return None
        new, applied, _problem = apply_fixes(self.text, [d.fix], d.path)
        if not applied:
            return None
        edit = self._edit(new)
        if edit is None:
            return None
        safe = d.fix.applicability == SAFE
        title = f"{PREFIX} ({d.code}): {d.fix.message}" + ("" if safe else " (unsafe fix: may change results)")
        return lsp.CodeAction(title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[item], is_preferred=safe, edit=edit)

    def noqa(self, d: Diagnostic, item: lsp.Diagnostic) -> Optional[lsp.CodeAction]:
        if d.code in UNCHECKED:
            return None
        if self._commentable is None:
            self._commentable = commentable_lines(self.text)
        if d.noqa_row not in self._commentable:
            return None
        change = line_edit(self.text, d.noqa_row, [d.code])
        if change is None:
            return None
        edit = self._edit(apply_edits(self.text, [change]))
        if edit is None:
            return None
        return lsp.CodeAction(
            f"{PREFIX} ({d.code}): Disable for this line", kind=lsp.CodeActionKind.QuickFix, diagnostics=[item], is_preferred=False, edit=edit
        )

    def has_safe_fixes(self) -> bool:
        return any(d.fix is not None and d.fix.edits and d.fix.applicability == SAFE for d in self.checked.diagnostics)

    def fix_all(self, new_text: Optional[str]) -> lsp.CodeAction:
        """The fix-all action; ``new_text``: the fixed text (None: resolved later)."""
        action = lsp.CodeAction(f"{PREFIX}: Fix all safe fixes", kind=FIX_ALL, data={"uri": self.checked.buffer.uri})
        if new_text is not None:
            action.edit = self._edit(new_text) or lsp.WorkspaceEdit(changes={})
        return action
