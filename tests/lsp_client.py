"""A real LSP client for the tests: pygls's ``LanguageClient`` talking to
``python -m precision_lint server`` over the subprocess's stdin/stdout, recording what the
server publishes and answering its requests as an editor would."""
import asyncio
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from conftest import REPO

TIMEOUT_S = 90  # the suite may share two cores with other work


def uri(path) -> str:
    return Path(path).resolve().as_uri()


def capabilities(notebooks=True, resolve=False, document_changes=True) -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
        workspace=lsp.WorkspaceClientCapabilities(
            configuration=True,
            workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=document_changes),
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        ),
        text_document=lsp.TextDocumentClientCapabilities(
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                related_information=True, code_description_support=True, data_support=True, version_support=True
            ),
            code_action=lsp.CodeActionClientCapabilities(
                data_support=True,
                resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]) if resolve else None,
                code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                    code_action_kind=lsp.ClientCodeActionKindOptions(value_set=["quickfix", "source.fixAll"])
                ),
            ),
        ),
        notebook_document=lsp.NotebookDocumentClientCapabilities(
            synchronization=lsp.NotebookDocumentSyncClientCapabilities()
        )
        if notebooks
        else None,
    )


class Editor:
    """An editor session: open documents, the diagnostics it was sent, its settings."""

    def __init__(self, settings: Optional[dict] = None) -> None:
        self.client = LanguageClient("precision-lint-tests", "1")
        self.settings = settings
        self.diagnostics: Dict[str, List[lsp.Diagnostic]] = {}
        self.publications: List[lsp.PublishDiagnosticsParams] = []
        self.messages: List[str] = []
        self.registrations: List[lsp.Registration] = []
        self.versions: Dict[str, int] = {}
        self.texts: Dict[str, str] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: lsp.PublishDiagnosticsParams):
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.publications.append(params)

        @self.client.feature(lsp.WORKSPACE_CONFIGURATION)
        def _configuration(params: lsp.ConfigurationParams):
            return [self.settings for _ in params.items]

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def _message(params: lsp.ShowMessageParams):
            self.messages.append(params.message)

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def _log(params: lsp.LogMessageParams):
            pass

        @self.client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def _register(params: lsp.RegistrationParams):
            self.registrations.extend(params.registrations)

    async def start(self, root: Path, caps: Optional[lsp.ClientCapabilities] = None, init_options=None, env=None):
        """``env``: more of the server's environment (it wins over the defaults here)."""
        env = {**os.environ, "PYTHONPATH": str(REPO), "PRECISION_LINT_CACHE_DIR": str(root / ".cache-lsp"), **(env or {})}
        await self.client.start_io(sys.executable, "-m", "precision_lint", "server", cwd=str(root.parent), env=env)
        result = await asyncio.wait_for(
            self.client.initialize_async(
                lsp.InitializeParams(
                    capabilities=caps or capabilities(),
                    process_id=os.getpid(),
                    root_uri=uri(root),
                    workspace_folders=[lsp.WorkspaceFolder(uri(root), root.name)],
                    initialization_options=init_options,
                )
            ),
            TIMEOUT_S,
        )
        self.client.initialized(lsp.InitializedParams())
        return result

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT_S)
            self.client.exit(None)
        finally:
            await asyncio.wait_for(self.client.stop(), TIMEOUT_S)

    # --- documents --------------------------------------------------------------------------
    def open(self, path: Path, text: Optional[str] = None) -> str:
        doc = uri(path)
        text = path.read_text() if text is None else text
        self.versions[doc] = 1
        self.texts[doc] = text
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(doc, "python", 1, text))
        )
        return doc

    def replace(self, doc: str, text: str) -> None:
        """The user edits the buffer (sent as a full-text change)."""
        self.versions[doc] += 1
        self.texts[doc] = text
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(self.versions[doc], doc),
                [lsp.TextDocumentContentChangeWholeDocument(text)],
            )
        )

    def apply(self, edit: lsp.WorkspaceEdit) -> None:
        """Apply a workspace edit as an editor does, then tell the server (incremental changes)."""
        changes = {}
        for doc_edit in edit.document_changes or []:
            assert doc_edit.text_document.version in (None, self.versions[doc_edit.text_document.uri])
            changes[doc_edit.text_document.uri] = doc_edit.edits
        for doc, edits in (edit.changes or {}).items():
            changes[doc] = edits
        for doc, edits in changes.items():
            # sent in reverse document order, so each range still refers to the text it was made for
            ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
            for e in ordered:
                self.texts[doc] = apply_text_edit(self.texts[doc], e)
            self.versions[doc] += 1
            self.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(self.versions[doc], doc),
                    [lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered],
                )
            )

    async def code_actions(self, doc: str, rng: lsp.Range, only=None) -> List[lsp.CodeAction]:
        params = lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(doc), rng, lsp.CodeActionContext(diagnostics=self.diagnostics.get(doc, []), only=only)
        )
        return list(await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT_S) or [])

    async def resolve(self, action: lsp.CodeAction) -> lsp.CodeAction:
        return await asyncio.wait_for(self.client.code_action_resolve_async(action), TIMEOUT_S)

    async def until(self, predicate, what: str = "diagnostics"):
        """Wait until ``predicate()`` holds (what the server publishes arrives asynchronously)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT_S
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; got {self.diagnostics!r}; messages {self.messages!r}")
            await asyncio.sleep(0.05)

    def codes(self, doc: str) -> Optional[List[str]]:
        found = self.diagnostics.get(doc)
        return None if found is None else [d.code for d in found]


def apply_text_edit(text: str, edit: lsp.TextEdit) -> str:
    """Apply one edit with UTF-16 positions, as an editor does."""
    lines = text.splitlines(keepends=True) or [""]

    def offset(pos: lsp.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        before = sum(len(l) for l in lines[: pos.line])
        line = lines[pos.line]
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character or ch in "\r\n":
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line)

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


def run(coro):
    return asyncio.run(coro)
