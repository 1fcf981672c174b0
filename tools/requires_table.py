"""Regenerate ``precision_lint/knowledge/requires.toml``: what each release line of transformers,
TRL, PEFT and accelerate requires of torch, tokenizers, huggingface_hub and of each other, and of Python (and of
torch's own lines, the Python they require).

For the first and the last release of each minor of a library (no pre-releases, no yanked
ones) the wheel's own metadata is read with pip itself (``pip install --dry-run --no-deps
--report``, with ``fast-deps`` so that only the wheel's metadata is fetched; one release of
each library per pip run), and its ``Requires-Dist`` on the libraries of :data:`DEPENDENCIES`
is kept: the unconditional requirements and those of the ``torch`` extra (transformers
declares torch there: its PyTorch models need it). The two are joined: the row of a minor
admits what either admits (the lowest minimum and the highest maximum; ``!=`` exclusions are
dropped, as the resolver drops them). A patch release moves a bound one way (a newer
tokenizers allowed), so the first and the last of a line span what its releases require.
What pip reported is kept per release in ``--cache`` (a run that stops goes on from there).

    python tools/requires_table.py [--jobs 2] [--only transformers] > precision_lint/knowledge/requires.toml

The list of releases comes from PyPI's JSON API for the project (``/pypi/<name>/json``).
Needs the network; ``tests/test_knowledge.py`` checks the table against the installed wheels
without it.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Tuple

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

# the libraries whose release lines are listed, from their first release line that matters
# to the rules (older ones are not listed: the resolver then knows nothing about them)
LIBRARIES = {"transformers": "4.0", "trl": "0.1", "peft": "0.1", "accelerate": "0.1", "torch": "1.0"}
# what is recorded of their requirements (`python`: the wheel's Requires-Python)
DEPENDENCIES = ("torch", "tokenizers", "transformers", "accelerate", "peft", "trl", "python")
EXTRAS = ("torch",)
# and, for transformers, the Hub client (a pin of it narrows the transformers a project targets:
# `huggingface_hub==0.9.0` rules out 4.23 on); the others' rows do not need it (transformers is
# what a project pins beside them)
HUB_OF = ("transformers",)


def dependencies_of(name: str) -> Tuple[str, ...]:
    """What is recorded of the requirements of ``name``'s releases, in the table's order."""
    if name in HUB_OF:
        return DEPENDENCIES[:2] + ("huggingface-hub",) + DEPENDENCIES[2:]
    return DEPENDENCIES


def releases(name: str, since: str) -> List[str]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=120) as answer:
        data = json.load(answer)
    out = []
    for text, files in data["releases"].items():
        try:
            v = Version(text)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or v < Version(since) or not files:
            continue
        if all(f.get("yanked") for f in files) or not any(f["filename"].endswith(".whl") for f in files):
            continue
        out.append(text)
    return sorted(out, key=Version)


def requires_dists(wanted: List[Tuple[str, str]], cache: str) -> Dict[Tuple[str, str], Optional[List[str]]]:
    """The ``Requires-Dist`` of some releases' wheels (one release per library), as pip reads
    them, with their ``Requires-Python`` as one more line (``python>=3.9``); each kept in
    ``cache`` as ``<name>-<version>.json``."""
    out: Dict[Tuple[str, str], Optional[List[str]]] = {}
    todo = []
    for name, version in wanted:
        kept = os.path.join(cache, f"{name}-{version}.json")
        if os.path.exists(kept):
            with open(kept, encoding="utf-8") as f:
                out[(name, version)] = json.load(f)
        else:
            todo.append((name, version))
    if not todo:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        command = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
            "--only-binary", ":all:", "--use-feature=fast-deps", "--report", report,
            *(f"{name}=={version}" for name, version in todo),
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(report):
            if len(todo) > 1:  # one release without a wheel: the others one at a time
                for one in todo:
                    out.update(requires_dists([one], cache))
                return out
            print(f"# {todo[0]}: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            out[todo[0]] = None
            return out
        with open(report, encoding="utf-8") as f:
            installs = json.load(f)["install"]
    for item in installs:
        meta = item["metadata"]
        key = (re.sub(r"[-_.]+", "-", meta["name"].lower()), meta["version"])
        found = list(meta.get("requires_dist") or [])
        if meta.get("requires_python"):
            found.append(f"python{meta['requires_python']}")
        out[key] = found
        with open(os.path.join(cache, f"{key[0]}-{key[1]}.json"), "w", encoding="utf-8") as f:
            json.dump(found, f)
    return out


def _counts(marker: Optional[Marker]) -> bool:
    """Whether a requirement with this marker holds for a plain or a ``[torch]`` install:
    no extra named, or one of :data:`EXTRAS` (a Python or platform marker holds somewhere)."""
    if marker is None:
        return True
    extras = re.findall(r"""extra\s*==\s*["']([^"']+)["']""", str(marker))
    return not extras or any(e in EXTRAS for e in extras)


def bounds(lines: List[str], dependencies: Tuple[str, ...] = DEPENDENCIES) -> Dict[str, Tuple[Optional[Version], Optional[Version], bool]]:
    """Per dependency: (lowest minimum, highest maximum, maximum inclusive) of what the wheel
    admits. Requirements with no environment marker (or only a counted extra) all hold at
    once: their bounds are intersected (``transformers>=4.46`` and ``transformers<5``, two
    lines). One under a Python or platform marker holds in that environment on top of them,
    so it only narrows them there (TRL 0.24: ``transformers>=4.56.1`` and ``transformers!=4.57.0;
    python_version == "3.9"``): where unconditional ones exist, those are the bounds. Where none
    exist, the marked ones are alternatives, one per environment: any of them (their hull)."""
    always: Dict[str, List[Tuple[Optional[Version], Optional[Version], bool]]] = {}
    marked: Dict[str, List[Tuple[Optional[Version], Optional[Version], bool]]] = {}
    for line in lines:
        req = Requirement(line)
        dist = re.sub(r"[-_.]+", "-", req.name.lower())
        if dist not in dependencies or not _counts(req.marker):
            continue
        (always if _unconditional(req.marker) else marked).setdefault(dist, []).append(_spec_bounds(req))
    out = {d: _intersection(found) for d, found in always.items()}
    out.update({d: _hull(found) for d, found in marked.items() if d not in always})
    return out


def _unconditional(marker: Optional[Marker]) -> bool:
    """Whether a counted requirement holds in every environment (no marker but extras)."""
    if marker is None:
        return True
    return not re.sub(r"""extra\s*==\s*["'][^"']+["']|\bor\b|\band\b|[()\s]""", "", str(marker))


def _spec_bounds(req: Requirement) -> Tuple[Optional[Version], Optional[Version], bool]:
    low: Optional[Version] = None
    high: Optional[Version] = None
    inclusive = False
    for spec in req.specifier:
        v = Version(spec.version.rstrip(".*"))
        if spec.operator in (">=", ">", "~=") or (spec.operator in ("==", "===") and "*" not in spec.version):
            low = v if low is None or v > low else low
        if spec.operator in ("<", "<=", "==", "==="):
            if spec.operator == "==" and "*" in spec.version:
                continue
            if high is None or v < high or (v == high and spec.operator == "<"):
                high, inclusive = v, spec.operator != "<"
        if spec.operator == "~=":
            parts = list(v.release[:-1]) or [v.release[0]]
            parts[-1] += 1
            top = Version(".".join(map(str, parts)))
            if high is None or top < high:
                high, inclusive = top, False
    return low, high, inclusive


def _intersection(found):
    """The bounds every one of ``found`` admits (the highest minimum, the lowest maximum)."""
    lows = [f[0] for f in found if f[0] is not None]
    low = max(lows) if lows else None
    highs = [(f[1], f[2]) for f in found if f[1] is not None]
    if not highs:
        return low, None, False
    high = min(h for h, _ in highs)
    return low, high, all(i for h, i in highs if h == high)


def _hull(found):
    lows = [f[0] for f in found]
    low = None if any(v is None for v in lows) else min(lows)
    highs = [(f[1], f[2]) for f in found]
    if any(h is None for h, _ in highs):
        return low, None, False
    high = max(h for h, _ in highs)
    return low, high, any(i for h, i in highs if h == high)


def spec_text(low, high, inclusive) -> str:
    parts = []
    if low is not None:
        parts.append(f">={low}")
    if high is not None:
        parts.append(f"{'<=' if inclusive else '<'}{high}")
    return ",".join(parts)


def ends_of_lines(found: List[str]) -> Dict[Tuple[int, int], List[str]]:
    """The first and the last release of each minor."""
    minors: Dict[Tuple[int, int], List[str]] = {}
    for v in found:
        minors.setdefault(Version(v).release[:2], []).append(v)
    return {m: list(dict.fromkeys((vs[0], vs[-1]))) for m, vs in minors.items()}


def table(name: str, lines_of: Dict[Tuple[int, int], List[str]], metadata) -> List[str]:
    lines = []
    for minor in sorted(lines_of):
        versions = [v for v in lines_of[minor] if metadata.get((name, v)) is not None]
        if not versions:
            continue
        wanted = dependencies_of(name)
        per = [bounds(metadata[(name, v)], wanted) for v in versions]
        # a dependency one release of the line does not require: the line does not bound it
        common = [d for d in wanted if all(d in p for p in per)]
        lines.append(f'[{name}."{minor[0]}.{minor[1]}"]')
        lines.append("releases = [" + ", ".join(f'"{v}"' for v in versions) + "]")
        row = {}
        for dist in common:
            low, high, inclusive = _hull([p[dist] for p in per])
            text = spec_text(low, high, inclusive)
            if text:
                row[dist] = text
                lines.append(f'{dist} = "{text}"')
        lines.append("")
        # a release whose own requirements differ from its line's (TRL 0.12.2 caps transformers
        # below 4.47, 0.12.0 does not: the line's row bounds neither end): read where a project
        # pins exactly that release
        for version, bounds_of in zip(versions, per):
            own = {d: spec_text(*bounds_of[d]) for d in wanted if d in bounds_of and spec_text(*bounds_of[d])}
            if own != row:
                lines.append(f'[{name}."{minor[0]}.{minor[1]}".release."{version}"]')
                lines.extend(f'{dist} = "{text}"' for dist, text in own.items())
                lines.append("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", action="append", choices=sorted(LIBRARIES))
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/precision-lint-requires"))
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    names = args.only or list(LIBRARIES)
    lines_of = {name: ends_of_lines(releases(name, LIBRARIES[name])) for name in names}
    wanted = {name: [v for vs in lines_of[name].values() for v in vs] for name in names}
    batches = [
        [(name, wanted[name][i]) for name in names if i < len(wanted[name])]
        for i in range(max(len(w) for w in wanted.values()))
    ]
    metadata: Dict[Tuple[str, str], Optional[List[str]]] = {}
    with ThreadPoolExecutor(args.jobs) as pool:
        for found in pool.map(lambda batch: requires_dists(batch, args.cache), batches):
            metadata.update(found)
    today = datetime.date.today().isoformat()
    print(
        "# What each release line of transformers, TRL, PEFT and accelerate requires of torch,\n"
        "# tokenizers, huggingface_hub and of each other (and torch's lines of Python): the Requires-Dist of the first and the last release of each\n"
        "# minor (no pre-releases, no yanked ones; `releases`: those read), unconditional or of the\n"
        "# `torch` extra, joined (the lowest minimum and the highest maximum; `!=` dropped); `python`:\n"
        "# their Requires-Python, joined the same way. `release.\"<version>\"`: a release read whose own\n"
        "# requirements differ from its line's, for a project that pins exactly that release.\n"
        f"# Generated by tools/requires_table.py from PyPI, {today}; tests/test_knowledge.py checks\n"
        "# the rows of the installed releases against their installed metadata.\n"
        "# Read by `precision_lint.knowledge.requirement_rows()`: a project's pins of some of these\n"
        "# libraries narrow the versions of the others that it targets (workspace/versions.py).\n"
    )
    for name in names:
        print("\n".join(table(name, lines_of[name], metadata)))


if __name__ == "__main__":
    main()
