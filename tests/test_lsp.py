"""``precision-lint server`` end to end: a real LSP client (pygls's) drives the server in a
subprocess over stdio, as an editor does."""
import subprocess
import sys

from lsprotocol import types as lsp

from conftest import REPO, dedent
from cross_file import FIXED, HELPERS, PYPROJECT, TRAIN
from lsp_client import Editor, apply_text_edit, capabilities, run, uri


def project(tmp_path, **files):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    for name, text in {"helpers.py": HELPERS, "train.py": TRAIN, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(dedent(text))
    return root


def everything(doc):
    return lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0))


def test_open_fix_all_and_the_diagnostics_go_away(tmp_path):
    """The issue's scenario: a file with an MP301 and a cross-file MP101 is opened; the
    diagnostics arrive; the fix-all code action is requested and applied; the server then
    publishes an empty list."""
    root = project(tmp_path)

    async def session():
        editor = Editor()
        result = await editor.start(root)
        caps = result.capabilities
        assert "source.fixAll.precision-lint" in caps.code_action_provider.code_action_kinds
        assert caps.notebook_document_sync is not None
        doc = editor.open(root / "train.py")
        await editor.until(lambda: editor.codes(doc) == ["MP101", "MP301"])
        mp101, mp301 = editor.diagnostics[doc]
        # where, what, how bad, and the rule's page
        assert (mp101.range.start.line, mp101.range.start.character) == (5, 59)
        assert (mp101.range.end.line, mp101.range.end.character) == (5, 72)
        assert mp101.severity == lsp.DiagnosticSeverity.Error and mp101.source == "precision-lint"
        assert mp101.code_description.href.endswith("/rules/MP101.md")
        assert "helpers.py (line 5)" in mp101.message
        # the other half of the cross-file finding: the fp16 switch in helpers.py (not open)
        (related,) = mp101.related_information
        assert related.location.uri == uri(root / "helpers.py")
        assert related.location.range.start == lsp.Position(4, 11)
        assert "fp16 loss scaling switched on here" in related.message
        assert (mp301.range.start.line, mp301.range.start.character) == (6, 54)

        actions = await editor.code_actions(doc, everything(doc), only=["source.fixAll"])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.precision-lint"
        editor.apply(fix_all.edit)
        assert editor.texts[doc] == dedent(FIXED)
        await editor.until(lambda: editor.diagnostics[doc] == [], "an empty list after the fix")
        assert editor.publications[-1].version == editor.versions[doc]
        await editor.stop()

    run(session())


def test_quick_fixes_one_per_finding_and_noqa(tmp_path):
    root = project(tmp_path, **{"loop.py": """
        import torch
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(batch)
            loss.backward()
        """})

    async def session():
        editor = Editor()
        await editor.start(root, init_options={"settings": {}})
        doc = editor.open(root / "train.py")
        await editor.until(lambda: editor.codes(doc) == ["MP101", "MP301"])
        mp301 = editor.diagnostics[doc][1]
        actions = await editor.code_actions(doc, mp301.range, only=["quickfix"])
        assert [a.title for a in actions] == [
            "precision-lint (MP301): Rename `tokenizer` to `processing_class`",
            "precision-lint (MP301): Disable for this line",
        ]
        unfiltered = await editor.code_actions(doc, mp301.range)  # no `only`: the fix-all comes too
        assert [a.kind for a in unfiltered] == ["quickfix", "quickfix", "source.fixAll.precision-lint"]
        fix, noqa = actions
        assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
        assert fix.diagnostics[0].code == "MP301"
        (change,) = fix.edit.document_changes
        assert change.text_document.version == editor.versions[doc]
        assert [(e.range.start.line, e.new_text) for e in change.edits] == [
            (6, 'trainer = Trainer(model=model, args=make_args("out"), processing_class=tok)\n')
        ]
        editor.apply(noqa.edit)
        assert editor.texts[doc].splitlines()[6].endswith("tokenizer=tok)  # noqa: MP301")
        await editor.until(lambda: editor.codes(doc) == ["MP101"])
        editor.apply((await editor.code_actions(doc, editor.diagnostics[doc][0].range))[0].edit)
        assert "dtype=torch.float32" in editor.texts[doc]
        await editor.until(lambda: editor.diagnostics[doc] == [])

        # an unsafe fix is offered, labelled, and never preferred; fix-all leaves it alone
        loop_doc = editor.open(root / "loop.py")
        await editor.until(lambda: editor.codes(loop_doc) == ["MP201"])
        unsafe = (await editor.code_actions(loop_doc, editor.diagnostics[loop_doc][0].range))[0]
        assert unsafe.title.endswith("(unsafe fix: may change results)") and not unsafe.is_preferred
        assert await editor.code_actions(loop_doc, everything(loop_doc), only=["source.fixAll"]) == []
        await editor.stop()

    run(session())


def test_a_change_refreshes_the_open_files_joined_with_it(tmp_path):
    """Two open files of one project: editing helpers.py (unsaved) so that it no longer turns
    on fp16 loss scaling clears the MP101 shown in train.py, and undoing it brings it back."""
    root = project(tmp_path)

    async def session():
        editor = Editor()
        await editor.start(root)
        train = editor.open(root / "train.py")
        helpers = editor.open(root / "helpers.py")
        await editor.until(lambda: editor.codes(train) == ["MP101", "MP301"] and editor.codes(helpers) == [])
        editor.replace(helpers, dedent(HELPERS).replace("fp16=True", "fp16=False"))
        await editor.until(lambda: editor.codes(train) == ["MP301"], "MP101 gone from the other open file")
        editor.replace(helpers, dedent(HELPERS))
        await editor.until(lambda: editor.codes(train) == ["MP101", "MP301"], "MP101 back")
        # a buffer that was never saved joins its project too: the MP101 is found in the buffer
        new = root / "train2.py"
        doc = editor.open(new, dedent(TRAIN))
        await editor.until(lambda: editor.codes(doc) == ["MP101", "MP301"])
        assert not new.exists()
        # an untitled buffer has no project: it is checked on its own
        editor.versions["untitled:Untitled-1"], editor.texts["untitled:Untitled-1"] = 1, dedent(TRAIN)
        editor.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem("untitled:Untitled-1", "python", 1, dedent(TRAIN)))
        )
        await editor.until(lambda: editor.codes("untitled:Untitled-1") == ["MP301"])
        await editor.stop()

    run(session())


def test_settings_select_ignore_and_config_from_pyproject(tmp_path):
    root = project(tmp_path, **{"generated/train.py": TRAIN})
    (root / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["MP101"]\nexclude = ["generated/*"]\n')

    async def session():
        editor = Editor(settings={})  # the editor has no settings of its own: initializationOptions hold
        await editor.start(root, init_options={"precision-lint": {"ignore": ["MP301"]}})  # as Helix sends them
        doc = editor.open(root / "train.py")
        await editor.until(lambda: editor.codes(doc) == [], "both ignored: one by pyproject, one by the settings")
        editor.settings = {"select": ["MP1", "MP3"], "ignore": []}  # keys sent replace the initial ones
        editor.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await editor.until(lambda: editor.codes(doc) == ["MP301"], "the setting's select; pyproject's ignore holds")
        excluded = editor.open(root / "generated" / "train.py")  # pyproject's exclude, as --force-exclude
        await editor.until(lambda: editor.codes(excluded) == [] and editor.codes(doc) == ["MP301"])
        editor.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"precision-lint": {"select": ["MP2"]}})
        )
        await editor.until(lambda: editor.codes(doc) == [], "settings pushed by the client")
        editor.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"precision-lint": {"select": ["XYZ"]}})
        )
        await editor.until(lambda: any("not a rule code" in m for m in editor.messages), "a settings error")
        # a broken pyproject: said once, nothing is checked
        (root / "pyproject.toml").write_text("[tool.precision-lint]\nselct = 1\n")
        editor.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams([lsp.FileEvent(uri(root / "pyproject.toml"), lsp.FileChangeType.Changed)])
        )
        await editor.until(lambda: any("unknown key(s) selct" in m for m in editor.messages), "the config error")
        assert any(r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in editor.registrations)
        await editor.stop()

    run(session())


def test_fix_all_resolved_lazily(tmp_path):
    root = project(tmp_path)

    async def session():
        editor = Editor()
        await editor.start(root, caps=capabilities(resolve=True, document_changes=False))
        doc = editor.open(root / "train.py")
        await editor.until(lambda: editor.codes(doc) == ["MP101", "MP301"])
        (action,) = await editor.code_actions(doc, everything(doc), only=["source.fixAll.precision-lint"])
        assert action.edit is None  # computed only when the editor picks it
        resolved = await editor.resolve(action)
        assert list(resolved.edit.changes) == [doc]
        editor.apply(resolved.edit)
        assert editor.texts[doc] == dedent(FIXED)
        await editor.until(lambda: editor.diagnostics[doc] == [])
        await editor.stop()

    run(session())


def notebook_cells(root):
    cells = [
        "%pip install -q transformers\nimport torch\nfrom transformers import AutoModelForCausalLM, Trainer",
        "# notes",
        'model = AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.float16)',
        "from helpers import make_args\ntrainer = Trainer(model=model, args=make_args('o'), tokenizer=tok)",
    ]
    kinds = [lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup, lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Code]
    nb_uri = uri(root / "finetune.ipynb")
    docs = [f"vscode-notebook-cell:{(root / 'finetune.ipynb').as_posix()}#cell{i}" for i in range(len(cells))]
    return nb_uri, cells, kinds, docs


def test_notebook_documents(tmp_path):
    root = project(tmp_path)

    async def session():
        editor = Editor()
        await editor.start(root)
        nb_uri, cells, kinds, docs = notebook_cells(root)
        editor.client.notebook_document_did_open(
            lsp.DidOpenNotebookDocumentParams(
                lsp.NotebookDocument(nb_uri, "jupyter-notebook", 1, [lsp.NotebookCell(k, d) for k, d in zip(kinds, docs)]),
                [
                    lsp.TextDocumentItem(d, "markdown" if k == lsp.NotebookCellKind.Markup else "python", 1, c)
                    for d, k, c in zip(docs, kinds, cells)
                ],
            )
        )
        for d, c in zip(docs, cells):
            editor.versions[d], editor.texts[d] = 1, c
        await editor.until(lambda: editor.codes(docs[2]) == ["MP101"] and editor.codes(docs[3]) == ["MP301"])
        assert editor.codes(docs[0]) == [] and docs[1] not in editor.diagnostics  # the markdown cell
        (mp101,) = editor.diagnostics[docs[2]]
        assert mp101.range.start == lsp.Position(0, 59)  # row within the cell
        (mp301,) = editor.diagnostics[docs[3]]
        assert mp301.range.start == lsp.Position(1, 52)
        (fix_all,) = await editor.code_actions(docs[3], everything(docs[3]), only=["source.fixAll"])
        edited = {c.text_document.uri for c in fix_all.edit.document_changes}
        assert edited == {docs[2], docs[3]}  # only the cells that change; the %pip line is kept
        for change in fix_all.edit.document_changes:
            for e in sorted(change.edits, key=lambda e: e.range.start.line, reverse=True):
                editor.texts[change.text_document.uri] = apply_text_edit(editor.texts[change.text_document.uri], e)
        assert editor.texts[docs[3]].endswith("processing_class=tok)")
        assert "torch.float32" in editor.texts[docs[2]]
        editor.client.notebook_document_did_change(
            lsp.DidChangeNotebookDocumentParams(
                lsp.VersionedNotebookDocumentIdentifier(2, nb_uri),
                lsp.NotebookDocumentChangeEvent(
                    cells=lsp.NotebookDocumentCellChanges(
                        text_content=[
                            lsp.NotebookDocumentCellContentChanges(
                                lsp.VersionedTextDocumentIdentifier(2, d),
                                [lsp.TextDocumentContentChangeWholeDocument(editor.texts[d])],
                            )
                            for d in (docs[2], docs[3])
                        ]
                    )
                ),
            )
        )
        await editor.until(lambda: editor.codes(docs[2]) == [] and editor.codes(docs[3]) == [])
        editor.client.notebook_document_did_close(
            lsp.DidCloseNotebookDocumentParams(lsp.NotebookDocumentIdentifier(nb_uri), [lsp.TextDocumentIdentifier(d) for d in docs])
        )
        await editor.stop()

    run(session())


def test_the_linter_does_not_import_pygls_and_server_says_what_it_needs():
    probe = "import sys, precision_lint.cli, precision_lint.engine; print('pygls' in sys.modules or 'lsprotocol' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "precision_lint", "server", "--help"], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert helped.returncode == 0 and "language server" in helped.stdout
    blocked = subprocess.run(  # pygls missing: a clear message, exit 2
        [sys.executable, "-c", "import sys; sys.modules['pygls'] = None; from precision_lint.cli import main; sys.exit(main(['server']))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert blocked.returncode == 2 and "pip install 'precision-lint[lsp]'" in blocked.stderr


def test_a_writefile_cell_is_checked_and_fixed_in_place(tmp_path):
    """A `%%writefile train.py` cell is the module it writes: its finding is published to that
    cell (rows within it) and fixAll edits that cell, not a file train.py."""
    root = project(tmp_path)
    on_disk = (root / "train.py").read_bytes()  # the project's own train.py: another file
    cells = [
        "%%writefile train.py\nimport torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2', dtype=torch.float16)\n"
        "args = TrainingArguments(output_dir='out', fp16=True)\nTrainer(model=model, args=args).train()",
        "!python train.py",
    ]
    nb_uri = uri(root / "kaggle.ipynb")
    docs = [f"vscode-notebook-cell:{(root / 'kaggle.ipynb').as_posix()}#cell{i}" for i in range(len(cells))]

    async def session():
        editor = Editor()
        await editor.start(root)
        editor.client.notebook_document_did_open(
            lsp.DidOpenNotebookDocumentParams(
                lsp.NotebookDocument(nb_uri, "jupyter-notebook", 1, [lsp.NotebookCell(lsp.NotebookCellKind.Code, d) for d in docs]),
                [lsp.TextDocumentItem(d, "python", 1, c) for d, c in zip(docs, cells)],
            )
        )
        for d, c in zip(docs, cells):
            editor.versions[d], editor.texts[d] = 1, c
        await editor.until(lambda: editor.codes(docs[0]) == ["MP101"])
        (mp101,) = editor.diagnostics[docs[0]]
        assert mp101.range.start == lsp.Position(3, 59)  # 0-based: the body's line 3 is the cell's 4th line
        assert [r.location.range.start for r in mp101.related_information] == [lsp.Position(4, 7)]
        (fix_all,) = await editor.code_actions(docs[0], everything(docs[0]), only=["source.fixAll"])
        assert {c.text_document.uri for c in fix_all.edit.document_changes} == {docs[0]}
        for change in fix_all.edit.document_changes:
            for e in sorted(change.edits, key=lambda e: e.range.start.line, reverse=True):
                editor.texts[docs[0]] = apply_text_edit(editor.texts[docs[0]], e)
        assert editor.texts[docs[0]] == cells[0].replace("torch.float16", "torch.float32")
        await editor.stop()

    run(session())
    assert (root / "train.py").read_bytes() == on_disk
