"""``precision-lint server``: a Language Server Protocol server over stdio.

Built on pygls: it keeps the open documents in sync (incremental changes, LSP 3.17 notebook
documents with their cells), negotiates position encodings and runs the JSON-RPC loop; the
server adds what is precision-lint's (see ``checker.py``, ``convert.py``, ``actions.py``).

- Diagnostics when a file or notebook is opened, saved, and after a pause in typing
  (:data:`DEBOUNCE_S`). Every open file of the same project is checked with it, and those
  whose findings changed are published again: editing ``train.py`` so that it no longer turns
  on fp16 loss scaling clears the MP101 shown in the open ``model_utils.py``.
- Code actions: quick fixes, "disable for this line", ``source.fixAll.precision-lint``.
- Settings: section ``precision-lint`` of ``workspace/configuration`` (``select``,
  ``ignore``, ``extendSelect``), or the same object as ``initializationOptions``.

Checks run one at a time in a worker thread, on snapshots of the documents, so the server
keeps answering while one runs.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .._version import __version__
from ..engine import InternalError
from .actions import FIX_ALL, Actions, wanted
from .checker import Checked, Checker, Outcome, Settings, SettingsError
from .convert import Related, diagnostics
from .documents import Buffer, Cell, is_checked, notebook_buffer, text_buffer

DEBOUNCE_S = 0.3  # after the last keystroke
SECTION = "precision-lint"
CONFIG_FILES = ("pyproject.toml", "precision-lint.toml", ".precision-lint.toml")
log = logging.getLogger(__name__)


def _path(uri: str) -> tuple:
    """(filesystem path, whether it is a file on disk) of a document URI."""
    if urlparse(uri).scheme == "file":
        path = to_fs_path(uri)
        if path:
            return os.path.abspath(path), True
    name = os.path.basename(unquote(urlparse(uri).path)) or "untitled"
    return name, False


class PrecisionLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="precision-lint",
            version=__version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[
                    lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")], notebook="jupyter-notebook")
                ],
                save=True,
            ),
        )
        self.checker = Checker()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="precision-lint-check")
        self.pending: Dict[str, asyncio.Task] = {}
        self.published: Dict[str, List[lsp.Diagnostic]] = {}
        self.last: Dict[str, Checked] = {}  # buffer URI → its latest check
        self.errors_shown: set = set()
        self.initial_settings: dict = {}  # from initializationOptions

    # --- what is open --------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        value = self.workspace.position_encoding
        return str(getattr(value, "value", value) or "utf-16")

    def buffers(self) -> List[Buffer]:
        """A snapshot of every open file the server checks."""
        ws = self.workspace
        out: List[Buffer] = []
        cells_seen = set()
        for nb in ws.notebook_documents.values():
            cells = []
            for cell in nb.cells:
                cells_seen.add(unquote(cell.document))
                doc = ws.text_documents.get(unquote(cell.document))
                if cell.kind != lsp.NotebookCellKind.Code or doc is None:
                    continue
                if doc.language_id not in (None, "python"):
                    continue
                cells.append(Cell(cell.document, doc.version, doc.source))
            path, on_disk = _path(nb.uri)
            out.append(notebook_buffer(nb.uri, path, nb.version, cells, on_disk))
        for key, doc in ws.text_documents.items():
            if key in cells_seen:
                continue
            path, on_disk = _path(doc.uri)
            if is_checked(path, doc.language_id):
                out.append(text_buffer(doc.uri, path, doc.version, doc.source, on_disk))
        return out

    def owner(self, buffers: Sequence[Buffer], uri: str) -> Optional[Buffer]:
        """The open file a document belongs to (a cell: its notebook)."""
        key = unquote(uri)
        for b in buffers:
            if unquote(b.uri) == key or any(unquote(u) == key for u in b.uris()):
                return b
        return None

    # --- checking and publishing ------------------------------------------------------------
    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Check the open file ``uri`` (and its project's other open files) after ``delay``;
        a later call for the same file before then replaces this one (debouncing)."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.ensure_future(self._check_later(uri, delay))

    def schedule_all(self, delay: float = 0.0) -> None:
        for b in self.buffers():
            self.schedule(b.uri, delay)

    async def _check_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        await self.check(uri)

    async def check(self, uri: str) -> Optional[Outcome]:
        snapshot = self.buffers()
        if not any(b.uri == uri for b in snapshot):
            return None
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self.worker, self._checked, snapshot, uri)
        self.publish(outcome, uri)
        return outcome

    def _checked(self, snapshot: List[Buffer], uri: str) -> Outcome:
        """Runs in the worker thread."""
        try:
            return self.checker.check(snapshot, uri)
        except InternalError as exc:
            return Outcome(None, error=f"{exc}. This is a bug in precision-lint; please report it.")
        except Exception as exc:  # never let a bug of ours take the server down
            log.exception("check failed")
            return Outcome(None, error=f"internal error: {type(exc).__name__}: {exc}. Please report it.")

    def publish(self, outcome: Outcome, trigger: str) -> None:
        open_now = {b.uri: b for b in self.buffers()}
        if outcome.error is not None:
            if outcome.error not in self.errors_shown:
                self.errors_shown.add(outcome.error)
                self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"precision-lint: {outcome.error}"))
            if trigger in open_now:
                for doc_uri in open_now[trigger].uris():
                    self._send(doc_uri, [], None, force=False)
            return
        for uri, checked in outcome.checked.items():
            if uri not in open_now:
                continue  # closed meanwhile
            self.last[uri] = checked
            found = diagnostics(checked, outcome.checked, outcome.sources, self.encoding)
            versions = {c.uri: c.version for c in checked.buffer.cells} if checked.buffer.cells is not None else {uri: checked.buffer.version}
            for doc_uri, items in found.items():
                self._send(doc_uri, items, versions.get(doc_uri), force=uri == trigger)

    def _send(self, uri: str, items: List[lsp.Diagnostic], version: Optional[int], force: bool) -> None:
        if not force and self.published.get(uri) == items:
            return
        self.published[uri] = items
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def forget(self, uris: Sequence[str]) -> None:
        """Clear the diagnostics of documents that were closed."""
        for uri in uris:
            self.pending.pop(uri, None)
            self.last.pop(uri, None)
            if self.published.pop(uri, None) is not None:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # --- settings ------------------------------------------------------------------------------
    def use_settings(self, value, initial: bool = False) -> None:
        """Settings from the editor: keys it sends replace those of ``initializationOptions``
        (an editor that has none for the section answers null or {}: those stay)."""
        if initial:
            self.initial_settings = dict(value) if isinstance(value, dict) else {}
            value = self.initial_settings
        elif isinstance(value, dict):
            value = {**self.initial_settings, **value}
        elif value is None:
            value = self.initial_settings
        try:
            settings = Settings.from_json(value)
        except SettingsError as exc:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"precision-lint settings: {exc}"))
            return
        if settings != self.checker.settings:
            self.worker.submit(setattr, self.checker, "settings", settings)  # in turn with the checks
            self.schedule_all()

    async def pull_settings(self) -> None:
        if not _capability(self.client_capabilities, "workspace", "configuration"):
            return
        try:
            values = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)])
            )
        except Exception as exc:  # a client that cannot answer: keep the settings we have
            log.warning("workspace/configuration failed: %s", exc)
            return
        if values:
            self.use_settings(values[0])

    # --- code actions ------------------------------------------------------------------------------
    async def code_actions(self, params: lsp.CodeActionParams) -> Optional[List[lsp.CodeAction]]:
        snapshot = self.buffers()
        buffer = self.owner(snapshot, params.text_document.uri)
        if buffer is None:
            return None
        only = params.context.only
        checked = self.last.get(buffer.uri)
        if checked is None or checked.buffer != buffer:
            outcome = await self.check(buffer.uri)
            if outcome is None or buffer.uri not in outcome.checked:
                return None
            checked = outcome.checked[buffer.uri]
        actions = Actions(checked, Related({}, {}, self.encoding), self.encoding, self._document_changes())
        out: List[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix.value, only):
            out += actions.at(params.text_document.uri, params.range)
        if wanted(FIX_ALL, only) and actions.has_safe_fixes():
            if self._resolves_edits():
                out.append(actions.fix_all(None))
            else:
                out.append(await self._resolved_fix_all(snapshot, buffer, actions))
        return out

    async def resolve(self, action: lsp.CodeAction) -> lsp.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        snapshot = self.buffers()
        buffer = self.owner(snapshot, str(data.get("uri", "")))
        if action.edit is not None or buffer is None or action.kind != FIX_ALL:
            return action
        checked = Checked(buffer, buffer.source(buffer.path))
        actions = Actions(checked, Related({}, {}, self.encoding), self.encoding, self._document_changes())
        resolved = await self._resolved_fix_all(snapshot, buffer, actions)
        action.edit = resolved.edit
        return action

    async def _resolved_fix_all(self, snapshot, buffer: Buffer, actions: Actions) -> lsp.CodeAction:
        loop = asyncio.get_running_loop()
        try:
            fixed = await loop.run_in_executor(self.worker, self.checker.fix_all, snapshot, buffer.uri)
        except Exception:  # a bug of ours: offer nothing rather than a broken edit
            log.exception("fix-all failed")
            fixed = None
        if fixed is None:
            return _no_edit(actions)
        source, new_text = fixed
        actions.checked = Checked(buffer, source, actions.checked.diagnostics)
        actions.text = source.text or ""
        return actions.fix_all(new_text)

    def _document_changes(self) -> bool:
        return bool(_capability(self.client_capabilities, "workspace", "workspace_edit", "document_changes"))

    def _resolves_edits(self) -> bool:
        support = _capability(self.client_capabilities, "text_document", "code_action", "resolve_support")
        return bool(support is not None and "edit" in (support.properties or []))


def _no_edit(actions: Actions) -> lsp.CodeAction:
    action = actions.fix_all(None)
    action.edit = lsp.WorkspaceEdit(changes={})
    return action


def _capability(caps, *names):
    value = caps
    for name in names:
        value = getattr(value, name, None)
        if value is None:
            return None
    return value


def build() -> PrecisionLintServer:
    server = PrecisionLintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: PrecisionLintServer, params: lsp.InitializeParams) -> None:
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        ls.checker.folders = [p for p, on_disk in (_path(u) for u in folders) if on_disk]
        options = params.initialization_options
        if isinstance(options, dict):  # {"settings": {...}}, {"precision-lint": {...}} (Helix) or the settings
            ls.use_settings(options.get("settings") or options.get(SECTION) or options, initial=True)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: PrecisionLintServer, params: lsp.InitializedParams) -> None:
        if _capability(ls.client_capabilities, "workspace", "did_change_watched_files", "dynamic_registration"):
            watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in ("*.py", "*.ipynb", *CONFIG_FILES)]
            try:
                await ls.client_register_capability_async(
                    lsp.RegistrationParams(
                        registrations=[
                            lsp.Registration(
                                id="precision-lint-watch",
                                method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                            )
                        ]
                    )
                )
            except Exception as exc:
                log.warning("could not watch files: %s", exc)
        await ls.pull_settings()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PrecisionLintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PrecisionLintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PrecisionLintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith(CONFIG_FILES):
            ls.schedule_all()
        else:
            ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PrecisionLintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.forget([params.text_document.uri])
        ls.schedule_all(DEBOUNCE_S)  # the file on disk takes the buffer's place for the others

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_open(ls: PrecisionLintServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_change(ls: PrecisionLintServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells is not None else None
        if structure is not None:
            ls.forget([c.uri for c in structure.did_close or []])
        ls.schedule(params.notebook_document.uri, DEBOUNCE_S)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_save(ls: PrecisionLintServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_close(ls: PrecisionLintServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.forget([params.notebook_document.uri] + [c.uri for c in params.cell_text_documents])
        ls.schedule_all(DEBOUNCE_S)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: PrecisionLintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        ls.schedule_all(DEBOUNCE_S)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: PrecisionLintServer, params: lsp.DidChangeConfigurationParams) -> None:
        pushed = params.settings.get(SECTION) if isinstance(params.settings, dict) else None
        if pushed is not None:
            ls.use_settings(pushed)
        else:
            await ls.pull_settings()

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: PrecisionLintServer, params: lsp.CodeActionParams):
        return await ls.code_actions(params)

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: PrecisionLintServer, params: lsp.CodeAction) -> lsp.CodeAction:
        return await ls.resolve(params)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: PrecisionLintServer, params) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.worker.shutdown(wait=False, cancel_futures=True)

    return server


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="precision-lint server",
        description="A language server (LSP over stdio) for editors: diagnostics, quick fixes, fix-all.",
    )
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    logging.basicConfig(level=args.log_level, stream=sys.stderr, format="precision-lint server: %(levelname)s %(message)s")
    build().start_io()
    return 0
