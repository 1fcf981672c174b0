"""``precision-lint verify``: prove each fix by running it.

Each fixture under ``fixtures/<CODE>/`` is a small training script that reproduces a real
mixed-precision failure. ``verify`` runs the original and checks that it fails as its
header declares, applies the real ``precision-lint check --fix`` to a copy, checks that
the rule is no longer reported, and runs the fixed copy to completion with finite
losses. See ``fixtures/README.md`` for the fixture format.

``precision-lint verify train.py [-- ARGS]`` does the same for an ordinary training script
(no header, no special prints): the original and the ``--fix``ed copy each run for a few
optimizer steps under ``probe.py``, and the report gives each run's error or losses and
the precision plan in force.

Modules: ``fixture`` (header parsing, discovery), ``launch`` (runs one script and records
how it ended; executed by path), ``probe`` (watches an ordinary script from inside: steps,
losses, plan; loaded by ``launch``), ``runner`` (subprocess + progress parsing),
``linter`` (the CLI in a subprocess), ``verify`` (the per-fixture procedure), ``script``
(the per-script procedure), ``report`` / ``script_report`` (table, text and JSON).
Nothing here imports the rest of ``precision_lint``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Optional

from .fixture import FixtureError, discover, has_header
from .linter import PACKAGE_PARENT, Linter
from .report import table, to_json
from .script import ScriptError, ScriptVerifier
from .script_report import text as script_text
from .script_report import to_json as script_json
from .verify import Verifier, cuda_available, plan

DEFAULT_FIXTURES = PACKAGE_PARENT / "fixtures"

__all__ = ["main", "DEFAULT_FIXTURES"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision-lint verify",
        description="Run fixtures before and after `precision-lint check --fix` and report "
                    "whether each fix turns the declared failure into a finite training run.",
        epilog="On your own training script or notebook (no header needed): "
               "`precision-lint verify train.py [--steps N] [-- SCRIPT ARGS]`; "
               "`precision-lint verify train.py --help` lists its options.",
    )
    parser.add_argument("fixtures", nargs="*", metavar="FIXTURES",
                        help=f"fixture files or folders (default: {DEFAULT_FIXTURES})")
    parser.add_argument("--output-format", choices=("table", "json"), default="table")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help="limit for each run of a fixture script (default: 300)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: CUDA when present, else CPU (default); cpu: never use CUDA; "
                             "cuda: require CUDA")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch copies (original, stages, fixed) and their logs")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="fixture rows to verify in parallel (default: 1)")
    return parser


def script_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision-lint verify SCRIPT",
        description="Run an ordinary training script for a few optimizer steps before and after "
                    "`precision-lint check --fix` (copies in a private folder; your files are "
                    "only read) and report each run's error or losses and the precision plan "
                    "in force. Arguments after `--` go to the script.",
    )
    parser.add_argument("script", metavar="SCRIPT", help="a training script (.py) or notebook (.ipynb)")
    parser.add_argument("--steps", type=int, default=3, metavar="N",
                        help="optimizer steps each run makes before it is stopped (default: 3)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                        help="limit for each run of the script (default: 600)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: CUDA when present, else CPU (default); cpu: hide CUDA; "
                             "cuda: require CUDA")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies and their logs")
    parser.add_argument("--reference", choices=("fp32",), default=None,
                        help="fp32: run the copy that trained once more with half precision switched "
                             "off (autocast, GradScaler, half casts, fp16/bf16 flags) and report the "
                             "relative difference of the losses")
    parser.add_argument("--tiny", action="store_true",
                        help="from_pretrained reads only the model's config and builds a 2-layer "
                             "model of the same class in code (random weights; labelled in the "
                             "report): exercises the precision plan without the weights")
    return parser


def _is_script(argv: List[str]) -> bool:
    """``verify train.py [OPTIONS]`` (a file without the fixture header), or anything with ``--``."""
    if "--" in argv:
        return True
    scripts = [Path(a) for a in argv if a.endswith((".py", ".ipynb")) and Path(a).is_file()]
    return len(scripts) == 1 and not has_header(scripts[0])


def script_main(argv: List[str]) -> int:
    script_args: List[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, script_args = argv[:at], argv[at + 1:]
    args = script_parser().parse_args(argv)
    if args.steps < 1:
        print("precision-lint verify: --steps must be >= 1", file=sys.stderr)
        return 2
    if importlib.util.find_spec("torch") is None:
        # the runs are watched from inside (probe.py counts optimizer steps with torch): without
        # torch nothing can run, and that is no verdict on the fix
        print(
            "precision-lint verify: running a training script needs torch: "
            "pip install 'precision-lint[harness]' (torch==2.13.0 from PyPI is a CUDA build on a GPU "
            "machine; see the README for a CPU-only install)",
            file=sys.stderr,
        )
        return 2
    python = sys.executable
    if args.device == "cpu":
        device = "cpu"
    else:
        device = "cuda" if cuda_available(python) else "cpu"
        if args.device == "cuda" and device != "cuda":
            print("precision-lint verify: --device cuda but CUDA is not available", file=sys.stderr)
            return 2
    verifier = ScriptVerifier(Linter(python=python), steps=args.steps, device=device,
                              timeout=args.timeout, keep=args.keep, reference=args.reference,
                              tiny=args.tiny)
    print(f"verify: running {args.script} ({device}, {args.steps} steps a run)...",
          file=sys.stderr, flush=True)
    try:
        result = verifier.verify(args.script, script_args)
    except ScriptError as exc:
        print(f"precision-lint verify: {exc}", file=sys.stderr)
        return 2
    if args.output_format == "json":
        json.dump(script_json(result), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(script_text(result))
        if result.workdir:
            print(f"scratch copies and logs kept in {result.workdir}")
    return 0 if result.ok else 1


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["verify"]:
        argv = argv[1:]
    if _is_script(argv):
        return script_main(argv)
    args = build_parser().parse_args(argv)
    if args.jobs < 1:
        print("precision-lint verify: --jobs must be >= 1", file=sys.stderr)
        return 2

    if not args.fixtures and not DEFAULT_FIXTURES.is_dir():
        print(
            "precision-lint verify: the fixtures are not installed with the package (a `pip install .` "
            "ships the linter only): run it in a checkout of the repository, or name the folder: "
            "precision-lint verify path/to/precision-lint/fixtures",
            file=sys.stderr,
        )
        return 2
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"precision-lint verify: the fixtures train real models and need {' and '.join(missing)}: "
            "pip install 'precision-lint[harness]' (torch==2.13.0 from PyPI is a CUDA build on a GPU "
            "machine; see the README for a CPU-only install)",
            file=sys.stderr,
        )
        return 2
    paths = args.fixtures or [DEFAULT_FIXTURES]
    root = DEFAULT_FIXTURES if DEFAULT_FIXTURES.is_dir() else None
    try:
        fixtures = discover(paths, root)
    except FixtureError as exc:
        print(f"precision-lint verify: {exc}", file=sys.stderr)
        return 2
    if not fixtures:
        print(f"precision-lint verify: no fixtures found in {', '.join(map(str, paths))}",
              file=sys.stderr)
        return 2

    python = sys.executable
    has_cuda = args.device != "cpu" and cuda_available(python)
    if args.device == "cuda" and not has_cuda:
        print("precision-lint verify: --device cuda but CUDA is not available", file=sys.stderr)
        return 2

    verifier = Verifier(Linter(python=python), timeout=args.timeout, keep=args.keep)
    plans = plan(fixtures, has_cuda, args.device)

    def one(p):
        result = verifier.verify(p)
        where = f" [{result.workdir}]" if result.workdir else ""
        print(f"verify: {p.fixture.name} ({p.device}): {result.verdict_text} "
              f"({result.duration_s:.1f}s){where}", file=sys.stderr, flush=True)
        return result

    if args.jobs == 1:
        results = [one(p) for p in plans]
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(one, plans))

    if args.output_format == "json":
        json.dump(to_json(results, has_cuda, args.device), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(table(results))
    return 0 if all(r.ok for r in results) else 1
