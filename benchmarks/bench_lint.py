"""precision-lint's speed next to its peers, on the same files, in the same run.

One command builds the corpora, runs every tool on them in turn, and prints a table:

    python benchmarks/bench_lint.py                  # the full benchmark (about 20 minutes on 2 cores)
    python benchmarks/bench_lint.py --quick          # one run each, transformers only
    python benchmarks/bench_lint.py --slice          # the slice and one small file only (minutes)

Corpora (built once under ``--work``, reproducibly): the ``.py`` files of the pinned
``transformers`` and ``torch`` wheels (``pip download``; the wheel of the installed version
when it is the pinned one), and the *slice*: transformers' trainer, modeling utilities,
generation and five model families, the files TorchFix is timed on.

What is timed, alternating tools within each round, ``--repeat`` rounds, median kept:

- precision-lint cold (``--no-cache``), warm (its caches filled, nothing changed) and with one
  file edited (its caches filled, ``EDITED`` changed before each run), with one worker process
  per core, in two ways: a line no fact of the file records (a constant nothing reads: the last
  check's ledger answers, ``workspace/ledger.py``), and a function added (its facts change: a
  new process reads the other files' facts and imports from the cache and joins them again);
- ``ruff check --no-cache`` with its default rules (the speed a user compares with), and with
  ``--select ALL`` (every rule: closer to the amount of work precision-lint does per file);
- TorchFix on the slice, from its own virtual environment (it pins an old LibCST): made by
  ``--torchfix-venv`` on first use;
- a single small file (the pre-commit case), precision-lint against ruff;
- growth: precision-lint cold on a quarter, a half and all of transformers.

Peak memory is the largest resident set of any one process of a run (the parent or one
worker). Ratios, not seconds, are what to compare between machines.

Every Python process imports compiled bytecode, as an installed package does: the runs write
and read it under ``--work`` (``PYTHONPYCACHEPREFIX``), compiled once before the rounds, even
where the environment sets ``PYTHONDONTWRITEBYTECODE`` (which would time compiling
precision-lint's own sources at every start).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PINS = {"transformers": "5.23.0", "torch": "2.13.0"}
SLICE = (
    "transformers/trainer*.py",
    "transformers/training_args.py",
    "transformers/modeling_utils.py",
    "transformers/generation/**/*.py",
    "transformers/models/bert/*.py",
    "transformers/models/gpt2/*.py",
    "transformers/models/llama/*.py",
    "transformers/models/t5/*.py",
    "transformers/models/whisper/*.py",
)
# the file the "one file edited" row changes before each run (a mid-sized module that imports torch)
EDITED = "transformers/trainer_utils.py"
SMALL_FILE = '''import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
args = TrainingArguments(output_dir="out", fp16=True)
Trainer(model=model, args=args).train()
'''
# Runs a command and prints the largest resident set of its processes (KiB on Linux).
MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "t = time.perf_counter() - t\n"
    "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


# --- corpora -------------------------------------------------------------------------------
def wheel(package: str, work: Path) -> Path:
    """The pinned wheel of ``package``, downloaded once into ``work/wheels``."""
    folder = work / "wheels"
    found = sorted(folder.glob(f"{package}-{PINS[package]}*.whl"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(folder),
             f"{package}=={PINS[package]}"],
            check=True,
        )
        found = sorted(folder.glob(f"{package}-{PINS[package]}*.whl"))
    return found[0]


def corpus(package: str, work: Path) -> Path:
    """``work/corpora/<package>``: the ``.py`` files of its pinned wheel."""
    dest = work / "corpora" / package
    marker = dest / ".complete"
    if not marker.exists():
        shutil.rmtree(dest, ignore_errors=True)
        with zipfile.ZipFile(wheel(package, work)) as zf:
            for name in zf.namelist():
                if name.endswith(".py") and name.startswith(f"{package}/"):
                    zf.extract(name, dest)
        marker.write_text(PINS[package])
    return dest


def subset(source: Path, patterns, dest: Path) -> Path:
    """A copy of the files of ``source`` that match ``patterns`` (or a fraction of them)."""
    if not (dest / ".complete").exists():
        shutil.rmtree(dest, ignore_errors=True)
        files = sorted({p for pattern in patterns for p in source.glob(pattern)})
        for f in files:
            target = dest / f.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
        (dest / ".complete").write_text("")
    return dest


def fraction(source: Path, part: float, dest: Path) -> Path:
    files = sorted(p.relative_to(source).as_posix() for p in (source / "transformers").rglob("*.py"))
    return subset(source, files[: max(1, int(len(files) * part))], dest)


def size(folder: Path):
    files = [p for p in folder.rglob("*.py")]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return len(files), lines


# --- tools -----------------------------------------------------------------------------------
def torchfix_command(venv: Path):
    exe = venv / "bin" / "torchfix"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "torchfix==0.7.0"], check=True)
    return [str(exe)]


def ruff_command():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    return [ruff] if Path(ruff).exists() else None


# The floor: CPython's own parser on every file, on all the cores the linter is given. Reading
# the code can cost no less; the targets are ratios to it.
FLOOR = """
import ast, os, sys, warnings
from concurrent.futures import ProcessPoolExecutor

def parse(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(open(path, encoding="utf-8", errors="replace").read())
        except (SyntaxError, ValueError, RecursionError):
            pass
    return 0

if __name__ == "__main__":
    paths = [os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs if f.endswith(".py")]
    paths.sort(key=os.path.getsize, reverse=True)
    with ProcessPoolExecutor(int(sys.argv[1])) as pool:
        sum(pool.map(parse, paths, chunksize=8))
"""


def floor(jobs: int):
    return [sys.executable, "-c", FLOOR, str(jobs)]


def ours(jobs: int, *extra):
    return [sys.executable, "-m", "precision_lint", "--exit-zero", "-q", "--jobs", str(jobs), *extra]


def measure(command, cwd: Path, env) -> tuple:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    seconds, rss = out.stdout.split()
    return float(seconds), int(rss) / 1024  # MiB


def run_rounds(cases, repeat: int, env):
    """Each case once per round, in turn: a slow moment of the machine falls on every tool."""
    times = {name: [] for name, *_ in cases}
    rss = {name: 0.0 for name, *_ in cases}
    for _ in range(repeat):
        for name, command, cwd, before in cases:
            if before is not None:
                before()
            seconds, peak = measure(command, cwd, env)
            times[name].append(seconds)
            rss[name] = max(rss[name], peak)
    return {name: (statistics.median(t), rss[name]) for name, t in times.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "precision-lint-bench"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--torchfix-venv", default=None, help="virtual environment for TorchFix (default: under --work)")
    p.add_argument("--quick", action="store_true", help="one round, transformers only, no growth")
    p.add_argument("--slice", action="store_true",
                   help="the slice (cold, warm, one file edited) and one small file only, no TorchFix: minutes, not an hour")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args(argv)
    repeat = 1 if args.quick else args.repeat

    work = Path(args.work)
    env = dict(os.environ, NO_COLOR="1", OMP_NUM_THREADS="1")
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(args.work).resolve() / "pycache")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "precision_lint")], env=env,
                   stdout=subprocess.DEVNULL, check=False)

    tf = corpus("transformers", work)
    both = work / "corpora" / "torch+transformers"
    if not (args.quick or args.slice):
        th = corpus("torch", work)
        if not (both / ".complete").exists():
            shutil.rmtree(both, ignore_errors=True)
            # both packages under their own names: `from torch import nn` in transformers finds torch's files
            shutil.copytree(tf / "transformers", both / "transformers")
            shutil.copytree(th / "torch", both / "torch")
            (both / ".complete").write_text("")
    piece = subset(tf, SLICE, work / "corpora" / "slice")
    small = work / "corpora" / "small"
    small.mkdir(parents=True, exist_ok=True)
    (small / "train.py").write_text(SMALL_FILE)

    cache = work / "cache"
    ruff = ruff_command()
    torchfix = None if args.slice else torchfix_command(Path(args.torchfix_venv) if args.torchfix_venv else work / "torchfix-venv")

    def clear_cache():
        shutil.rmtree(cache, ignore_errors=True)

    def fill_cache(folder):
        def fill():
            if not cache.exists():  # the first warm run of a corpus finds its caches filled
                subprocess.run(ours(args.jobs, "--cache-dir", str(cache), "."), cwd=folder, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return fill

    def edit(folder, code: bool = False):
        target = folder / EDITED
        original = target.read_text(encoding="utf-8")
        count = [0]

        def write():
            count[0] += 1
            if code:  # a function: what its module defines and calls changes
                added = f"\n\ndef edited_by_the_benchmark_{count[0]}(x):\n    return torch.zeros(2, dtype=torch.float16) + x\n"
            else:  # a constant nothing reads: no fact changes
                added = f"\nEDITED_BY_THE_BENCHMARK = {count[0]}\n"
            target.write_text(original + added, encoding="utf-8")

        def change():
            fill_cache(folder)()
            if not code:  # the check before the edit is of the same facts (the other row changed them)
                write()
                subprocess.run(ours(args.jobs, "--cache-dir", str(cache), "."), cwd=folder, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            write()

        def restore():
            target.write_text(original, encoding="utf-8")

        return change, restore

    rows = []
    corpora = [] if args.slice else [("transformers", tf)] + ([] if args.quick else [("torch + transformers", both)])
    for label, folder in corpora:
        change, restore = edit(folder)
        change_code, _ = edit(folder, code=True)
        cases = [
            ("floor", floor(args.jobs), folder, None),
            ("cold", ours(args.jobs, "--no-cache", "."), folder, None),
            ("warm", ours(args.jobs, "--cache-dir", str(cache), "."), folder, fill_cache(folder)),
            ("edited", ours(args.jobs, "--cache-dir", str(cache), "."), folder, change),
            ("edited-code", ours(args.jobs, "--cache-dir", str(cache), "."), folder, change_code),
        ]
        if ruff:
            cases.append(("ruff", [*ruff, "check", "--exit-zero", "--no-cache", "--quiet", "--isolated", "."], folder, None))
            cases.append(("ruff-all", [*ruff, "check", "--exit-zero", "--no-cache", "--quiet", "--isolated", "--select", "ALL", "."], folder, None))
        clear_cache()
        try:
            got = run_rounds(cases, repeat, env)
        finally:
            restore()
        files, lines = size(folder)
        rows.append((label, files, lines, got))
        clear_cache()

    cases = [("floor", floor(args.jobs), piece, None), ("cold", ours(args.jobs, "--no-cache", "."), piece, None)]
    restore = None
    if torchfix:
        cases.append(("torchfix", [*torchfix, "--select", "ALL", "."], piece, None))
    if args.slice:  # the cached rows on the slice itself
        change, restore = edit(piece)
        change_code, _ = edit(piece, code=True)
        cases += [("warm", ours(args.jobs, "--cache-dir", str(cache), "."), piece, fill_cache(piece)),
                  ("edited", ours(args.jobs, "--cache-dir", str(cache), "."), piece, change),
                  ("edited-code", ours(args.jobs, "--cache-dir", str(cache), "."), piece, change_code)]
        clear_cache()
    try:
        got = run_rounds(cases, repeat, env)
    finally:
        if restore is not None:
            restore()
        clear_cache()
    rows.append(("the slice (TorchFix's corpus)", *size(piece), got))

    cases = [("floor", floor(1), small, None), ("cold", ours(1, "--no-cache", "train.py"), small, None)]
    if ruff:
        cases.append(("ruff", [*ruff, "check", "--exit-zero", "--no-cache", "--quiet", "--isolated", "train.py"], small, None))
    rows.append(("one small file (pre-commit)", *size(small), run_rounds(cases, max(repeat, 5), env)))

    growth = []
    if not (args.quick or args.slice):
        for part in (0.25, 0.5, 1.0):
            folder = tf if part == 1.0 else fraction(tf, part, work / "corpora" / f"transformers-{int(part * 100)}")
            growth.append((part, *size(folder), run_rounds([("cold", ours(args.jobs, "--no-cache", "."), folder, None)], repeat, env)["cold"][0]))

    print(table(rows, growth, repeat, args.jobs))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "growth": growth}, indent=2, default=str))
    return 0


def table(rows, growth, repeat: int, jobs: int) -> str:
    out = [
        f"median of {repeat} run(s), {jobs} job(s); peak RSS: the largest process of a run",
        "",
        "| corpus | files | lines | tool | median wall | peak RSS | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, files, lines, got in rows:
        base = got.get("cold", (None,))[0]
        for tool, (seconds, rss) in got.items():
            name = {"floor": "floor: CPython `ast.parse` of every file", "cold": "precision-lint (no cache)",
                    "warm": "precision-lint (warm cache)", "edited": "precision-lint (warm cache, one file edited: no fact changed)",
                    "edited-code": "precision-lint (warm cache, one file edited: a function added)",
                    "ruff": "ruff check --no-cache (its default rules)", "ruff-all": "ruff check --no-cache --select ALL",
                    "torchfix": "TorchFix 0.7"}[tool]
            if tool == "floor":
                ratio = ""
            elif tool == "cold":
                ratio = f"{seconds / got['floor'][0]:.1f}x the floor" if "floor" in got else ""
            elif tool == "torchfix":
                ratio = f"precision-lint {seconds / base:.1f}x faster"
            elif tool in ("warm", "edited", "edited-code"):
                ratio = f"{seconds / got['floor'][0]:.2f}x the floor" if "floor" in got else ""
            else:
                ratio = f"precision-lint {base / seconds:.1f}x ruff's time"
            out.append(f"| {label} | {files} | {lines} | {name} | {seconds:.2f} s | {rss:.0f} MiB | {ratio} |")
    if growth:
        out += ["", "| share of transformers | files | lines | precision-lint (no cache) | time / quarter's time |", "|---|---|---|---|---|"]
        first = growth[0][3]
        for part, files, lines, seconds in growth:
            out.append(f"| {part:.0%} | {files} | {lines} | {seconds:.2f} s | {seconds / first:.2f}x |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
