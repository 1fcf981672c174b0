"""``precision-lint verify``: prove each fix by running it.

Each fixture under ``fixtures/<CODE>/`` is a small training script that reproduces a real
mixed-precision failure. ``verify`` runs the original and checks that it fails as its
header declares, applies the real ``precision-lint check --fix`` to a copy, checks that
the rule is no longer reported, and runs the fixed copy to completion with finite
losses. See ``fixtures/README.md`` for the fixture format.

Modules: ``fixture`` (header parsing, discovery), ``launch`` (runs one script and records
how it ended; executed by path), ``runner`` (subprocess + progress parsing), ``linter``
(the CLI in a subprocess), ``verify`` (the per-fixture procedure), ``report`` (table and
JSON). Nothing here imports the rest of ``precision_lint``.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional

from .fixture import FixtureError, discover
from .linter import PACKAGE_PARENT, Linter
from .report import table, to_json
from .verify import Verifier, cuda_available, plan

DEFAULT_FIXTURES = PACKAGE_PARENT / "fixtures"

__all__ = ["main", "DEFAULT_FIXTURES"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="precision-lint verify",
        description="Run fixtures before and after `precision-lint check --fix` and report "
                    "whether each fix turns the declared failure into a finite training run.",
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


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["verify"]:
        argv = argv[1:]
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
