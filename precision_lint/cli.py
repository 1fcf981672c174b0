"""The ``precision-lint`` command, with ruff's conventions.

Exit codes: 0 no findings remain, 1 findings remain (or ``--diff`` has changes),
2 usage, configuration or internal error (also an internal error on one file, MP003: the other
files are checked and reported, and the run still exits 2).
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, List, Optional, Sequence

from ._version import __version__
from .reporters import FORMATS

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Engine

# `--version`, `--help` and the usage errors import nothing more: LibCST, the rules and the
# engine (about a second and a half) are imported by the commands that run them.

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
SUBCOMMANDS = ("check", "rule", "verify", "server")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 2, like ruff
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _codes(value: str) -> List[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def check_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="precision-lint check", description="Check (and fix) mixed-precision misconfigurations.")
    p.add_argument("paths", nargs="*", default=None, help="files or folders (default: .)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix/--diff)")
    p.add_argument("--diff", action="store_true", help="print the diff of fixes; write nothing; exit 1 if any")
    p.add_argument("--select", type=_codes, default=None, help="comma-separated codes or prefixes to enable")
    p.add_argument("--ignore", type=_codes, default=[], help="comma-separated codes or prefixes to disable")
    p.add_argument("--extend-select", type=_codes, default=[], help="codes to enable on top of the config")
    p.add_argument("--output-format", choices=FORMATS, default=None, help="how to report (default: full)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    p.add_argument("--statistics", action="store_true", help="print counts per rule code")
    p.add_argument(
        "--show-fixes",
        action="store_true",
        help="list the fixes applied (with --fix) or available, and those hidden behind --unsafe-fixes",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        default=None,
        help="read the source from stdin and check it as the file PATH of its project; with --fix, "
        "print the fixed source to stdout (findings go to stderr)",
    )
    p.add_argument(
        "--add-noqa",
        action="store_true",
        help="add `# noqa: CODE` to the line of every current finding (to adopt on an existing codebase)",
    )
    p.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply `exclude` to files named on the command line too (for pre-commit and editors)",
    )
    p.add_argument("--config", default=None, help="a pyproject.toml or precision-lint.toml to use")
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    p.add_argument("-j", "--jobs", type=int, default=None, help="worker processes for parsing (default: cores)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the facts cache")
    p.add_argument(
        "--cache-dir",
        default=None,
        help="where per-file facts are cached (default: $PRECISION_LINT_CACHE_DIR, else "
        ".precision-lint-cache next to the configuration, else in the current folder)",
    )
    p.add_argument("--version", action="version", version=f"precision-lint {__version__}")
    return p


def main_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="precision-lint",
        description="A linter and codemod for mixed-precision training code.",
        epilog="Commands: check [PATH ...] (default), rule CODE | rule --all, verify [FIXTURE ...], "
        "verify SCRIPT.py|NOTEBOOK.ipynb [-- SCRIPT ARGS] (run your script before and after --fix), "
        "server (the language server for editors). "
        "`precision-lint check --help` lists the check options.",
    )
    p.add_argument("--version", action="version", version=f"precision-lint {__version__}")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line; ``argv``: the arguments of an in-process caller (a test, a tool),
    which lives on after the run; None: the process's own (``sys.argv``), which ends with it."""
    one_shot = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "rule":
            return rule_command(argv[1:])
        if argv and argv[0] == "server":
            return server_command(argv[1:])
        if argv and argv[0] == "verify":
            from .verify import main as verify_main

            return verify_main(argv[1:])
        if argv and argv[0] == "check":
            argv = argv[1:]
        elif argv and argv[0] in ("-h", "--help"):
            main_parser().print_help()
            print()
            check_parser().print_help()
            return EXIT_OK
        return check_command(argv, one_shot)
    except BrokenPipeError:  # `precision-lint ... | head`
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def server_command(argv: Sequence[str]) -> int:
    """The language server: pygls is imported only here, so the linter itself stays light."""
    from importlib.util import find_spec

    if find_spec("pygls") is None:
        print(
            "precision-lint: the language server needs pygls: pip install 'precision-lint[lsp]'",
            file=sys.stderr,
        )
        return EXIT_ERROR
    from .lsp.server import main as server_main

    return server_main(argv)


def rule_command(argv: Sequence[str]) -> int:
    p = _Parser(prog="precision-lint rule", description="Show a rule's page, or list every rule.")
    p.add_argument("code", nargs="?")
    p.add_argument("--all", action="store_true", help="list every rule")
    args = p.parse_args(argv)
    from .rule_docs import page_text
    from .rules import all_rules

    rules = all_rules()
    if args.all or not args.code:
        print(f"{'code':<7} {'name':<45} {'fix':<10} safety")
        for code, rule in rules.items():
            safety = rule.fix_applicability if rule.fix_availability != "never" else "-"
            print(f"{code:<7} {rule.name:<45} {rule.fix_availability:<10} {safety}")
        return EXIT_OK
    code = args.code.upper()
    if code not in rules:
        print(f"precision-lint: unknown rule code {args.code!r} (see `precision-lint rule --all`)", file=sys.stderr)
        return EXIT_ERROR
    text = page_text(code)
    if text is None:
        rule = rules[code]
        text = f"# {code} {rule.name}\n\n{rule.summary}\n"
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


class _Shown(Mapping):
    """path → how it is shown (:func:`_display`) for the paths of a run, each worked out when a
    report shows it: a check of thousands of files shows a few (a run answered from the caches
    spent a tenth of its time making every path relative)."""

    def __init__(self, paths) -> None:
        self._paths = paths
        self._shown: dict = {}

    def __getitem__(self, path: str) -> str:
        if path not in self._paths:
            raise KeyError(path)
        found = self._shown.get(path)
        if found is None:
            found = self._shown[path] = _display(path)
        return found

    def __iter__(self):
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def check_command(argv: Sequence[str], one_shot: bool = False) -> int:
    parser = check_parser()
    args = parser.parse_args(argv)
    from .workspace.cache import default_cache_dir
    from .workspace.config import ConfigError, load
    from .engine import Engine, InternalError
    from .workspace.notebook import NotebookError
    from .reporters import Report, render
    from .reporters.counts import show_fixes, statistics
    from .reporters.progress import ProgressBar
    from .reporters.style import want_color
    from .workspace.sources import Texts
    from .rules import all_rules, selected_codes, unknown_selectors

    stdin = args.stdin_filename
    if stdin is not None and args.paths == ["-"]:
        args.paths = []  # `--stdin-filename train.py -`: ruff's form, what editors send
    if stdin is not None and args.paths:
        parser.error("--stdin-filename checks the text on stdin: name no paths with it (or only `-`)")
    if stdin is None and "-" in (args.paths or []):
        parser.error("`-` reads the source from stdin: give --stdin-filename PATH, the file it is")
    if args.add_noqa and (args.fix or args.diff or stdin is not None):
        parser.error("--add-noqa cannot be combined with --fix, --diff or --stdin-filename")
    for flag, given in (("--select", args.select or []), ("--ignore", args.ignore), ("--extend-select", args.extend_select)):
        unknown = unknown_selectors(given)
        if unknown:  # as ruff: a typo is an error, never a silent "All checks passed!"
            parser.error(f"{flag}: unknown rule code(s) {', '.join(unknown)} (see `precision-lint rule --all`)")
    paths = args.paths or ["."]
    try:
        config = load(args.config, [os.path.dirname(os.path.abspath(stdin))] if stdin is not None else paths)
        codes = selected_codes(config, args.select, args.ignore, args.extend_select)
        progress = None if args.quiet else ProgressBar(sys.stderr)
        cache_dir = None if args.no_cache else (args.cache_dir or default_cache_dir(config.root))
        engine = Engine(config, codes, jobs=args.jobs, progress=progress, cache_dir=cache_dir, one_shot=one_shot)
    except ConfigError as exc:
        print(f"precision-lint: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for p in paths if stdin is None else ():
        if not os.path.exists(p):
            print(f"precision-lint: error: {p}: no such file or directory", file=sys.stderr)
            return EXIT_ERROR
    if args.force_exclude and (args.paths or stdin is not None):
        from .workspace.discovery import is_excluded

        if stdin is not None and is_excluded(stdin, config.exclude, config.root):
            if args.fix:  # an editor replaces its buffer with what comes back: the text as it was
                sys.stdout.buffer.write(sys.stdin.buffer.read())
            return EXIT_OK
        paths = [p for p in paths if not (os.path.isfile(p) and is_excluded(p, config.exclude, config.root))]
        if not paths:  # every file named was excluded: nothing to check
            return EXIT_OK
    fixing = args.fix or args.diff
    unwritten: List[str] = []
    try:
        if stdin is not None:
            result = _run_stdin(engine, stdin, fixing, args.unsafe_fixes)
        else:
            result = engine.run_paths(paths, fix=fixing, unsafe=args.unsafe_fixes)
    except InternalError as exc:
        if progress is not None:
            progress.close()
        print(f"precision-lint: {exc}\nThis is a bug in precision-lint; please report it.", file=sys.stderr)
        return EXIT_ERROR
    if progress is not None:
        progress.close()
    stopped = sorted({d.path for d in result.diagnostics if d.code == "MP003"})

    def done(code: int) -> int:
        """The exit code; 2 where an internal error stopped a file (MP003), whatever else: a file
        that was not checked is never a pass (ruff exits 2 on an internal error)."""
        if not stopped:
            return code
        n = len(stopped)
        print(
            f"precision-lint: error: an internal error stopped the analysis of {n} file{'s' * (n != 1)} "
            f"({', '.join(_display(p) for p in stopped[:3])}{', …' if n > 3 else ''}; see MP003): "
            "This is a bug in precision-lint; please report it.",
            file=sys.stderr,
        )
        return EXIT_ERROR

    # what a check run tried only to tell which findings are fixable is not news: the rejected
    # fixes are shown without `[*]`; where fixes were asked for, each file's refusal once
    for path, why in dict.fromkeys(result.rejected) if fixing else ():
        if result.sources[path].notebook is not None:
            print(f"precision-lint: warning: fixes for {_display(path)} were not applied: {why}", file=sys.stderr)
            continue
        print(f"precision-lint: warning: fixes for {_display(path)} were not applied: the result would not parse ({why})", file=sys.stderr)

    if args.add_noqa:
        from .fixes.noqa import write_noqa

        write_noqa(result, _display)
        return done(EXIT_OK)

    changed = result.changed
    if args.diff:
        import difflib

        for path, (old, new) in sorted(changed.items()):
            shown = _display(path)
            for label, before, after in _diff_parts(result.sources[path], shown, old, new):
                sys.stdout.writelines(
                    difflib.unified_diff(
                        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{label}", f"b/{label}"
                    )
                )
        if not args.quiet:
            n = result.errors_fixed()
            print(f"Would fix {n} error{'s' * (n != 1)} in {len(changed)} file{'s' * (len(changed) != 1)}.", file=sys.stderr)
        return done(EXIT_FINDINGS if changed else EXIT_OK)

    if args.fix and stdin is not None:  # the fixed source to stdout, findings to stderr (as ruff)
        src = result.sources[stdin]
        try:
            data = src.encode(result.fixed_texts[stdin]) if stdin in changed else src.content()
        except NotebookError:
            data = src.content()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    elif args.fix:
        unwritten = _write_fixes(result, changed, config)
        if unwritten:
            _unfix(engine, result, unwritten)
        _note_stale_comments(result, {p: c for p, c in changed.items() if p not in unwritten})

    texts = dict(result.fixed_texts) if args.fix else Texts(result.sources.values())
    texts.update(_config_texts(result.diagnostics, texts))
    fmt = args.output_format or os.environ.get("PRECISION_LINT_OUTPUT_FORMAT") or "full"
    if fmt not in FORMATS:
        print(f"precision-lint: error: unknown output format {fmt!r}", file=sys.stderr)
        return EXIT_ERROR
    report = Report(
        diagnostics=result.diagnostics,
        texts=texts,
        fixes_applied=result.errors_fixed() if args.fix else 0,
        unsafe_held_back=result.unsafe_held_back,
        fix_mode=args.fix,
        color=want_color(sys.stdout),
        rules={c: all_rules()[c] for c in engine.codes},
        display_paths=_Shown(result.sources),
        notebooks={p for p, s in result.sources.items() if s.notebook is not None and not s.notebook.keeps_lines},
        display_texts=_notebook_display_texts(result, texts),
    )
    out = sys.stderr if args.fix and stdin is not None else sys.stdout
    if args.statistics:
        out.write(statistics(report, args.unsafe_fixes))
    else:
        text = render(fmt, report)
        if args.quiet and fmt in ("full", "concise"):
            text = "\n".join(l for l in text.splitlines() if not _is_summary(l)) + "\n"
            text = text if text.strip() else ""
        out.write(text)
    if args.show_fixes:
        shown = show_fixes(report, result.fixed_codes if args.fix else {}, args.unsafe_fixes)
        (out if fmt in ("full", "concise") or args.statistics else sys.stderr).write(shown)
    if args.fix and stdin is None and unwritten:
        return done(EXIT_ERROR)  # a file we meant to fix is as it was: never a quiet success
    if args.exit_zero:
        return done(EXIT_OK)
    return done(EXIT_FINDINGS if result.diagnostics else EXIT_OK)


def _config_texts(diagnostics, texts) -> dict:
    """The texts of the configuration files and launch scripts findings are in (a JSON/YAML
    key that a script reads, an option a shell launcher passes it: MP302), for the excerpts:
    they are no source of the run."""
    from .workspace.configfiles import is_config_file
    from .workspace.shipped import is_launch_document

    out = {}
    side = {d.path for d in diagnostics if d.path not in texts and (is_config_file(d.path) or is_launch_document(d.path))}
    for path in sorted(side):
        try:
            with open(path, encoding="utf-8") as fh:
                out[path] = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
    return out


def _write_fixes(result, changed, config) -> List[str]:
    """Write each fixed file (through links, keeping permissions); the paths left unwritten, each
    with a one-line message. The other files of the run are still written."""
    from .workspace.notebook import NotebookError
    from .workspace.sources import WriteRefused, write_over

    root = os.path.realpath(str(config.root)) if config.root is not None else os.path.realpath(os.getcwd())
    unwritten = []
    for path, (_old, new) in sorted(changed.items()):
        src = result.sources[path]
        try:
            data = src.encode(new)
        except (NotebookError, UnicodeEncodeError) as exc:  # never write a notebook we cannot map
            print(f"precision-lint: error: fixes for {_display(path)} were not written: {exc}", file=sys.stderr)
            unwritten.append(path)
            continue
        if data == src.content():
            continue
        try:
            target = write_over(src, data)
        except WriteRefused as exc:
            print(f"precision-lint: error: fixes for {_display(path)} were not written: {exc}", file=sys.stderr)
            unwritten.append(path)
            continue
        if os.path.realpath(path) != os.path.abspath(path) and os.path.commonpath([root, target]) != root:
            print(
                f"precision-lint: note: {_display(path)} links to {target}, outside the project ({root}); "
                "the fixes were written there",
                file=sys.stderr,
            )
    return unwritten


def _note_stale_comments(result, changed) -> None:
    """Point at comments next to fixed lines that still speak of the precision the fix removed
    (``# load in fp16 to save memory``): a fix never rewrites comments."""
    from .workspace.notebook import boundary_lines, cell_position
    from .fixes.stale import stale_comments

    for path, (old, new) in sorted(changed.items()):
        nb = result.sources[path].notebook
        notebook = nb is not None and not nb.keeps_lines  # a Databricks source notebook keeps the file's lines
        bounds = boundary_lines(new) if notebook else []
        for line, comment in stale_comments(old, new):
            where = "{}:cell {}:{}".format(_display(path), *cell_position(bounds, line)) if notebook else f"{_display(path)}:{line}"
            print(f"precision-lint: note: {where}: this comment may be stale after the fix: {comment}", file=sys.stderr)


def _unfix(engine: "Engine", result, paths: Sequence[str]) -> None:
    """Report the files whose fixes were not written as they are on disk: their findings as
    they were, nothing counted as fixed."""
    before = engine.run_sources(list(result.sources.values()), only=set(paths))
    unwritten = set(paths)
    result.diagnostics = sorted(
        [d for d in result.diagnostics if d.path not in unwritten] + before.diagnostics, key=lambda d: d.sort_key()
    )
    for path in paths:
        result.fixed_texts[path] = result.sources[path].text
        result.fixes_applied.pop(path, None)
        result.fixed_codes.pop(path, None)


def _notebook_display_texts(result, texts) -> dict:
    """For excerpts: a notebook's joined text with its IPython lines shown as written."""
    from .workspace.notebook import NotebookError, join

    out = {}
    for path, src in result.sources.items():
        if src.notebook is not None and path in texts:
            try:
                if src.notebook.keeps_lines:
                    out[path] = src.notebook.file_text(texts[path])
                else:
                    out[path] = join(src.notebook.cell_sources(texts[path]))
            except NotebookError:
                pass
    return out


def _diff_parts(src, shown: str, old: str, new: str):
    """(label, before, after) to diff: the file, or each changed cell of a notebook."""
    from .workspace.notebook import NotebookError

    if src.notebook is None:
        return [(shown, old, new)]
    if src.notebook.keeps_lines:  # a Databricks source notebook: the file, as written
        try:
            return [(shown, src.notebook.file_text(old), src.notebook.file_text(new))]
        except NotebookError:
            return [(shown, old, new)]
    try:
        after = src.notebook.cell_sources(new)
    except NotebookError:
        return [(shown, old, new)]
    # cells rarely end with a newline: end both sides with one so the hunk stays readable
    return [
        (f"{shown}:cell {cell.number}", _terminated(cell.source), _terminated(text))
        for cell, text in zip(src.notebook.cells, after)
        if text != cell.source
    ]


def _terminated(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _is_summary(line: str) -> bool:
    return line.startswith(("Found ", "All checks passed", "[*] ", "No fixes available")) or "hidden fix" in line


def _run_stdin(engine: "Engine", path: str, fix: bool, unsafe: bool):
    """The text on stdin checked (and fixed) as the file ``path``, joined with its project on disk."""
    from .workspace.discovery import project_root
    from .workspace.sources import SourceFile

    src = SourceFile.from_bytes(path, sys.stdin.buffer.read(), unsaved=True)
    if engine.config.root is None:  # no configuration: what the file joins when named alone
        return engine.run_piped(src, fix=fix, unsafe=unsafe)
    root = _display(project_root(path, engine.config.root))  # relative: messages name files as a run of `.` would
    return engine.run_buffers([src], root, fix=fix, unsafe=unsafe)
