"""How fast is precision-lint next to ruff, on the same files, in the same run?

The corpus is a copy of an installed package's source (transformers by default:
thousands of real modules, many of them about precision), copied to a temporary
folder so that no .gitignore hides it. Both tools lint the same copy; each is
timed over ``--repeat`` runs and the best time is kept (precision-lint without its facts
cache, like ``ruff --no-cache``; a warm re-run is shown separately). The result is a ratio,
never an absolute target: machines differ, the ratio is what to track.

    python benchmarks/bench_lint.py                 # 300 files of transformers
    python benchmarks/bench_lint.py --files 0       # the whole package
    python benchmarks/bench_lint.py --package torch --files 500 --jobs 2

Needs ruff (``pip install ruff``) for the peer; without it only precision-lint is timed.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def make_corpus(source: Path, limit: int, dest: Path) -> int:
    files = sorted(p for p in source.rglob("*.py") if "__pycache__" not in p.parts)
    if limit:
        files = files[:limit]
    for f in files:
        target = dest / f.relative_to(source.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    return len(files)


def best_time(cmd, repeat: int, env) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--package", default="transformers")
    p.add_argument("--files", type=int, default=300, help="how many files (0: all)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)

    env = dict(os.environ, NO_COLOR="1")
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        n = make_corpus(package_dir(args.package), args.files, Path(tmp))
        corpus = str(Path(tmp) / args.package)
        ours = [sys.executable, "-m", "precision_lint", "--exit-zero", "-q", "--jobs", str(args.jobs), corpus]
        t_ours = best_time(ours + ["--no-cache"], args.repeat, env)
        warm = ours + ["--cache-dir", str(Path(tmp) / "cache")]
        best_time(warm, 1, env)  # fills the facts cache
        t_warm = best_time(warm, args.repeat, env)
        ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
        t_ruff = None
        if Path(ruff).exists():
            peer = [ruff, "check", "--exit-zero", "--no-cache", "--quiet", "--isolated", "--select", "ALL", corpus]
            t_ruff = best_time(peer, args.repeat, env)
    print(f"corpus: {n} files of {args.package}; best of {args.repeat}; {args.jobs} job(s)")
    print(f"precision-lint: {t_ours:8.2f} s  ({n / t_ours:7.1f} files/s)")
    print(f"precision-lint, facts cached: {t_warm:5.2f} s  (a re-run with nothing changed)")
    if t_ruff is not None:
        print(f"ruff --select ALL: {t_ruff:5.2f} s  ({n / t_ruff:7.1f} files/s)")
        print(f"ratio precision-lint / ruff: {t_ours / t_ruff:.1f}x")
    else:
        print("ruff not installed: no peer measured (pip install ruff)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
