"""The library versions a file targets: a range per library, read from the file's own project.

A removed keyword crashes only where the installed library has removed it, and a rename is a
fix only where the new name exists; both depend on which versions the code runs with. Those
are what its project says, nearest first:

1. ``transformers-version`` / ``trl-version`` in the configuration (one version, for every file);
2. a vendored copy of the library the file lies in (a folder that *is* transformers, with its
   own ``setup.py`` or ``__version__``): that library at its own version, and library code;
3. the file itself: ``require_version("trl>=0.8.6,<=0.9.6")``, ``check_min_version("4.36.0")``,
   a notebook's ``%pip install transformers==4.31.0`` / ``!pip install`` lines, and those of a
   notebook or a shell / SLURM launcher (``run.sh``: ``pip install ...`` then ``python
   train.py``, ``shipped.pins_for``) that runs the file or a script importing it;
4. the nearest folder, walking up from the file (and stopping at the repository's ``.git``),
   whose requirements name the library: ``requirements*.txt``, ``pyproject.toml`` (PEP 621
   dependencies and optional dependencies, PEP 735 / uv dependency groups, Poetry),
   ``setup.py`` / ``setup.cfg`` (``install_requires``), ``environment.yml`` (conda and its
   ``pip:`` list; also a conda environment by another name, ``requirements.yaml``, ``env.yml``;
   ``requirement.txt`` and ``requirements-gpu.txt`` too; where the folder's
   ``pyproject.toml`` / ``setup.py`` / ``setup.cfg`` (or its own ``requirements.txt``) declares
   the library, an extra's file, ``requirements/<extra>.txt`` or ``requirements-<extra>.txt``,
   does not narrow that: its pin holds for one optional install, not for the rest of the code); failing a requirement,
   a vendored copy of the library next to the code (``./transformers/__init__.py`` with a
   ``__version__``, or a checkout with a ``setup.py``); failing both, the folder's README:
   ``pip install transformers==4.31.0`` (or a range) in one of its fenced code blocks, or an
   item of its requirements list (``### Requirements`` / ``* PyTorch 2.0``:
   :func:`listed_requirements`);
5. the installed distribution's metadata, else the newest behaviour (where the pins of the
   libraries beside it admit that version: see below).

peft is read the same way (the dtype its LoRA adapters take depends on its version). So is
torch, and where its range has no upper bound (unpinned, or ``torch>=1.10``) it is capped by the torch of the time of the file's pinned transformers,
accelerate or TRL (:func:`implied_torch`): for the highest minor M such a pin allows, the
newest torch minor released on or before the day M's next minor came out (the release days
are data, ``knowledge/torch.toml``). A project pinning ``transformers==4.27.1`` targets the
torch of spring 2023 (2.0), not today's; the next minor's day is used because a minor stays
current until its successor ships, so the cap is the newest torch that could have been used
with it. The project's own torch pin wins where it contradicts the cap.

What a project pins of the libraries beside one narrows it too (:func:`compatible_range`, by
what each release line requires: ``knowledge/requires.toml``, from the wheels' metadata): a
project pinning ``tokenizers==0.12.1`` and ``torch==1.13.0`` cannot run transformers 4.34 and
later (they require tokenizers>=0.14) nor 4.48 and later (torch>=2.0), and one pinning
``trl==0.7.4`` runs transformers>=4.18. So does the Python it states (``python=3.8`` in its
environment.yml, ``conda create -n env python=3.8`` in its README, "Python 3.8" in a README's
requirements list): each release line requires one (Requires-Python), and transformers 4.47
requires python>=3.9, so a Python 3.8 project runs transformers<4.47, and torch<2.6 (torch's
lines are in the table for their Python alone); a floor, ``python>=3.8``, caps nothing. A stated range is intersected with that; an unstated
library keeps the installed version while the pins admit it, and targets the versions they
admit where they do not (transformers cloned from git beside those pins is not today's 5.24).
Only stated pins narrow (one step: what is implied from a pin implies nothing further).

The in-file constraints and the project's are both true at once, so they are intersected.
A requirement is a *range* (:class:`Allowed`): ``<5.0`` is every 4.x, Poetry's ``^4.36`` is
``>=4.36,<5``. A rule asks whether *every* allowed version has removed a name (an error),
whether *some* have (a warning that names them), and whether the *lowest* allowed version
has the new spelling a fix writes.

Nothing is imported or run; files are read as text (TOML through ``tomllib``).
"""
from __future__ import annotations

import codecs
import os
import re
from dataclasses import replace
from functools import lru_cache
from .._dataclass import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple
from .._regex import lazy
from .markdown import PROMPT_ENVIRONMENT, PROMPT_SIGNS, closes, fenced_lines, opening_fence

Version = Tuple[int, ...]

# The libraries whose versions the rules read, as requirement names (lower case, `_` as `-`):
# transformers and TRL for their APIs (MP301-MP304), torch for its own (MP303) and for what a
# GPU without native bf16 does (MP201, MP203), accelerate for the torch its pin implies, peft
# for the dtype its LoRA adapters take (MP101: the base's in 0.7 to 0.11).
# tokenizers only for what its pin says of the others (transformers 4.28 requires tokenizers<0.14,
# so `tokenizers==0.12.1` rules out transformers 4.34 and later: :func:`compatible_range`).
LIBRARIES = ("transformers", "trl", "torch", "accelerate", "peft", "tokenizers")
# The libraries whose targeted versions a project's pins of the others narrow (the rules read them).
NARROWED = ("transformers", "trl", "torch", "accelerate", "peft")
# torch's companion libraries: no rule is about them, but each release requires one torch, so
# a project's pin of one narrows the torch it targets (``knowledge/companions.toml``)
COMPANIONS = ("torchvision", "torchaudio", "torchdata", "torchtext", "triton")
# The Python a project states (`python=3.8` in environment.yml, `conda create -n env python=3.8`,
# "Python 3.8" in a README's requirements list): each release line requires one (its
# Requires-Python, `knowledge/requires.toml`), so a stated Python narrows the libraries it targets
PYTHON = ("python",)
# The Hub client: each transformers release line requires a range of it (`knowledge/requires.toml`),
# so a project's pin of it narrows the transformers it targets (`pip install transformers
# huggingface_hub==0.9.0`: transformers 4.23 requires huggingface-hub>=0.10.0, so 4.22 at most)
HUB = ("huggingface-hub",)
# what a project's requirement files are read for
READ_LIBRARIES = LIBRARIES + COMPANIONS + PYTHON + HUB
# conda's names of them (`- pytorch=2.1` in environment.yml)
CONDA_NAMES = {"pytorch": "torch"}
# Libraries whose vendored copy is library code (its own files are not judged as user code).
VENDORED_LIBRARIES = (
    "transformers", "trl", "peft", "accelerate", "diffusers", "deepspeed", "sentence-transformers",
    "unsloth", "torch", "bitsandbytes", "timm", "open-clip-torch", "lightning", "pytorch-lightning",
)
MAX_BYTES = 1_000_000
REQUIREMENT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")
# requirements.txt, requirement.txt (a common slip), requirements-dev.txt, requirements_gpu.in
_REQUIREMENTS_TXT = re.compile(r"^requirements?(?:[-_.][^/]*)?\.(?:txt|in)$", re.IGNORECASE)
# A conda environment file by another name (`conda env create -f requirements.yaml`, env.yml,
# environment-cuda.yml): read as environment.yml is, where its text is one (`dependencies:`)
_CONDA_FILE = re.compile(r"^(?:environment|env|conda|requirements?)(?:[-_.][^/]*)?\.ya?ml$", re.IGNORECASE)
_CONDA_DEPENDENCIES = lazy(r"^dependencies\s*:", re.MULTILINE)
# A YAML file by any other name (`vlm_pref.yaml`, installed by a README's `conda env create
# --file vlm_pref.yaml`) is a conda environment where it also says what only one says: its
# `channels:`, or a `- pip:` / `- python=3.10` item of its dependencies.
_CONDA_ONLY = lazy(r"^(?:channels\s*:|\s*-\s*(?:pip\s*:|python\s*=))", re.MULTILINE)
# a folder's README: its fenced `pip install pkg==X` lines are stated pins, read last
# A folder's README and its installation documents (INSTALL.md, get_started.md): where a
# project writes the commands that set up its environment when it ships no requirements file.
_README = re.compile(
    r"^(?:readme|install(?:ation)?|get_?started|getting_?started)(?:\.(?:md|markdown|rst|txt))?$", re.IGNORECASE
)


def is_requirements_file(name: str) -> bool:
    return bool(_REQUIREMENTS_TXT.match(name))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _pad(v: Version, width: int = 4) -> Version:
    return tuple(v) + (0,) * max(0, width - len(v))


def compare(a: Version, b: Version) -> int:
    width = max(len(a), len(b), 3)
    pa, pb = _pad(a, width), _pad(b, width)
    return (pa > pb) - (pa < pb)


def version_text(v: Optional[Version]) -> str:
    return ".".join(map(str, v)) if v else "?"


def read_version(text: str) -> Optional[Version]:
    """The release part of a version: ``4.36.0.dev0`` → (4, 36, 0), ``v4.31`` → (4, 31)."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def _bump(v: Version, at: int) -> Version:
    """The first version past the series: ``_bump((4, 36, 2), 1)`` → (4, 37)."""
    head = list(v[: at + 1]) + [0] * max(0, at + 1 - len(v))
    head[at] += 1
    return tuple(head)


@dataclass(frozen=True)
class Allowed:
    """The versions of one library a file may run with: an interval ``[low, high)`` (either
    end open when None, ``high_inclusive`` for ``<=``), where it was read, and as written."""

    dist: str
    low: Optional[Version] = None
    high: Optional[Version] = None
    high_inclusive: bool = False
    spec: str = ""  # as written ("transformers>=4.36,<5.0"); "" for a single version
    source: str = "installed"  # "configuration", "installed", "newest", or the file it came from
    newest: bool = False  # nothing known: the newest release (every removal has happened)
    note: str = ""  # why, where the range is implied rather than written (torch<2.1 for transformers 4.27)
    # pinned to one commit of the library's repository (`transformers @ git+...@0dcb46e`): one
    # version, which is not known here, so nothing about what it has can be established
    commit: str = ""
    # the versions themselves, where the range joins single pins (`transformers==4.31.0` in
    # environment.yml, `transformers==4.37.2` in pyproject.toml): the versions between them are
    # in the interval, not among the pins (a cap below 4.35 leaves 4.31.0 alone, not 4.34)
    points: Tuple[Version, ...] = ()
    # the optional install of a package's declaration this statement belongs to (an extra of
    # `extras_require`, `[project.optional-dependencies]`): one choice among others, "" for the
    # requirements every install gets
    extra: str = ""
    # joined from statements that contradict each other (requirements.txt's transformers<4.38
    # beside environment.yml's transformers==4.52.4): one environment each, and the code runs in
    # any of them, so a neighbour's pin, which belongs to one of them, cannot choose between them
    either: bool = False

    # --- construction -------------------------------------------------------------------
    @classmethod
    def point(cls, dist: str, version: Version, source: str) -> "Allowed":
        return cls(dist, tuple(version), tuple(version), True, "", source)

    @classmethod
    def unknown(cls, dist: str) -> "Allowed":
        return cls(dist, source="newest", newest=True)

    @property
    def fallback(self) -> bool:
        """Taken for want of a statement: the installed version, or the newest release."""
        return self.newest or self.source in ("installed", "newest")

    @property
    def is_point(self) -> bool:
        return self.low is not None and self.high is not None and self.high_inclusive and compare(self.low, self.high) == 0

    @property
    def is_empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        c = compare(self.low, self.high)
        return c > 0 or (c == 0 and not self.high_inclusive)

    @property
    def pins(self) -> Optional[Tuple[Version, ...]]:
        """The allowed versions one by one, where they are single pins; None for a range."""
        if self.points:
            return self.points
        return (self.low,) if self.is_point else None

    def admits(self, version: Version) -> bool:
        """Whether ``version`` lies in the interval (its ends; not :attr:`points`)."""
        if self.low is not None and compare(version, self.low) < 0:
            return False
        if self.high is None:
            return True
        c = compare(version, self.high)
        return c < 0 or (c == 0 and self.high_inclusive)

    def intersect(self, other: "Allowed") -> "Allowed":
        mine, theirs = self.pins, other.pins
        if (mine is not None and len(mine) > 1) or (theirs is not None and len(theirs) > 1):
            kept = tuple(
                v for v in (mine if mine is not None else theirs)
                if (self if mine is None else other).admits(v)
                and (mine is None or theirs is None or any(compare(v, t) == 0 for t in theirs))
            )
            specs = " and ".join(s for s in (self.described, other.described) if s)
            if not kept:  # nothing left: an empty interval
                return Allowed(self.dist, (1,), (0,), False, specs, self.source, commit=_commits(self, other))
            return Allowed(self.dist, kept[0], kept[-1], True, specs, self.source, commit=_commits(self, other),
                           points=kept if len(kept) > 1 else ())
        low = self.low if other.low is None or (self.low is not None and compare(self.low, other.low) >= 0) else other.low
        if self.high is None:
            high, inclusive = other.high, other.high_inclusive
        elif other.high is None:
            high, inclusive = self.high, self.high_inclusive
        else:
            c = compare(self.high, other.high)
            high, inclusive = (self.high, self.high_inclusive) if c < 0 else (other.high, other.high_inclusive)
            if c == 0:
                inclusive = self.high_inclusive and other.high_inclusive
        specs = " and ".join(s for s in (self.described, other.described) if s)
        return Allowed(self.dist, low, high, inclusive, specs, self.source, commit=_commits(self, other))

    def hull(self, other: "Allowed") -> "Allowed":
        low = None if self.low is None or other.low is None else min(self.low, other.low, key=_pad)
        if self.high is None or other.high is None:
            high, inclusive = None, False
        else:
            c = compare(self.high, other.high)
            high, inclusive = (other.high, other.high_inclusive) if c < 0 else (self.high, self.high_inclusive)
            if c == 0:
                inclusive = self.high_inclusive or other.high_inclusive
        mine, theirs = self.pins, other.pins
        points = tuple(sorted(set(mine) | set(theirs), key=_pad)) if mine is not None and theirs is not None else ()
        # the same pin twice (eight job files that build one environment) is written once
        spec = self.described if self.described == other.described else f"{self.described} or {other.described}"
        return Allowed(self.dist, low, high, inclusive, spec, self.source,
                       commit=_commits(self, other), points=points if len(points) > 1 else ())

    # --- questions ------------------------------------------------------------------------
    def every_at_least(self, bound: Optional[Version]) -> bool:
        """Whether every allowed version is ``>= bound`` (a removal has happened everywhere)."""
        if bound is None or self.commit:
            return False
        if self.newest:
            return True
        if self.points:
            return all(compare(v, bound) >= 0 for v in self.points)
        return self.low is not None and compare(self.low, bound) >= 0

    def some_at_least(self, bound: Optional[Version]) -> bool:
        """Whether some allowed version is ``>= bound``."""
        if bound is None or self.commit:
            return False
        if self.newest or self.high is None:
            return True
        if self.points:
            return any(compare(v, bound) >= 0 for v in self.points)
        c = compare(self.high, bound)
        return c > 0 or (c == 0 and self.high_inclusive)

    def has_since(self, since: Optional[Version]) -> bool:
        """Whether the lowest allowed version already has what appeared in ``since``: what a
        fix may write (an unknown lowest version has nothing newer than the oldest)."""
        return since is None or self.every_at_least(since)

    def accepts_between(self, since: Optional[Version], until: Optional[Version]) -> bool:
        """Whether some allowed version is ``>= since`` and ``< until`` (None: open)."""
        if self.commit:
            return False
        if self.points:
            return any(
                (since is None or compare(v, since) >= 0) and (until is None or compare(v, until) < 0) for v in self.points
            )
        low = self.low if since is None or (self.low is not None and compare(self.low, since) >= 0) else since
        if until is not None and low is not None and compare(low, until) >= 0:
            return False
        if until is not None and self.newest:
            return False
        if self.high is None or low is None:
            return True
        c = compare(low, self.high)
        return c < 0 or (c == 0 and self.high_inclusive)

    # --- text -------------------------------------------------------------------------
    @property
    def described(self) -> str:
        """``transformers==4.36.2`` or the requirement as written."""
        if self.spec:
            return self.spec
        if self.is_point:
            return f"{self.dist}=={version_text(self.low)}"
        return self.dist

    def where(self) -> str:
        """``transformers>=4.36,<5.0 in requirements.txt``, for messages; a fallback version is
        no pin, and is not written as one (``transformers 5.24.0 (installed; the project pins
        none)``)."""
        if self.source in ("installed", "newest") and self.is_point and not self.spec:
            return f"{self.dist} {version_text(self.low)} ({self.source}; the project pins none)"
        if self.source in ("configuration", "installed", "newest"):
            return f"{self.described} ({self.source})"
        if self.note:
            return f"{self.described} ({self.note})"
        return f"{self.described} in {self.source}"

    def from_version(self, bound: Version) -> str:
        """The allowed versions from ``bound`` on: ``5.0 and later`` / ``5.0 to 5.2``."""
        if self.high is None or self.newest:
            return f"{version_text(bound)} and later"
        upper = f"up to {version_text(self.high)}" if self.high_inclusive else f"below {version_text(self.high)}"
        return f"{version_text(bound)} {upper}"


def _commits(a: Allowed, b: Allowed) -> str:
    """The commits two statements pin, together: a version that is not known stays unknown
    beside a range or another commit."""
    return " or ".join(c for c in dict.fromkeys((a.commit, b.commit)) if c)


# --- requirement specifiers ----------------------------------------------------------------
_CLAUSE = lazy(r"(===|==|~=|!=|<=|>=|<|>|\^|~|=)?\s*v?(\d+(?:\.\d+)*)(\.\*)?([-_.]?(?:dev|a|alpha|b|beta|c|rc|pre|preview)[-_.]?\d*)?", re.IGNORECASE)


def parse_spec(dist: str, spec: str, source: str = "", written: str = "") -> Allowed:
    """The range a specifier allows: PEP 440 (``>=4.36,<5.0``, ``~=4.46.0``, ``==4.36.*``),
    Poetry (``^4.36``, ``~4.36``, ``4.36.2``, ``>=4.36 <5``, ``a || b``), conda (``=4.36``)."""
    written = written or f"{dist}{spec.strip()}"
    spec = spec.strip().strip("\"'")
    alternatives = [a for a in spec.split("||") if a.strip()]
    if len(alternatives) > 1:
        ranges = [parse_spec(dist, a, source, written) for a in alternatives]
        out = ranges[0]
        for r in ranges[1:]:
            out = out.hull(r)
        return replace(out, spec=written, source=source)
    out = Allowed(dist, spec=written, source=source)
    spec = re.sub(r"(===|==|~=|!=|<=|>=|<|>|\^|~|=)\s+", r"\1", spec)  # `>= 4.40` is one clause
    for clause in re.split(r"[,\s]+(?=[<>=!~^\d])", spec):
        clause = clause.strip().strip(",")
        if not clause or clause == "*":
            continue
        match = _CLAUSE().fullmatch(clause) or _CLAUSE().match(clause)
        if match is None:
            continue
        op, version, star = match.group(1) or "==", read_version(match.group(2)), match.group(3)
        if version is None:
            continue
        bound = _clause_range(dist, op, version, bool(star))
        if match.group(4) and bound is not None and not star:
            bound = _before_release(bound, version)
        if bound is not None:
            out = out.intersect(bound)
    return replace(out, spec=written, source=source)


def _clause_range(dist: str, op: str, v: Version, star: bool) -> Optional[Allowed]:
    if op in ("==", "===", "=") and (star or op == "="):
        # `==4.36.*`, conda's `=4.36` (a prefix match): the whole series
        return Allowed(dist, v, _bump(v, len(v) - 1))
    if op in ("==", "==="):
        return Allowed(dist, v, v, True)
    if op == ">=":
        return Allowed(dist, low=v)
    if op == ">":
        return Allowed(dist, low=v + (0, 0, 0, 1)[len(v):] if len(v) < 4 else v)  # just above v
    if op == "<=":
        return Allowed(dist, high=v, high_inclusive=True)
    if op == "<":
        return Allowed(dist, high=v)
    if op == "~=":
        return Allowed(dist, v, _bump(v, max(0, len(v) - 2)))
    if op == "^":  # Poetry: the leftmost non-zero part may not change
        nonzero = next((i for i, p in enumerate(v) if p != 0), len(v) - 1)
        return Allowed(dist, v, _bump(v, nonzero))
    if op == "~":  # Poetry: ~4.36 is >=4.36,<4.37; ~4 is >=4,<5
        return Allowed(dist, v, _bump(v, min(1, len(v) - 1)))
    return None  # `!=` excludes one version: the range stays


def _before_release(bound: Allowed, release: Version) -> Allowed:
    """A clause naming a pre-release of ``release`` (PEP 440: ``2.4.0.dev20240324``, ``4.40.0rc1``,
    ``2.0.0a1`` sort below ``2.4.0``, ``4.40.0``, ``2.0.0``): a nightly or candidate built
    before the release has what the releases before it have, not what the release adds (torch's
    ``2.4.0.dev20240324`` of March 2024 has no ``torch.amp.custom_fwd``, added in May). Where the
    clause reaches up to the release (``==``, ``<=``), it now stops below it; where it starts at
    the release (``==``, ``>=``, ``~=``), it starts at the release before."""
    low, high, inclusive = bound.low, bound.high, bound.high_inclusive
    if low is not None and compare(low, release) == 0:
        low = _previous(release)
    if high is not None and compare(high, release) == 0:
        high, inclusive = release, False
    return replace(bound, low=low, high=high, high_inclusive=inclusive)


def _spec_text(spec: str) -> str:
    """A requirement as a reader writes it: ``>=4.3.2,<=4.3.2`` (a wheel's metadata) is ``==4.3.2``."""
    parts = spec.split(",")
    if len(parts) == 2 and parts[0].startswith(">=") and parts[1].startswith("<=") and parts[0][2:] == parts[1][2:]:
        return f"=={parts[0][2:]}"
    return spec


def _previous(release: Version) -> Optional[Version]:
    """The series a pre-release of ``release`` comes after, as a lowest version: ``2.4.0`` ->
    ``2.3``, ``4.40.1`` -> ``4.40.0``, ``5.0.0`` -> ``4``; None for ``0.0``."""
    parts = list(release)
    while parts and parts[-1] == 0:
        parts.pop()
    if not parts:
        return None
    parts[-1] -= 1
    return tuple(parts)


_REQUIREMENT = lazy(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*((?:(?:===|==|~=|!=|<=|>=|<|>|=)\s*[\w.*+!-]+\s*,?\s*)*)\s*(?:;.*)?$"
)


# `...transformers.git@v4.36.0` (a release tag) and `...transformers.git@0dcb46e7a4` (a commit)
_GIT_TAG = lazy(r"(?:\.git|/transformers|/trl|/peft|/accelerate)@v?(\d+(?:\.\d+)+)(?![\w.])")
_GIT_COMMIT = lazy(r"@([0-9a-f]{7,40})(?![\w.])")


def parse_requirement(line: str, source: str) -> Optional[Allowed]:
    """A requirement of one of :data:`READ_LIBRARIES` in PEP 508 form (``transformers[torch]>=4.36,<5;
    python_version>'3.8'``), or None. ``transformers @ git+...`` and a bare name allow any."""
    line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("git+") else line.strip()
    if not line or line.startswith("-"):
        return None
    at = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*@", line)
    if at is not None:
        dist = normalize(at.group(1))
        if dist not in READ_LIBRARIES:
            return None
        url = line.split(";")[0].strip()
        tag = _GIT_TAG().search(url)
        version = read_version(tag.group(1)) if tag is not None else None
        if version is not None:
            return Allowed(dist, version, version, True, url, source)
        commit = _GIT_COMMIT().search(url)
        return Allowed(dist, spec=url, source=source, commit=commit.group(1) if commit else "")
    git = re.search(r"github\.com/[\w.-]+/(transformers|trl|peft)(?:\.git)?(?=[@#\s]|$)", line)
    if git is not None:  # `git+https://github.com/huggingface/transformers[@v4.36.0]`
        tag = _GIT_TAG().search(line)
        version = read_version(tag.group(1)) if tag is not None else None
        if version is not None:
            return Allowed(git.group(1), version, version, True, line, source)
        commit = _GIT_COMMIT().search(line)
        # the main branch: the newest; a commit: one version, not known here
        return Allowed(git.group(1), spec=line, source=source, commit=commit.group(1) if commit else "")
    match = _REQUIREMENT().match(line)
    if match is None:
        return None
    dist = normalize(match.group(1))
    if dist not in READ_LIBRARIES:
        return None
    spec = match.group(3).strip()
    written = f"{match.group(1)}{spec}" if spec else match.group(1)
    return parse_spec(dist, spec, source, written)


# --- where requirements are written ----------------------------------------------------------
def _read(path: Path) -> Optional[str]:
    """A project file's text: UTF-8, or UTF-16 where it opens with that byte-order mark (a
    `pip freeze > requirements.txt` in Windows PowerShell writes UTF-16, which pip reads by its
    mark too)."""
    try:
        if path.is_file() and path.stat().st_size <= MAX_BYTES:
            data = path.read_bytes()
            if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                return data.decode("utf-16", errors="replace")
            return data.decode("utf-8-sig", errors="replace")
    except OSError:
        pass
    return None


def requirements_in_text(text: str, source: str) -> List[Allowed]:
    """Requirements of a requirements text (one per line; see ``_requirements_file`` for a
    file and what it includes)."""
    out = []
    for line in text.splitlines():
        found = parse_requirement(line, source)
        if found is not None:
            out.append(found)
    return out


def _quoted_requirements(text: str, source: str) -> List[Allowed]:
    """Quoted requirement strings anywhere in a file (``setup.py``'s ``install_requires``); those
    inside an ``extras_require={...}`` entry are that extra's (:attr:`Allowed.extra`)."""
    out = []
    names = "|".join(LIBRARIES)
    extras = _extras_spans(text) if "extras_require" in text else []
    for match in re.finditer(rf"""["']\s*((?:{names})(?![\w-])[^"'\n]*)["']""", text, re.IGNORECASE):
        extra = next((name for start, end, name in extras if start <= match.start() < end), None)
        if extra == "":
            continue  # an extra's own name (`"trl": [...]`), not a requirement
        found = parse_requirement(match.group(1), source)
        if found is not None:
            out.append(replace(found, extra=extra) if extra else found)
    return out


def _extras_spans(text: str) -> List[Tuple[int, int, str]]:
    """``(start, end, extra)``: where each entry of a ``setup.py``'s ``extras_require`` dict is
    written (``extras_require={"gpu": [...], "npu": [...]}``, or a dict bound to a name that
    ``extras_require=`` names), read with ``ast``, never run; [] where it does not parse. The
    keys are spans of their own, with the extra ``""``: an extra named after a library
    (``"trl": ["trl==0.8.0"]``) is no requirement of it."""
    import ast  # only for a setup.py that names extras

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:  # ast columns are UTF-8 bytes
        row = text[starts[line - 1]:starts[line]] if line < len(starts) else ""
        return starts[line - 1] + len(row.encode("utf-8")[:col].decode("utf-8", errors="replace"))

    dicts: Dict[str, ast.Dict] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            dicts.update((t.id, node.value) for t in node.targets if isinstance(t, ast.Name))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.keyword) or node.arg != "extras_require":
            continue
        table = dicts.get(node.value.id) if isinstance(node.value, ast.Name) else node.value
        if not isinstance(table, ast.Dict):
            continue
        for key, value in zip(table.keys, table.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and value.end_lineno is not None:
                out.append((offset(value.lineno, value.col_offset), offset(value.end_lineno, value.end_col_offset or 0), key.value))
                out.append((offset(key.lineno, key.col_offset), offset(key.end_lineno or key.lineno, key.end_col_offset or 0), ""))
    return out


def _pyproject(text: str, source: str) -> List[Allowed]:
    from ..knowledge import tomllib_module

    tomllib = tomllib_module()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return _quoted_requirements(text, source)
    strings: List[str] = []
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    strings.extend(s for s in project.get("dependencies", []) if isinstance(s, str))
    extras: List[Allowed] = []
    for name, group in (project.get("optional-dependencies") or {}).items():
        if isinstance(group, list):
            found = (parse_requirement(s, source) for s in group if isinstance(s, str))
            extras.extend(replace(r, extra=str(name)) for r in found if r is not None)
    for group in (data.get("dependency-groups") or {}).values():  # PEP 735 (uv)
        strings.extend(s for s in group if isinstance(s, str))
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    uv = tool.get("uv", {}) if isinstance(tool.get("uv"), dict) else {}
    for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
        strings.extend(s for s in uv.get(key, []) if isinstance(s, str))
    out = [r for r in (parse_requirement(s, source) for s in strings) if r is not None] + extras
    poetry = tool.get("poetry", {}) if isinstance(tool.get("poetry"), dict) else {}
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [g.get("dependencies") for g in (poetry.get("group") or {}).values() if isinstance(g, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            dist = normalize(name)
            if dist not in READ_LIBRARIES:
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    item = item.get("version", "*")
                if isinstance(item, str):
                    out.append(parse_spec(dist, item, source, f"{name} = \"{item}\""))
    return out


def _environment(text: str, source: str) -> List[Allowed]:
    """conda's ``- transformers=4.36`` (``=`` is a prefix match) and its ``pip:`` list."""
    out = []
    for line in text.splitlines():
        match = re.match(r"^\s*-\s*([^\s#]+(?:\s*[<>=!~,][^#]*)?)", line)
        if match is None:
            continue
        item = match.group(1).strip().strip("\"'")
        conda = re.match(r"^(?:[\w-]+::)?([A-Za-z0-9._-]+)=(?!=)([\w.*]+)$", item)
        if conda is not None:
            dist = normalize(conda.group(1))
            dist = CONDA_NAMES.get(dist, dist)
            if dist in READ_LIBRARIES:
                out.append(parse_spec(dist, "=" + conda.group(2).rstrip(".*"), source, item))
            continue
        conda_name = re.match(r"^(?:[\w-]+::)?([A-Za-z0-9._-]+)", item)
        if conda_name is not None and normalize(conda_name.group(1)) in CONDA_NAMES:
            item = CONDA_NAMES[normalize(conda_name.group(1))] + item[conda_name.end():]
        found = parse_requirement(item, source)
        if found is not None:
            out.append(found)
    return out


def _setup_cfg(text: str, source: str) -> List[Allowed]:
    """The requirements of a ``setup.cfg``: ``install_requires`` of ``[options]`` and every
    value of ``[options.extras_require]`` (one requirement a line). Nothing else of it: other
    tools keep their settings there too (isort's ``known_third_party = transformers`` is no
    requirement)."""
    import configparser  # only where a setup.cfg is read

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    # setuptools also reads the dashed spelling (deprecated)
    values = [parser.get("options", key, fallback="") for key in ("install_requires", "install-requires")]
    out = [r for value in values for r in requirements_in_text(value, source)]
    if parser.has_section("options.extras_require"):
        for name, value in parser.items("options.extras_require"):
            out.extend(replace(r, extra=name) for r in requirements_in_text(value, source))
    return out


_RST_CODE = lazy(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::")
# a README's prompt before a command (markdown.PROMPT_SIGNS: `$ `, `>> `, `(base) $ `...), and
# a root prompt `# `: a pin written after it is read either way
_PROMPT = lazy(rf"^\s*{PROMPT_ENVIRONMENT}(?:{PROMPT_SIGNS}|#)\s+")


# A line that is one code span and nothing else (```` ```pip install transformers==4.31.0``` ````,
# `` `pip install ...` ``): CommonMark reads it as inline code (a fence's info string holds no
# backtick), but it is a command the reader copies, as from a block.
_CODE_SPAN_LINE = lazy(r"^\s{0,3}(`{1,3})([^`]+?)\1\s*$")
# A code span inside a line of prose that holds an install command the line tells the reader to
# run ("* Install the allowed versions: `pip install transformers==4.45.1 peft==0.13.0`"): what
# comes before it is an instruction (it starts with the verb, or ends with a colon); "We once
# used `pip install peft==0.3.0`" tells a story
_CODE_SPAN = lazy(r"(`{1,3})([^`]+?)\1")
_INSTALL_COMMAND = lazy(r"^\s*(?:python3?\s+-m\s+)?(?:pip3?|uv\s+pip|conda|mamba)\s+install\s")
_INSTRUCTION = lazy(
    r"^\s*(?:[-*+•]|\d{1,2}[.)])?\s*(?:(?:then\s+|please\s+|first,?\s+)?(?:install|run|use|execute|type)\b.*|.*:\s*)$",
    re.IGNORECASE,
)


def readme_requirements(text: str, source: str) -> List[Allowed]:
    """The pins a README states: ``pip install transformers==4.31.0`` (or a range) on a line of a
    fenced code block (Markdown ```` ``` ```` / ``~~~``, reST ``.. code-block::``) or on a line
    that is one code span, or in a code span of an instruction that is an install command (``*
    Install: `pip install transformers==4.45.1 peft==0.13.0` ``), and the items of its requirements list
    (:func:`listed_requirements`), and the torch of an image of torch it names, in prose or a
    command ("run in a `nvidia/pytorch:22.08-py3` container", ``docker run ...
    nvcr.io/nvidia/pytorch:22.08-py3``: held-out review 40a, a molecular transformer's README). Prose
    that mentions a version is not a pin, nor a bare ``pip install transformers``."""
    lines: List[str] = []
    listings: List[Allowed] = []
    block: List[str] = []
    fence: Optional[str] = None
    rst_indent: Optional[int] = None
    for line in text.splitlines():
        if fence is not None:
            if closes(line, fence):
                fence = None
                listings.extend(_listing(block, source))
                block = []
            else:
                lines.append(_PROMPT().sub("", line, count=1))
                block.append(line)
            continue
        if rst_indent is not None:
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip())
            if indent > rst_indent:
                lines.append(_PROMPT().sub("", line, count=1))
                continue
            rst_indent = None
        fence = opening_fence(line)
        if fence is not None:
            continue
        directive = _RST_CODE().match(line)
        if directive is not None:
            rst_indent = len(directive.group(1))
            continue
        span = _CODE_SPAN_LINE().match(line)
        if span is not None:  # a line that is one code span: a command, as in a block
            lines.extend((span.group(2), ""))
        elif "`" in line:
            lines.extend(
                text for found in _CODE_SPAN().finditer(line)
                if _INSTALL_COMMAND().match(found.group(2)) and _INSTRUCTION().match(line[: found.start()])
                for text in (found.group(2), "")
            )
    lines.append("")  # an unclosed block ends with the file
    if fence is not None:
        listings.extend(_listing(block, source))
    found = (
        pip_requirements(lines, source) + conda_requirements(lines, source) + environment_pythons(lines, source)
        + listings + listed_requirements(text, source)
        + [replace(a, source=f"the image named in {source}") for a in image_torch(text)]
    )
    return [r for r in found if r.low is not None or r.high is not None]


# `torch==1.13.1`, `pytorch=1.13.1=py3.10_cuda11.6` (conda: `=` is a prefix match, then a build),
# `transformers>=4.30,<5`: one requirement alone on its line
_LISTING_LINE = lazy(
    r"^([A-Za-z][\w.-]*)\s*(?:\[[^\]]*\])?\s*((?:===|==|~=|!=|<=|>=|<|>|=)\s*[\w.*+!-]+"
    r"(?:\s*,\s*(?:===|==|~=|!=|<=|>=|<|>)\s*[\w.*+!-]+)*)(?:=[\w.*+-]+)?\s*$"
)


def _listing(block: List[str], source: str) -> List[Allowed]:
    """The pins of a fenced block that is a listing of requirements and nothing else: every line
    one requirement with a version (``python==3.10.9`` / ``pytorch==1.13.1`` / ``torchvision==0.14.1``:
    the environment a README says it was run in, a requirements file or ``pip freeze`` pasted in
    it). A block with anything else (a command, code) is read for its commands only."""
    found: List[Allowed] = []
    written = [line.split("#", 1)[0].strip() for line in block]
    written = [line for line in written if line]
    matches = [_LISTING_LINE().match(line) for line in written]
    if not written or not all(matches):
        return []
    for match in matches:
        dist = normalize(match.group(1))
        dist = CONDA_NAMES.get(dist, dist)
        if dist not in READ_LIBRARIES:
            continue
        spec = match.group(2).replace(" ", "")
        if spec.startswith("=") and not spec.startswith("=="):  # conda's `name=1.13`: that series
            spec = "=" + spec[1:].split("+", 1)[0].rstrip(".*")
        else:
            spec = spec.split("+", 1)[0] if "," not in spec else spec  # `==1.13.1+cu116`: that release
        found.append(parse_spec(dist, spec, f"the requirements listed in {source}", f"{match.group(1)}{match.group(2)}"))
    return found


# The headings whose lists state what the code needs: "## Requirements", "### Installation",
# "Dependencies", "Prerequisites", "Environment setup" (ATX, setext / reST underlined, or a line
# that is only a bold label or ends in a colon: "**Requirements**", "Requirements:").
_LIST_TOPIC = lazy(r"\b(?:requirements?|install(?:ation|ing)?|dependenc(?:y|ies)|prerequisites?|environment|setup|set up|software)\b", re.IGNORECASE)
_ATX = lazy(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_UNDERLINE = lazy(r"^\s{0,3}(?:={3,}|-{3,}|~{3,}|\^{3,})\s*$")
_LABEL = lazy(r"^\s{0,3}(?:\*\*|__)?([^*_:]{1,60}?)(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?\s*$")
_ITEM = lazy(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(.+?)\s*$")
_LINK = lazy(r"\[([^\]]*)\]\([^)]*\)")
# `PyTorch 2.0`, `torch >= 1.12`, `transformers==4.30.0`, `PyTorch: 2.0.1`, `PyTorch 2.0+`,
# `PyTorch version 1.13 (or newer)`: a distribution's name, then its version, then at most a floor
# ("or newer", "and above", "+") and a note ("(tested with CUDA 11.8)", "with CUDA 11.8").
_STATED = lazy(
    r"^(?P<name>(?:hugging\s?face\s+|🤗\s*)?[A-Za-z][\w.-]*)\s*:?\s*(?:version\s*|v(?=\d))?"
    r"(?P<op>===|==|~=|<=|>=|<|>|=)?\s*v?(?P<version>\d+\.\d+(?:\.\d+)*)(?P<plus>\+)?(?![\w.])(?P<tail>.*)$",
    re.IGNORECASE,
)
_FLOOR = lazy(r"^\(?\s*(?:or|and)\s+(?:newer|later|higher|above|greater|up)\s*\)?", re.IGNORECASE)
_NOTE = lazy(r"^(?:\(|with\b|on\b|for\b|\u2013|-|:)", re.IGNORECASE)
_ALTERNATIVE = lazy(r"\b(?:or|to|and)\s+v?\d|\d\s*(?:-|\u2013|~)\s*v?\d", re.IGNORECASE)
# the names a list writes for a library (the requirement names of LIBRARIES stand for themselves)
LISTED_NAMES = {**CONDA_NAMES, "huggingface-transformers": "transformers", "hugging-face-transformers": "transformers"}


def listed_requirements(text: str, source: str) -> List[Allowed]:
    """The versions a README's requirements list states: the items of a list under a heading
    about requirements, installation, dependencies or the environment (``### Requirements`` /
    ``* PyTorch 2.0``) that name one of :data:`LIBRARIES` and a version, and nothing else but a
    floor or a note. Read conservatively:

    - ``torch>=1.12`` / ``transformers==4.30.0`` (a specifier) as written;
    - ``PyTorch 2.0 (or newer)`` / ``PyTorch 2.0+`` / ``PyTorch 2.0 and above``: a floor;
    - ``PyTorch 2.0`` (a bare version): that release series, 2.0.x, as conda reads
      ``pytorch=2.0`` (and ``PyTorch 1.9.0``: 1.9.0). A list that writes "or newer" beside one
      requirement and not beside another states a version for the other; the code was
      written for that series, and what later releases deprecate is true only after an upgrade.

    A line of such a section that is not a list's item is read where it is one statement and
    nothing else (a Kaggle solution's "## SOFTWARE" section: ``Python 3.7.3`` on a line of its
    own, where no torch 2 installs: 47c). An item that names two versions of one library (``PyTorch 1.13 or 2.0``, ``1.12-2.0``),
    names it inside a sentence (``Install PyTorch 2.0 from pytorch.org``), or a version without
    a library (``CUDA 11.8``, ``Python 3.8``) states nothing. Prose outside such a list and the
    lists of other sections (a changelog's "- transformers 4.30 support") are not read."""
    out: List[Allowed] = []
    lines = text.splitlines()
    level: Optional[int] = None  # the open section's heading level (7: a label's)
    for i, line, code in fenced_lines(lines):
        if code:
            continue
        heading = _heading(line, lines[i + 1] if i + 1 < len(lines) else "")
        if heading is not None:
            depth, title = heading
            topic = bool(_LIST_TOPIC().search(title))
            if depth == 7:  # a label: opens a section where none is open, closes only a label's
                if level is None and topic:
                    level = 7
                elif level == 7 and not topic:
                    level = None
                continue
            if level is not None and level < 7 and depth > level:
                continue  # a sub-heading of the open section ("### Using pip" under "## Installation")
            level = depth if topic else None
            continue
        if level is None or _UNDERLINE().match(line):
            continue
        item = _ITEM().match(line)
        if item is not None:
            out.extend(_listed(item.group(1), source))
        elif line.strip():  # a line of its own, not a list's item: read where it is one statement alone
            alone = _listed_one(_LINK().sub(r"\1", line).replace("`", "").strip().rstrip(".;"), f"the requirements list in {source}")
            if alone is not None:
                out.append(alone)
    return out


def _heading(line: str, following: str) -> Optional[Tuple[int, str]]:
    """(level, title) of a heading line: ``## Title`` (its level), a line underlined by the next
    one (``===``: 1, ``---``: 2, else 3), a bold label alone on its line or a short label ending
    in a colon (7)."""
    atx = _ATX().match(line)
    if atx is not None:
        return len(atx.group(1)), atx.group(2)
    text = line.strip()
    if not text or _ITEM().match(line):
        return None
    if _UNDERLINE().match(following) and not _UNDERLINE().match(line):
        mark = following.strip()[0]
        return (1 if mark == "=" else 2 if mark == "-" else 3), text
    bold = text.startswith(("**", "__")) and text.rstrip(":").endswith(("**", "__"))
    if (bold or (text.endswith(":") and len(text.split()) <= 4)) and _LABEL().match(line):
        return 7, text
    return None


def _listed(item: str, source: str) -> List[Allowed]:
    """The versions one list item states (:func:`listed_requirements`)."""
    item = _LINK().sub(r"\1", item).replace("`", "").replace("**", "").replace("__", "").strip().rstrip(".;")
    if re.match(r"^(?:pip3?|conda)\s+install\b", item):
        return pip_requirements([item], source) + conda_requirements([item], source)
    where = f"the requirements list in {source}"
    whole = _listed_one(item, where, pep508=True)
    if whole is not None:
        return [whole]
    # the item's statements apart ("PyTorch 1.12.1, torchvision 0.13.1"); a note's commas stay
    # with it ("Transformers >= 2.0 (optional, used by some examples)")
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(item):
        depth += (ch == "(") - (ch == ")")
        if ch in ",;" and depth == 0:
            parts.append(item[start:i])
            start = i + 1
    parts.append(item[start:])
    parts = [q for p in parts for q in re.split(r"\s+and\s+(?!(?:above|later|newer|higher|up)\b)(?=[A-Za-z\U0001f917])", p)]
    return [r for r in (_listed_one(p, where) for p in parts if p.strip()) if r is not None]


def _listed_one(text: str, where: str, pep508: bool = False) -> Optional[Allowed]:
    if pep508:
        spaced = re.sub(r"\s*(===|==|~=|!=|<=|>=|<|>)\s*", r"\1", text)
        if re.match(r"^[A-Za-z][\w.-]*(?:===|==|~=|!=|<=|>=|<|>)", spaced):
            found = parse_requirement(spaced, where)
            return found if found is not None and (found.low is not None or found.high is not None) else None
        return None
    stated = _STATED().match(text.strip())
    if stated is None:
        return None
    name = normalize(re.sub(r"\s+", "-", stated.group("name").replace("\U0001f917", "huggingface ").strip()))
    dist = LISTED_NAMES.get(name, name)
    if dist not in LIBRARIES + PYTHON:
        return None
    tail = stated.group("tail").strip()
    floor = bool(stated.group("plus"))
    rest = _FLOOR().match(tail)
    if rest is not None:
        floor, tail = True, tail[rest.end():].strip()
    op, version = stated.group("op"), stated.group("version")
    if tail and (not _NOTE().match(tail) or _ALTERNATIVE().search(f"{version} {tail}")):
        return None
    if op is None:
        op = ">=" if floor else "="
    elif floor:
        return None  # `>=2.0 or newer`, `==2.0+`: not one reading
    written = text.strip()
    return parse_spec(dist, f"{op}{version}", where, written)


_CONDA = lazy(r"^(?:conda|mamba|micromamba)\s+(?:install|create)\s+(.*)$")
_CONDA_SPEC = lazy(r"^(?:[\w-]+::)?([A-Za-z0-9._-]+)(==?)([\w.*+]+)$")


def conda_requirements(lines: Iterable[str], where: str) -> List[Allowed]:
    """The pins of ``conda install pytorch==1.8.0 torchvision -c pytorch`` lines, and of ``conda
    create -n env python=3.8`` (conda's
    ``name=1.8`` is every 1.8.x, ``name==1.8.0`` that one; a ``+cu111`` build suffix is the
    same release); options and their values are skipped."""
    out = []
    valued = ("-c", "--channel", "-n", "--name", "-p", "--prefix")
    for word in (w for args in _install_args(lines, _CONDA) for w in _package_words(args, valued)):
        spec = _CONDA_SPEC().match(word)
        if spec is None:
            continue
        dist = normalize(spec.group(1))
        dist = CONDA_NAMES.get(dist, dist)
        if dist in READ_LIBRARIES:
            version = spec.group(3).split("+", 1)[0].rstrip(".*")
            out.append(parse_spec(dist, ("==" if spec.group(2) == "==" else "=") + version, f"a `conda` command in {where}", word))
    return out


# a container's build file: `Dockerfile`, `Dockerfile.gpu`, `pytorch.Dockerfile`
_DOCKERFILE = lazy(r"^(?:Dockerfile(?:\.[\w-]+)?|[\w-]*\.Dockerfile)$", re.IGNORECASE)
# the images of torch, named by their tag: the official ones by their torch release
# (`pytorch/pytorch:2.2.2-cuda12.1-cudnn8-runtime`), NVIDIA's NGC ones by the month they were
# released (`nvcr.io/nvidia/pytorch:22.11-py3`; a README writes `nvidia/pytorch:22.08-py3`)
_PYTORCH_IMAGE = r"(?:docker\.io/)?pytorch/pytorch:v?(\d+\.\d+(?:\.\d+)?)\b"
_NGC_IMAGE = r"(?:nvcr\.io/)?nvidia/pytorch:(\d{2})\.(\d{2})\b"
_IMAGE = lazy(rf"(?<![\w./-])(?:{_PYTORCH_IMAGE}|{_NGC_IMAGE})", re.IGNORECASE)
_FROM = lazy(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE | re.MULTILINE)
# `ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:22.10-py3` before the first `FROM`: what `FROM ${BASE_IMAGE}` builds
_GLOBAL_ARG = lazy(r"^\s*ARG\s+([A-Za-z_]\w*)=(\"[^\"]*\"|'[^']*'|\S+)", re.IGNORECASE)
_ARG_USE = lazy(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)")
# where a project keeps the files its container is built from, beside its root's own
_CONTAINER_FOLDERS = ("docker", ".devcontainer")


def folder_containers(folder: Path) -> List[Tuple[Allowed, Path]]:
    """The pins of the container a project builds to run its code, for a folder: each
    Dockerfile of the folder and of its ``docker/`` (``.devcontainer/``) folder, its ``RUN pip
    install torch==2.2.2`` lines (joined continuations, each command of an ``&&`` chain) and the
    torch of an official ``FROM pytorch/pytorch:2.2.2-...`` image."""
    out: List[Tuple[Allowed, Path]] = []
    for here in (folder, *(folder / name for name in _CONTAINER_FOLDERS)):
        try:
            names = sorted(n for n in os.listdir(here) if _DOCKERFILE().match(n))
        except OSError:
            continue
        for name in names:
            path = here / name
            out.extend((a, path) for a in dockerfile_requirements(_read(path) or "", path.relative_to(folder).as_posix()))
    return out


def dockerfile_requirements(text: str, shown: str) -> List[Allowed]:
    """What a Dockerfile installs: the pins of its ``RUN pip install torch==2.2.2`` commands
    (continuations joined, each command of an ``&&`` chain), and the torch of the image it is
    built from (an official ``pytorch/pytorch:2.2.2-...``, an NGC ``nvcr.io/nvidia/pytorch:22.11``),
    also where ``FROM ${BASE_IMAGE}`` names it through an ``ARG`` declared before the first ``FROM``
    (held-out review 40a: a graph transformer's Dockerfile, ``ARG FROM_IMAGE_NAME=nvcr.io/...``)."""
    commands = [part for line in _joined(text.splitlines()) for part in re.split(r"&&|;|\|\|", re.sub(r"^\s*RUN\s+", "", line))]
    out = [a for a in pip_requirements(commands, shown) if a.low is not None or a.high is not None]
    arguments = _global_arguments(text)
    for match in _FROM().finditer(text):
        image = _ARG_USE().sub(lambda use: _argument(use, arguments), match.group(1))
        out.extend(replace(a, source=f"the image {shown} is built from") for a in image_torch(image, anchored=True))
    return out


def _global_arguments(text: str) -> Dict[str, str]:
    """The default of each ``ARG`` a Dockerfile declares before its first ``FROM`` (the only ones
    a ``FROM`` line can read)."""
    found: Dict[str, str] = {}
    for line in text.splitlines():
        if re.match(r"^\s*FROM\s", line, re.IGNORECASE):
            break
        match = _GLOBAL_ARG().match(line)
        if match is not None:
            found[match.group(1)] = match.group(2).strip("\"'")
    return found


def _argument(use: "re.Match[str]", arguments: Dict[str, str]) -> str:
    """What ``${NAME}`` (``${NAME:-default}``, ``$NAME``) stands for: the argument's default, else
    the default written in the use, else nothing (an argument only a build command passes)."""
    name = use.group(1) or use.group(3)
    return arguments.get(name, use.group(2) or "")


def image_torch(text: str, anchored: bool = False) -> List[Allowed]:
    """The torch of each image of torch named in ``text`` (``pytorch/pytorch:2.2.2-cuda12.1``:
    that release; ``nvcr.io/nvidia/pytorch:22.11-py3``: :func:`ngc_torch`); ``anchored``: only
    an image ``text`` starts with (a ``FROM`` line's)."""
    out = []
    for match in _IMAGE().finditer(text):
        if anchored and match.start() != 0:
            break
        if match.group(1) is not None:
            out.append(parse_spec("torch", f"=={match.group(1)}", "an image", f"pytorch/pytorch:{match.group(1)}"))
        else:
            found = ngc_torch(int(match.group(2)), int(match.group(3)))
            if found is not None:
                out.append(found)
        if anchored:
            break
    return out


def ngc_torch(year: int, month: int) -> Optional[Allowed]:
    """The torch of NVIDIA's NGC PyTorch image of ``year.month`` (``22.11``), bounded by the
    release table: NGC builds the torch under development at the time (``1.13.0a0``, the
    development of the release after the newest one or that one's), so from the newest minor
    released by the end of that month to the next one. None outside the table's years."""
    from ..knowledge import release_dates

    minors = release_dates("torch")
    end = f"20{year:02d}-{month:02d}-31"
    released = [v for v, day in minors if day <= end]
    if not released or released[-1] == minors[-1][0]:
        return None  # before the table, or a month whose next release is not known yet
    newest = released[-1]
    following = minors[len(released)][0]
    written = f"nvcr.io/nvidia/pytorch:{year:02d}.{month:02d}"
    return Allowed("torch", tuple(newest), tuple(following), True, f"torch>={version_text(newest)},<={version_text(following)} ({written})", "")


# W&B saves the `pip freeze` of each run's environment: `wandb/run-<time>-<id>/files/requirements.txt`
RUN_RECORDS = "wandb"
MAX_RECORDED_RUNS = 20  # the newest, by name (a run folder's name starts with its start time)


def wandb_runs(records: str) -> List[str]:
    """The run folders W&B wrote in its folder ``records`` (``run-<time>-<id>``,
    ``offline-run-...``; not ``latest-run``, a link to one of them, nor its logs), in name order:
    the order the runs started. [] where there is no such folder."""
    try:
        return sorted(n for n in os.listdir(records) if n.startswith(("run-", "offline-run-")))
    except OSError:
        return []


def folder_recorded_runs(folder: Path) -> List[Tuple[Allowed, Path]]:
    """The library versions of the runs W&B recorded in ``folder`` (the folder a script was
    started from): each run's ``files/requirements.txt`` (``trl==0.7.11``), the environment
    the code ran in, each run one of the environments it is run in (:attr:`Allowed.extra`)."""
    records = folder / RUN_RECORDS
    out: List[Tuple[Allowed, Path]] = []
    for run in wandb_runs(str(records))[::-1][:MAX_RECORDED_RUNS]:
        path = records / run / "files" / "requirements.txt"
        text = _read(path)
        for found in requirements_in_text(text or "", f"{RUN_RECORDS}/{run}/files/requirements.txt"):
            if found.low is not None or found.high is not None:
                out.append((replace(found, extra=run), path))
    return out


def folder_readme(folder: Path) -> List[Tuple[Allowed, Path]]:
    """The pins of the README and the installation documents of ``folder`` (``INSTALL.md``,
    ``get_started.md``: see :func:`readme_requirements`), and those of the requirements files
    their install commands name (:func:`installed_files`)."""
    try:
        names = sorted(n for n in os.listdir(folder) if _README.match(n))
    except OSError:
        return []
    out: List[Tuple[Allowed, Path]] = []
    for name in names:
        text = _read(folder / name)
        # (a README that pins only in a fenced listing under a heading in another language,
        # "## 环境" then ```torch==2.5.0 / trl==0.16.0```, says "install" nowhere: 49 held-out)
        if text and ("install" in text or "pytorch:" in text or "==" in text or _LIST_TOPIC().search(text)):
            out.extend((r, folder / name) for r in readme_requirements(text, name))
            out.extend(installed_files(text, folder, folder / name))
    return out


# `pip install -r configs/requirements.txt`, `pip3 install --requirement=env/reqs.txt`: the file
# an install command reads (a README's or a setup script's)
_INSTALLS_FILE = lazy(
    r"(?:pip3?|uv\s+pip)\s+install\b[^\n`]*?(?:(?<!\S)-r\s*|--requirement[\s=]+)([^\s`'\"]+)"
)


def installed_files(text: str, folder: Path, where: Path) -> List[Tuple[Allowed, Path]]:
    """The requirements of the files that the install commands of ``text`` (a README or a
    setup script of ``folder``, at ``where``) install with ``-r``, relative to ``folder``: a file
    outside the folders the code's walk reads (review 33a: ``pip install -r
    configs/requirements.txt``, its ``transformers==4.34.1`` unread, nine deprecations told on
    code written for that version). A file of the folder itself is its own requirements."""
    out: List[Tuple[Allowed, Path]] = []
    seen: Set[Path] = set()
    for match in _INSTALLS_FILE().finditer(text):
        relative = match.group(1)
        path = folder / relative
        if "$" in relative or path.parent == folder or not path.is_file():
            continue
        shown = os.path.relpath(path, folder)
        source = f"`pip install -r {shown}`"
        out.extend((replace(r, source=source), where) for r, _ in _requirements_file(path, shown, seen))
    return out


# A shell script that sets up the project's environment, by its name or its folder's
# (`setup_env.sh`, `install.sh`, `environment_setup/create.sbatch`, `env/make_venv.bash`).
_SETUP_SCRIPT = lazy(r"(?:^|[-_.])(?:setup|install|env|environment|venv|conda)(?:[-_.]|$)", re.IGNORECASE)
_SHELL_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm")


def folder_setup_scripts(folder: Path, project: bool = True) -> List[Tuple[Allowed, Path]]:
    """The ``pip install`` pins of the environment setup scripts of ``folder``: a shell
    script named for it there, or one there that installs and launches nothing (47b's
    ``scripts.sh`` of ``pip install "transformers==4.34.0" ...`` and a capability check), or,
    in a project's root (``project``), any shell script of a folder directly in it named for it
    (review 27b: ``environment_setup/setup_env.sbatch`` installs
    ``transformers==${TRANSFORMERS_VERSION}`` with ``TRANSFORMERS_VERSION="4.41.2"`` above). A
    folder of unrelated checkouts above a project is no project: its folders named ``env`` or
    ``setup`` are other projects'. A script that launches a Python script and installs is that
    script's launcher (``shipped.py``): its installs are that script's, not the folder's."""
    from .launches import expanded_commands, launches

    scripts = _files_here_and_below(
        folder,
        lambda name: name.endswith(_SHELL_SUFFIXES),
        lambda name: project and bool(_SETUP_SCRIPT().search(name)),
        lambda name: name.endswith(_SHELL_SUFFIXES),
    )
    out: List[Tuple[Allowed, Path]] = []
    for script in scripts:
        text = _read(script)
        if not text or "install" not in text:
            continue
        if script.parent == folder and not _named_for_setup(script.name) and launches(text):
            continue  # a launcher: what it installs is for the script it runs
        shown = os.path.relpath(script, folder)
        out.extend((r, script) for r in pip_requirements(expanded_commands(text), shown))
        out.extend(installed_files(text, folder, script))
    return out


def _named_for_setup(name: str) -> bool:
    return name.endswith(_SHELL_SUFFIXES) and bool(_SETUP_SCRIPT().search(os.path.splitext(name)[0]))


def _files_here_and_below(
    folder: Path, here: Callable[[str], bool], below: Callable[[str], bool], inside: Callable[[str], bool]
) -> List[Path]:
    """The files of ``folder`` whose names ``here`` accepts and, in each folder directly in it
    whose name ``below`` accepts (never a hidden one), the files whose names ``inside``
    accepts: in name order, a folder's files at its place. Nothing where ``folder`` cannot be
    listed; a folder in it that cannot be listed adds nothing."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found: List[Path] = []
    for entry in entries:
        if here(entry.name) and entry.is_file():
            found.append(Path(entry.path))
        elif not entry.name.startswith(".") and below(entry.name) and entry.is_dir():
            try:
                found.extend(Path(p) for p in sorted(e.path for e in os.scandir(entry.path) if inside(e.name) and e.is_file()))
            except OSError:
                continue
    return found


# A pip freeze the project keeps of the environment it ran in, under a name that says so
# (`env/pipeline-rl-pip-freeze.txt`, `docs/requirements.train.lock`), not a requirements file a
# folder is installed from: read only where nothing else states the library (_decided's last step)
_SNAPSHOT = lazy(r"freeze|frozen|(?:^|[-_.])(?:lock|pinned)(?:[-_.]|$)", re.IGNORECASE)
_SNAPSHOT_SUFFIXES = (".txt", ".lock")
# the lock files of other tools (uv's and Poetry's are read beside their pyproject.toml)
_OTHER_LOCKS = frozenset({"uv.lock", "poetry.lock", "pipfile.lock", "pdm.lock", "yarn.lock", "cargo.lock", "flake.lock"})


def environment_snapshots(folder: Path) -> List[Tuple[Allowed, Path]]:
    """The pins of the pip freezes a project's root (``folder``) keeps, in it or in a folder
    directly in it (review 36a: ``env/pipeline-rl-pip-freeze.txt`` with transformers==5.5.4;
    held-out 33u: ``docs/requirements.train.lock`` with transformers==5.6.0 and trl==0.24.0, the
    training run's environment): a file named for a freeze or a lock whose every requirement is
    an exact pin, as ``pip freeze`` writes them. Several such files are environments of several
    runs: any of them."""
    files = _files_here_and_below(folder, lambda name: not name.startswith(".") and _is_snapshot(name), lambda name: True, _is_snapshot)
    out: List[Tuple[Allowed, Path]] = []
    for path in files:
        text = _read(path)
        if not text:
            continue
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "-"))]
        if len(lines) < 3 or not all(_FROZEN_LINE().match(line) for line in lines):
            continue  # not what `pip freeze` writes: a list of requirements to install
        shown = os.path.relpath(path, folder)
        out.extend((a, path) for a in (parse_requirement(line, shown) for line in lines) if a is not None and a.is_point)
    return out


# a line of `pip freeze`: `name==version` (`name[extra]==...`, `===`), or `name @ url` (a local
# or VCS install), with an environment marker at most
_FROZEN_LINE = lazy(r"^[A-Za-z0-9][\w.-]*(?:\[[^\]]*\])?\s*(?:===?\s*[\w.+!-]+|@\s*\S+)\s*(?:;.*)?$")


def _is_snapshot(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(_SNAPSHOT_SUFFIXES) and lower not in _OTHER_LOCKS and bool(_SNAPSHOT().search(lower))


def _is_project_folder(folder: Path) -> bool:
    """Whether a folder is a project's root: a repository, a package definition, or a
    requirements file (of any library)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(
        n in (".git", *REQUIREMENT_FILES) or is_requirements_file(n)
        for n in names
    )


def _requirements_file(path: Path, source: str, seen: Set[Path]) -> List[Tuple[Allowed, Path]]:
    """A requirements file's requirements, with the files its ``-r`` / ``-c`` lines include
    (relative to it, each once)."""
    resolved = path.resolve()
    if resolved in seen or len(seen) > 20:
        return []
    seen.add(resolved)
    text = _read(path)
    if not text:
        return []
    out = []
    for line in text.splitlines():
        include = re.match(r"^\s*(?:-r|--requirement|-c|--constraint)[\s=]+(\S+)", line)
        if include is not None:
            target = path.parent / include.group(1)
            out.extend(_requirements_file(target, target.name, seen))
            continue
        found = parse_requirement(line, source)
        if found is not None:
            out.append((found, path))
    return out


# The lock files of uv and Poetry: the exact version of every package the project installs,
# one `[[package]]` table each (`name = "transformers"` then `version = "5.14.1"`)
LOCK_FILES = ("uv.lock", "poetry.lock")
_READ_IN_FOLDER = frozenset({"requirements", "pyproject.toml", "setup.py", "setup.cfg", *LOCK_FILES})  # and conda files (_CONDA_FILE)
_LOCKED_PACKAGE = lazy(r'^\[\[package\]\]\s*\nname\s*=\s*"([^"\n]+)"\s*\nversion\s*=\s*"([^"\n]+)"', re.MULTILINE)


def lock_requirements(text: str, source: str) -> List[Allowed]:
    """The pins of a ``uv.lock`` / ``poetry.lock``: each read library's locked version, as a
    requirements file's ``==`` (a lock that resolves one library twice, for two platforms'
    markers, allows either)."""
    versions: Dict[str, List[str]] = {}
    for match in _LOCKED_PACKAGE().finditer(text):
        dist = normalize(match.group(1))
        if dist in READ_LIBRARIES and match.group(2) not in versions.setdefault(dist, []):
            versions[dist].append(match.group(2))
    return [
        parse_spec(dist, " || ".join(f"=={v}" for v in found), source, f"{dist}=={' or '.join(found)}")
        for dist, found in versions.items()
    ]


# A package's own declaration of its dependencies (what every install of it gets).
_DECLARING = frozenset({"pyproject.toml", "setup.py", "setup.cfg"})
# A folder's own requirements file, beside which a suffixed one (requirements-dev.txt,
# requirements_onnx_export.txt) is one optional install, as an extra is beside a package.
_MAIN_REQUIREMENTS = frozenset({"requirements.txt", "requirement.txt", "requirements.in"})
# requirements-lock.txt, requirements.frozen.txt: the whole environment pinned, not an extra
_LOCKED = lazy(r"lock|froz|freeze|pinned|constraint", re.IGNORECASE)


def _is_extra(path: Path, folder: Path) -> bool:
    """Whether a requirements file of ``folder`` is one optional install of the project beside
    its package: a file of its ``requirements/`` folder (``requirements/special-model.txt``), or
    a suffixed one (``requirements-<extra>.txt``); not ``requirements.txt`` nor a lock file. Its
    pins hold for that install (one model family's ``transformers==4.57.1``), not for the code
    the package's own range admits, so they do not narrow that range."""
    name = path.name.lower()
    if _LOCKED().search(name) or not name.endswith((".txt", ".in")):
        return False
    if path.parent.name.lower() == "requirements" and path.parent.parent == folder:
        return True
    return path.parent == folder and is_requirements_file(path.name) and name.rsplit(".", 1)[0] not in ("requirements", "requirement")


def folder_requirements(folder: Path) -> List[Tuple[Allowed, Path]]:
    """Every requirement of :data:`LIBRARIES` that the files of one folder write (also in a
    ``requirements/`` folder of it, and what ``-r`` lines include)."""
    out: List[Tuple[Allowed, Path]] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    seen: Set[Path] = set()
    for name in names:
        lower = name.lower()
        if is_requirements_file(name):
            out.extend(_requirements_file(folder / name, name, seen))
            continue
        yaml = lower.endswith((".yml", ".yaml"))  # a conda environment by its name (_CONDA_FILE) or its text
        if lower not in _READ_IN_FOLDER and not yaml:  # most names of a folder (a path for each costs more than the rest)
            continue
        path = folder / name
        if lower == "requirements" and path.is_dir():  # requirements/train.txt, requirements/base.txt
            try:
                inner = sorted(n for n in os.listdir(path) if n.lower().endswith((".txt", ".in")))
            except OSError:
                inner = []
            for n in inner:
                out.extend(_requirements_file(path / n, f"{name}/{n}", seen))
            continue
        if lower == "pyproject.toml":
            reader = _pyproject
        elif lower == "setup.py":
            reader = _quoted_requirements
        elif lower == "setup.cfg":
            reader = _setup_cfg
        elif lower in LOCK_FILES:
            reader = lock_requirements
        elif yaml:
            reader = _environment
        else:
            continue
        text = _read(path)
        if yaml and not _CONDA_FILE.match(name) and not (text and _CONDA_ONLY().search(text)):
            continue  # another name, and a training configuration's text: not an environment
        if text and (reader is not _environment or _CONDA_DEPENDENCIES().search(text)):
            out.extend((r, path) for r in reader(text, name))
    return out


# --- vendored copies ----------------------------------------------------------------------------
_VERSION_ASSIGN = lazy(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE)
_SETUP_NAME = lazy(r"""\bname\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _package_version(init: Path) -> Optional[Version]:
    text = _read(init)
    match = _VERSION_ASSIGN().search(text) if text else None
    return read_version(match.group(1)) if match else None


@dataclass(frozen=True)
class Vendored:
    """A copy of a library inside the tree: its folder, name and version."""

    folder: Path
    dist: str
    version: Optional[Version]


def vendored_at(folder: Path) -> Optional[Vendored]:
    """The library ``folder`` is a copy of: a package named after a library with a
    ``__version__`` (``transformers/__init__.py``), or a checkout whose ``setup.py`` /
    ``pyproject.toml`` names it (with ``src/<package>`` or ``<package>`` beside)."""
    name = normalize(folder.name)
    if name in VENDORED_LIBRARIES and (folder / "__init__.py").is_file():
        version = _package_version(folder / "__init__.py")
        if version is not None:
            return Vendored(folder, name, version)
    for marker in ("setup.py", "pyproject.toml"):
        text = _read(folder / marker)
        if not text:
            continue
        names = [normalize(n) for n in _SETUP_NAME().findall(text)]
        dist = next((n for n in names if n in VENDORED_LIBRARIES), None)
        if dist is None:
            continue
        package = dist.replace("-", "_")
        for init in (folder / "src" / package / "__init__.py", folder / package / "__init__.py"):
            if init.is_file():
                return Vendored(folder, dist, _package_version(init))
    return None


def _vendored_children(folder: Path, vendored_at=vendored_at) -> Tuple[Vendored, ...]:
    """Copies of a library right inside ``folder`` (or one level deeper: ``third_party/x``)."""
    out = []
    try:
        children = [folder / n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return ()
    for child in sorted(children):
        if not child.is_dir():
            continue
        found = vendored_at(child)
        if found is not None:
            out.append(found)
            continue
        if normalize(child.name) in ("third-party", "thirdparty", "vendor", "vendored", "external", "libs", "lib"):
            try:
                grandchildren = sorted(child / n for n in os.listdir(child))
            except OSError:
                continue
            out.extend(v for v in map(vendored_at, (g for g in grandchildren if g.is_dir())) if v is not None)
    return tuple(out)


# --- the file's own constraints -----------------------------------------------------------------
# a call on a line of code: `# check_min_version("4.12.0.dev0")`, commented out, states nothing
_REQUIRE_VERSION = lazy(r"""^[^#\n]*?\brequire_version(?:_core)?\(\s*[rbuf]?["']([^"']+)["']""", re.MULTILINE)
_CHECK_MIN = lazy(r"""^[^#\n]*?\bcheck_min_version\(\s*[rbuf]?["']([^"']+)["']""", re.MULTILINE)
_CHECK_MIN_FROM = lazy(r"^\s*from\s+([\w]+)[\w.]*\s+import\s+[^\n]*\bcheck_min_version\b", re.MULTILINE)
_PIP = lazy(r"^\s*(?:[%!]\s*)?(?:python3?\s+-m\s+)?(?:pip3?|uv\s+pip)\s+install\s+(.*)$")


# pip run by the code itself: `subprocess.check_call([sys.executable, "-m", "pip", "install", ...])`
# (also through a helper that adds the packages to such a list), or a shell line it runs,
# `os.system("pip install transformers==4.41.2")`: what a Kaggle notebook without `!` lines installs
_PIP_ARGV = lazy(r"""["'](?:pip3?|-m)["']\s*,\s*(?:["']pip3?["']\s*,\s*)?["']install["']""")
_PIP_SHELL = lazy(r"""\b(?:system|run|call|check_call|check_output|Popen|getoutput)\(\s*[fr]?["']([^"'\n]*\bpip3?\s+install\b[^"'\n]*)["']""")
# a requirement with a version, quoted: `"transformers==4.41.2"`, `'peft>=0.10,<0.12'`
_QUOTED_REQUIREMENT = lazy(
    r"""["']([A-Za-z][\w.-]*(?:\[[^\]"']*\])?\s*(?:===|==|~=|>=|<=|<|>)\s*[\w.*+!-]+"""
    r"""(?:\s*,\s*(?:==|!=|~=|>=|<=|<|>)\s*[\w.*+!-]+)*)["']"""
)


def _pip_run_by_the_code(source: str, where: str) -> List[Allowed]:
    """The versions a file installs by running pip itself (held-out 36u's F1: a notebook's
    ``pip_install(["transformers==4.41.2", ...])`` helper that calls ``subprocess.check_call([
    sys.executable, "-m", "pip", "install", "-q"] + pkgs)``): a shell line's packages, and, where
    the file builds pip's argument list, every quoted requirement with a version in it."""
    found: List[Allowed] = []
    run_by = f"`pip install` run by {where}"
    for match in _PIP_SHELL().finditer(source):
        line = match.group(1)
        found.extend(replace(a, source=run_by) for a in pip_requirements([line[line.index("pip"):]], where))
    if _PIP_ARGV().search(source):
        for match in _QUOTED_REQUIREMENT().finditer(source):
            parsed = parse_requirement(match.group(1), run_by)
            if parsed is not None:
                found.append(parsed)
    return found


def in_file_requirements(source: str, where: str = "this file") -> List[Allowed]:
    """``require_version("trl>=0.8.6,<=0.9.6")`` and ``check_min_version("4.36.0")`` (of the
    library it is imported from: transformers' examples, diffusers' check diffusers)."""
    out = []
    if "require_version" in source:
        for match in _REQUIRE_VERSION().finditer(source):
            found = parse_requirement(match.group(1), f"require_version(...) in {where}")
            if found is not None:
                out.append(found)
    if "install" in source and "pip" in source:
        out.extend(_pip_run_by_the_code(source, where))
    if "check_min_version" in source:
        origin = _CHECK_MIN_FROM().search(source)
        dist = normalize(origin.group(1)) if origin else "transformers"
        if dist in LIBRARIES:
            for match in _CHECK_MIN().finditer(source):
                version = read_version(match.group(1))
                if version is not None:
                    out.append(Allowed(dist, low=version, spec=f"{dist}>={match.group(1)}", source=f"check_min_version(...) in {where}"))
    return out


def pip_requirements(lines: Iterable[str], where: str = "this notebook", sequential: bool = False) -> List[Allowed]:
    """The requirements of ``%pip install`` / ``!pip install`` lines (options skipped; a line
    ending in a backslash goes on in the next). With ``-U`` / ``--upgrade`` a floor alone
    (``pip install -U "transformers>=4.37"``) installs the newest release, whatever the floor
    says: it reads as the bare name, the newest (review 27e); a pin or a ceiling still holds.
    ``sequential``: the lines run one after another (a notebook's cells up to a line of its
    code: :func:`install_segments`), and what a later command installs of a library is what the
    environment has from then on (:func:`_installed_after`); otherwise (a README's commands,
    which the reader picks from) every requirement is kept, to be met together."""
    out: List[Allowed] = []
    at: Dict[str, int] = {}  # sequential: the library → its entry in ``out``
    valued = ("-r", "-c", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--target", "-t")
    for args in _install_args(lines, _PIP):
        upgrade = bool(_UPGRADE().search(args))
        for word in _package_words(args, valued):
            found = parse_requirement(word, f"`pip install` in {where}")
            if found is not None and upgrade and found.high is None and found.low is not None and not found.commit:
                found = parse_requirement(found.dist, f"`pip install` in {where}")
            if found is None:
                continue
            if sequential and found.dist in at:
                out[at[found.dist]] = _installed_after(out[at[found.dist]], found, upgrade)
                continue
            at[found.dist] = len(out)
            out.append(found)
    return out


def _installed_after(before: Allowed, then: Allowed, upgrade: bool) -> Allowed:
    """What a library is after a second install command of it: ``-U`` installs what the second
    asks (``!pip install --upgrade transformers`` after ``transformers==4.38.2``: the newest);
    a version the first one's does not satisfy replaces it; a bare name, or a range the
    installed version already satisfies, changes nothing (pip: "Requirement already
    satisfied")."""
    if upgrade:
        return then
    if _unbounded(then):
        return before
    both = before.intersect(then)
    return then if both.is_empty else both


def install_segments(commands: Sequence[Tuple[int, str]], where: str = "this notebook") -> Tuple[Tuple[int, Tuple[str, ...]], ...]:
    """A notebook's code split where a later install changes a library it had installed
    (review 33a: ``transformers==4.38.2`` in the first cell, ``!pip install --upgrade
    transformers`` in the 47th; the cells between ran on 4.38.2, the cells after on the
    newest): ``(first row, the command lines that row's code runs after)`` per part, in order,
    the first part from row 1. ``commands``: ``(row, IPython line)`` in the order they run. A
    library's first install does not start a part (code before it cannot import it); where
    nothing is installed twice differently there is one part, and the answer is empty."""
    out: List[Tuple[int, Tuple[str, ...]]] = []
    lines = [line for _, line in commands]
    state: Dict[str, Allowed] = {}
    for n, (row, line) in enumerate(commands):
        if line.rstrip().endswith("\\"):
            continue  # the command goes on in the next line
        now = {a.dist: a for a in pip_requirements(lines[: n + 1], where, sequential=True)}
        if any(dist in state and now[dist] != state[dist] for dist in now):
            out.append((row, n))
        state = now
    if not out:
        return ()
    starts = [(1, 0), *out]
    ends = [n for _, n in out] + [len(lines)]
    return tuple((row, tuple(lines[:end])) for (row, _), end in zip(starts, ends))


_UPGRADE = lazy(r"(?<!\S)(?:-U|--upgrade)(?!\S)")


# An environment module a cluster job loads before it runs Python: `module load python/intel/3.8.6`,
# `module add Python/3.9.6-GCCcore-11.2.0`, `ml python3/3.10`.
_MODULE_LOAD = lazy(r"^\s*(?:module\s+(?:load|add)|ml)\s+(.*)$")
_PYTHON_MODULE = lazy(r"^python3?/(?:[\w.-]+/)*?(3\.\d{1,2})(\.\d{1,2})?(?![\d.]*\d)", re.IGNORECASE)


# A virtual environment made for one Python: `virtualenv .venv -p python3.8`, `virtualenv
# --python=python3.10 env`, `python3.8 -m venv .venv`, `uv venv --python 3.11`, `pyenv install 3.8.10`
_ENVIRONMENT_PYTHON = lazy(
    r"^\s*(?:virtualenv\b.*?(?:-p|--python)[\s=]+(?:\S*/)?python(3\.\d{1,2})(\.\d{1,2})?\b"
    r"|(?:\S*/)?python(3\.\d{1,2})\s+-m\s+(?:venv|virtualenv)\b"
    r"|uv\s+venv\b.*?(?:-p|--python)[\s=]+(?:python|cpython-?)?(3\.\d{1,2})(\.\d{1,2})?\b"
    r"|pyenv\s+(?:install|virtualenv)\s+(?:-\S+\s+)*(3\.\d{1,2})(\.\d{1,2})?\b)"
)


def environment_pythons(lines: Iterable[str], where: str) -> List[Allowed]:
    """The Python a command that makes the project's environment names (review 36u's F1:
    ``virtualenv .venv -p python3.8`` in a README, where transformers stops at 4.46.3): that
    release, or the series where no patch is named, as ``conda create -n env python=3.8`` is read."""
    out = []
    for line in lines:
        found = _ENVIRONMENT_PYTHON().match(line)
        if found is None:
            continue
        groups = [g for g in found.groups() if g]
        version = groups[0] + (groups[1] if len(groups) > 1 else "")
        out.append(parse_spec("python", ("==" if len(groups) > 1 else "=") + version, f"an environment command in {where}", f"python{version}"))
    return out


def module_load_pythons(lines: Iterable[str], where: str) -> List[Allowed]:
    """The Python a job script's ``module load python/<...>/3.8.6`` gives what it runs after it
    (review 27e: an NYU HPC project whose jobs load Python 3.8.6, where transformers stops at
    4.46.3): that release, or the series where no patch is named."""
    out = []
    for line in lines:
        found = _MODULE_LOAD().match(line)
        if found is None:
            continue
        for word in found.group(1).split():
            version = _PYTHON_MODULE().match(word)
            if version is None:
                continue
            spec = f"python=={version.group(1)}{version.group(2)}" if version.group(2) else f"python=={version.group(1)}.*"
            parsed = parse_requirement(spec, f"`module load {word}` in {where}")
            if parsed is not None:
                out.append(parsed)
    return out


def _install_args(lines: Iterable[str], command: Callable[[], "re.Pattern"]) -> Iterator[str]:
    """What follows ``install`` (group 1) in each install command ``command()`` matches,
    continuation lines joined."""
    for line in _joined(lines):
        match = command().match(line.strip())
        if match is not None:
            yield match.group(1)


def _package_words(args: str, valued: Tuple[str, ...]) -> Iterator[str]:
    """The package words of an install command's arguments: options, and the value after each
    option in ``valued`` (``-c pytorch``, ``-r reqs.txt``), skipped."""
    import shlex  # only where an install command is read

    try:
        words = shlex.split(args, comments=True)
    except ValueError:
        words = args.split()
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word in valued:
            skip_next = True
            continue
        if word.startswith("-") or word in ("&&", "|", ";"):
            continue
        yield word


def _joined(lines: Iterable[str]) -> List[str]:
    """Shell lines with their backslash continuations joined."""
    joined: List[str] = []
    pending = ""
    for line in lines:
        text = line.rstrip("\r\n")
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        joined.append(pending + text)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def launched_scripts(lines: Iterable[str], folder: str) -> List[str]:
    """The Python scripts a notebook's shell lines run (``!python scripts/train.py``,
    ``!torchrun --nproc_per_node 8 train.py``, ``!accelerate launch x.py``, ``%run x.py``),
    as absolute paths seen from the notebook's folder (where its kernel runs); the command
    lines are read by ``launches.py``, which steps over the launchers' options and env prefixes."""
    from .launches import launches, scripts_of

    return scripts_of(launches("\n".join(line.rstrip("\r\n") for line in lines)), (folder,))


def any_of(found: Iterable[Allowed]) -> List[Allowed]:
    """One range per library for several runs, each with its own pins: any of them."""
    out: Dict[str, Allowed] = {}
    for allowed in found:
        out[allowed.dist] = out[allowed.dist].hull(allowed) if allowed.dist in out else allowed
    return list(out.values())


def _combine(found: List[Allowed]) -> Optional[Allowed]:
    """One range from several statements of one place: all at once, or (where they contradict,
    alternatives such as requirements-old.txt / requirements-new.txt) any of them."""
    if not found:
        return None
    out, either = found[0], False
    for other in found[1:]:
        if other.described == out.described:
            continue  # the same requirement twice (two optional groups): one statement
        both = out.intersect(other)
        if both.is_empty:
            out, either = out.hull(other), True
        else:
            out = both
    return replace(out, either=True) if either else out


def _unbounded(allowed: Allowed) -> bool:
    """A requirement with no version (``transformers``, or ``-U "transformers>=4.37"``)."""
    return allowed.low is None and allowed.high is None and not allowed.commit


def _up_to_the_newest(project: Allowed, installed: Allowed) -> Allowed:
    """The project's range, and the newest release a run installs with no version (review
    33a, held-out 31u: a Colab notebook's ``!pip install -U transformers trl`` under a root
    ``requirements.txt`` that pins ``transformers==4.38.2`` for the other notebooks): the code
    runs with either. Its lowest version stays the project's (what a fix may write)."""
    return Allowed(
        project.dist, project.low, None, False, f"{project.described} or the newest",
        f"{project.source}, and {installed.source}",
    )


def _alternatives(mentions: List[Tuple[Allowed, Path]]) -> Allowed:
    """One range from the extras of a declaration that each name a library: the statements of
    one extra all at once (:func:`_combine`), any of the extras."""
    groups: Dict[str, List[Allowed]] = {}
    for r, _ in mentions:
        groups.setdefault(r.extra, []).append(r)
    return _hull([_combine(found) for found in groups.values()])


def _hull(ranges: List[Allowed]) -> Allowed:
    """The versions any of ``ranges`` allows (one range, from the lowest to the highest)."""
    out = ranges[0]
    for other in ranges[1:]:
        out = out.hull(other)
    differ = any(not _same_range(r, ranges[0]) for r in ranges[1:])
    return replace(out, either=True) if differ else out


# the suffix of a requirements file written for one environment of several (`requirements-gpu.txt`,
# `requirements_colab.txt`), where no plain requirements.txt says what every install has
_ENVIRONMENT_SUFFIX = lazy(
    r"^requirements?[-_.](?:cpu|gpu|cuda\d*|cu\d+|rocm\d*|mps|mac(?:os)?|apple|tpu|xpu|npu|colab|kaggle|local|cloud|"
    r"cluster|hpc|slurm|docker|aws|gcp|azure|linux|windows|win)\.(?:txt|in)$",
    re.IGNORECASE,
)


def _environment_files(mentions: List[Tuple[Allowed, Path]], folder: Path) -> bool:
    """Whether the statements of a library come from two or more requirements files of
    ``folder``, each written for one environment (``requirements-cpu.txt``, ``requirements-gpu.txt``)."""
    files = {p for _, p in mentions}
    return len(files) > 1 and all(p.parent == folder and _ENVIRONMENT_SUFFIX().match(p.name) for p in files)


def _either_file(mentions: List[Tuple[Allowed, Path]], newest: Optional[Allowed]) -> Allowed:
    """One range from several files' statements of a library: each file's all at once, any file.
    A file that names the library with no version installs the newest release (``newest``: what
    a check falls back to where nothing is stated), so the range reaches up to it and no further."""
    groups: Dict[Path, List[Allowed]] = {}
    for r, p in mentions:
        groups.setdefault(p, []).append(r)
    ranges = [_combine(found) for found in groups.values()]
    if newest is not None and newest.low is not None:
        ranges = [
            replace(Allowed.point(r.dist, newest.low, r.source), spec=f"{r.dist} (the newest: {version_text(newest.low)})")
            if _unbounded(r) else r
            for r in ranges
        ]
    return _hull(ranges)


def _same_range(a: Allowed, b: Allowed) -> bool:
    return (a.low, a.high, a.high_inclusive, a.commit, a.newest) == (b.low, b.high, b.high_inclusive, b.commit, b.newest)


def _deciding(mentions: List[Tuple[Allowed, Path]]) -> Tuple[Allowed, List[Path]]:
    """One range from a folder's statements of a library (``_combine``), as the statements that
    decide it say it, with the files they are written in: where one statement alone states the
    whole range (``transformers==5.4.0`` in requirements.txt beside ``transformers>=5.4.0`` in
    pyproject.toml), that statement and the files that write it so; else every statement, and
    every file. The first file alone would name pyproject.toml for requirements.txt's pin."""
    combined = _combine([r for r, _ in mentions])
    alone = next((r for r, _ in mentions if _same_range(r, combined)), None)
    if alone is not None:
        return alone, [p for r, p in mentions if r.described == alone.described and _same_range(r, combined)]
    return combined, [p for _, p in mentions]


def _files(paths: List[Path], start: Path) -> str:
    """``../pyproject.toml and ../requirements.txt``: each file once, in order."""
    return " and ".join(dict.fromkeys(_shown(p, start) for p in paths))


# --- the resolver ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Targets:
    """What one file targets: a range per library, and the library it is part of (a vendored
    copy, or the library's own repository), if any: the rows about that library's API do not
    judge its own code (it defines them, at its own version)."""

    versions: Dict[str, Allowed]
    library_code: Optional[Vendored] = None

    def of(self, dist: str) -> Allowed:
        return self.versions.get(dist) or Allowed.unknown(dist)


class VersionResolver:
    """Per-file targets, the file system read once per folder (one per join)."""

    def __init__(self, configured: Optional[Dict[str, Allowed]] = None, installed: Optional[Dict[str, Allowed]] = None) -> None:
        self.configured = configured or {}
        self.installed = installed or {}
        self._folders: Dict[Path, List[Tuple[Allowed, Path]]] = {}
        self._readmes: Dict[Path, List[Tuple[Allowed, Path]]] = {}
        self._setups: Dict[Path, List[Tuple[Allowed, Path]]] = {}  # folder → folder_setup_scripts
        self._frozen: Dict[Path, List[Tuple[Allowed, Path]]] = {}  # folder → environment_snapshots
        self._built: Dict[Path, List[Tuple[Allowed, Path]]] = {}
        self._runs: Dict[Path, List[Tuple[Allowed, Path]]] = {}
        self._read: Set[str] = set()
        self._copies: Dict[Path, Optional[Vendored]] = {}  # per join: an editor's later run sees edits
        self._libraries: Dict[str, Optional[Vendored]] = {}  # file → the library its code is (library_code)
        self._children: Dict[Path, Tuple[Vendored, ...]] = {}
        self._walks: Dict[Tuple[Path, str], Optional[Allowed]] = {}
        self._aboves: Dict[Tuple[Path, str], Optional[tuple]] = {}  # (folder, dist) → _above's answer
        self._roots: Dict[Path, bool] = {}
        self._targets: Dict[Tuple[str, Tuple[Allowed, ...]], Targets] = {}  # (folder, stated in the file) → targets

    def _vendored_at(self, folder: Path) -> Optional[Vendored]:
        if folder not in self._copies:
            self._copies[folder] = vendored_at(folder)
        return self._copies[folder]

    def _vendored_children(self, folder: Path) -> Tuple[Vendored, ...]:
        if folder not in self._children:
            self._children[folder] = _vendored_children(folder, self._vendored_at)
        return self._children[folder]

    def looked_for(self) -> List[str]:
        """The requirement files read, and the usual ones looked for (a cached result depends
        on them)."""
        return sorted(self._read)

    def _requirements(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        if folder not in self._folders:
            found = folder_requirements(folder)
            self._read.update(str(p) for _, p in found)
            # the usual names, found or not: one written later changes what a file targets
            self._read.update(str(folder / n) for n in ("requirements.txt", *REQUIREMENT_FILES, *LOCK_FILES))
            self._folders[folder] = found
        return self._folders[folder]

    def _containers(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        found = self._built.get(folder)
        if found is None:
            found = self._built[folder] = folder_containers(folder)
            self._read.update(str(p) for _, p in found)
            self._read.add(str(folder / "Dockerfile"))  # one written later may pin
        return found

    def _recorded(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        return self._kept(self._runs, folder, folder_recorded_runs)

    def _kept(self, table: Dict[Path, List[Tuple[Allowed, Path]]], folder: Path, read) -> List[Tuple[Allowed, Path]]:
        """``read(folder)``, once per folder, its files noted as read (the side files of the run)."""
        found = table.get(folder)
        if found is None:
            found = table[folder] = read(folder)
            self._read.update(str(p) for _, p in found)
        return found

    def _readme(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        if folder not in self._readmes:
            found = folder_readme(folder)
            self._read.update(str(p) for _, p in found)
            self._read.add(str(folder / "README.md"))  # one written later may pin
            self._readmes[folder] = found
        return self._readmes[folder]

    def _setup_scripts(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        return self._kept(self._setups, folder, lambda f: folder_setup_scripts(f, self._is_root(f)))

    def _snapshots(self, folder: Path) -> List[Tuple[Allowed, Path]]:
        return self._kept(self._frozen, folder, environment_snapshots)

    def _is_root(self, folder: Path) -> bool:
        if folder not in self._roots:
            self._roots[folder] = _is_project_folder(folder)
        return self._roots[folder]

    def _project(self, start: Path, dist: str) -> Optional[Allowed]:
        """The nearest folder's requirement of ``dist``, else a vendored copy of it beside
        (once per folder: the files of a folder share it)."""
        key = (start, dist)
        if key not in self._walks:
            self._walks[key] = self._walk(start, dist)
        return self._walks[key]

    def _walk(self, start: Path, dist: str) -> Optional[Allowed]:
        """The first folder from ``start`` up (to the repository's ``.git``) that decides the
        range of ``dist`` (:meth:`_decided`), its files named as seen from ``start``. The folders
        above ``start`` answer the same for every folder below them: their answer is kept per
        folder (:meth:`_above`), so a package's hundreds of folders do not each walk up again."""
        found = self._decided(start, dist, True)
        if found is None and not (start / ".git").exists() and start.parent != start:
            found = self._above(start.parent, dist)
        if found is None:
            return None
        kind, value, paths = found
        if kind == "copy":
            return Allowed.point(dist, value.version, f"the copy of {dist} in {_shown(value.folder, start)}")
        return replace(value, source=f"{kind}{_files(paths, start)}")

    def _above(self, folder: Path, dist: str):
        """:meth:`_decided` of the first folder from ``folder`` up that decides ``dist`` (as a
        folder above the file's: a copy there counts only in a project's root), None when none
        does below a ``.git``; kept for every folder of the way."""
        way = []
        found = None
        while True:
            key = (folder, dist)
            if key in self._aboves:
                found = self._aboves[key]
                break
            way.append(key)
            found = self._decided(folder, dist, False)
            if found is not None or (folder / ".git").exists() or folder.parent == folder:
                break
            folder = folder.parent
        for key in way:
            self._aboves[key] = found
        return found

    def _decided(self, folder: Path, dist: str, start: bool):
        """What ``folder`` says of ``dist`` (``start``: the file's own folder): ``("", range,
        files)`` for its requirement files, ``("copy", the copy, ())`` for a vendored copy,
        ``("`pip install` in ", range, files)`` for its README; None when it says nothing."""
        mentions = [(r, p) for r, p in self._requirements(folder) if r.dist == dist]
        if any(p.name.lower() in _DECLARING or (p.name.lower() in _MAIN_REQUIREMENTS and p.parent == folder) for _, p in mentions):
            # the package, or the folder's own requirements.txt, names the library itself: an
            # extra's pin (requirements_onnx_export.txt's torch==1.13.1) does not narrow it
            mentions = [(r, p) for r, p in mentions if not _is_extra(p, folder)]
        if any(not r.extra for r, _ in mentions):
            # the package names the library for every install: an extra (`[npu]`: torch==2.1.0
            # for another accelerator's build) is one optional install and does not narrow it
            mentions = [(r, p) for r, p in mentions if not r.extra]
        elif len({r.extra for r, _ in mentions}) > 1:
            # only extras name it: each is one install the user chooses (`pip install .[gpu]`
            # or `.[npu]`), so the code runs with any of their versions
            return "", _alternatives(mentions), list(dict.fromkeys(p for _, p in mentions))
        if _environment_files(mentions, folder):
            # only `requirements-cpu.txt` and `requirements-gpu.txt` name it (no requirements.txt):
            # one environment each, the code runs in either (review 38's M1: the CPU notebooks
            # install the first, unpinned; the Colab GPU phase the second, transformers<4.45)
            return "", _either_file(mentions, self.installed.get(dist)), list(dict.fromkeys(p for _, p in mentions))
        if mentions:
            combined, paths = _deciding(mentions)
            return "", combined, paths
        # a copy beside the code: in its own folder, or in a folder that is a project's root
        # (a sibling checkout in a folder of unrelated downloads is not this code's library)
        looks_like_root = start or self._is_root(folder)
        copies = self._vendored_children(folder) if looks_like_root else ()
        copy = next((v for v in copies if v.dist == dist and v.version), None)
        if copy is not None:
            return "copy", copy, ()
        # then what the container the project builds to run it installs (its Dockerfile)
        built = [(r, p) for r, p in self._containers(folder) if r.dist == dist]
        if built:
            combined, paths = _deciding(built)
            return "", combined, paths
        # then what the runs W&B recorded here ran with (the environment of each, any of them)
        recorded = [(r, p) for r, p in self._recorded(folder) if r.dist == dist]
        if recorded:
            return "", _alternatives(recorded), list(dict.fromkeys(p for _, p in recorded))[:1]
        # then what the folder's README installs in its code blocks
        stated = [(r, p) for r, p in self._readme(folder) if r.dist == dist]
        if stated:
            combined, paths = _deciding(stated)
            first = stated[0][0].source
            if first.startswith("`pip install -r "):
                how = first  # a requirements file the README installs (`installed_files`)
            else:
                how = next(
                    (h for h in ("a `conda` command", "an environment command", "the requirements list", "the image named") if first.startswith(h)),
                    "`pip install`",
                )
            return f"{how} in ", combined, paths
        # then what its environment setup scripts install
        installed = [(r, p) for r, p in self._setup_scripts(folder) if r.dist == dist]
        if installed:
            combined, paths = _deciding(installed)
            return "`pip install` in ", combined, paths
        # last, in a project's root, the pip freezes it keeps of the environments it ran in
        frozen = [(r, p) for r, p in self._snapshots(folder) if r.dist == dist] if looks_like_root else []
        if frozen:
            return "the environment frozen in ", _alternatives(frozen), list(dict.fromkeys(p for _, p in frozen))
        return None

    def targets(
        self, path: str, stated: Iterable[Allowed] = (), notebook_lines: Iterable[str] = (), run: Iterable[Allowed] = ()
    ) -> Targets:
        """``stated``: what the file states itself (:func:`in_file_requirements` of its text,
        as its facts record it); ``run``: what the runs this file is part of install (a
        notebook's ``%pip install`` lines, where the notebook launches the file or a script
        that imports it)."""
        folder, name = os.path.split(os.path.abspath(path))
        inline = list(stated) + pip_requirements(notebook_lines, name, sequential=True) + list(run)
        # the answer depends on the file only through its folder and what it states itself: the
        # files of a folder that state nothing share one (a package's thousands of modules)
        key = (folder, tuple(inline))
        found = self._targets.get(key)
        if found is None:
            found = self._targets[key] = self._targets_in(Path(folder), inline)
        return found

    def library_code(self, path: str) -> Optional[Vendored]:
        """The library whose code the file at ``path`` is (a vendored copy, or the library's own
        repository): the ``library_code`` of its :meth:`targets`, without working out the rest."""
        if path not in self._libraries:
            self._libraries[path] = self._library_at(Path(os.path.dirname(os.path.abspath(path))))
        return self._libraries[path]

    def _library_at(self, here: Path) -> Optional[Vendored]:
        return next((v for v in map(self._vendored_at, (here, *here.parents)) if v is not None), None)

    def _stated(self, here: Path, dist: str, inline: List[Allowed]) -> Optional[Allowed]:
        """What the file (``inline``) and its project (from ``here`` up) state of ``dist``, both
        where both do; None where neither states a version (`transformers`, the main branch:
        the newest). Where the run installs the library with no version (a notebook's ``!pip
        install -U transformers trl``) and nothing of the file or its run bounds it, that run has
        the newest release whatever the project pins for its other runs: the project's range
        reaches up to the newest (:func:`_up_to_the_newest`)."""
        mine = [r for r in inline if r.dist == dist]
        own = _combine(mine)
        project = self._project(here, dist)
        if own is not None and project is not None and _unbounded(own) and any(r.source.startswith("`pip install`") for r in mine):
            if project.high is not None and not project.commit:
                return _up_to_the_newest(project, own)
        if own is not None and project is not None:
            both = own.intersect(project)
            found = both if not both.is_empty else own
            found = replace(found, source=f"{own.source} and {project.source}" if found is both else own.source)
        else:
            found = own or project
        if found is not None and _unbounded(found):
            return None
        return found

    def _targets_in(self, here: Path, inline: List[Allowed]) -> Targets:
        library = self._library_at(here)
        versions: Dict[str, Allowed] = {}
        for dist in LIBRARIES:
            if dist in self.configured:
                versions[dist] = self.configured[dist]
                continue
            if library is not None and library.dist == dist and library.version:
                versions[dist] = Allowed.point(dist, library.version, f"the library's own version ({library.folder.name})")
                continue
            versions[dist] = self._stated(here, dist, inline)
        # what the project states, before anything is implied from it: the pins that narrow
        # the others (one step: a range implied from a pin implies nothing further); torch's
        # companions among them
        stated = {d: a for d, a in versions.items() if a is not None}
        for dist in COMPANIONS + PYTHON + HUB:
            found = self._stated(here, dist, inline)
            if found is not None:
                stated[dist] = found
        narrowing: Dict[str, Allowed] = {}
        for dist in NARROWED:
            if dist in self.configured or (library is not None and library.dist == dist):
                continue
            now = versions.get(dist)
            narrow = compatible_range(dist, _shared_pins(stated, now))
            if narrow is None:
                continue
            if now is None:
                narrowing[dist] = narrow  # what the fallback must be among
            elif not now.commit:
                both = now.intersect(narrow)
                if not both.is_empty and not _same_range(both, now):
                    versions[dist] = replace(
                        both, spec=f"{dist}{_bounds_text(both)}", source=now.source, note=f"{now.where()}; {narrow.note}"
                    )
        if "torch" not in self.configured:
            versions["torch"] = implied_torch(versions.get("torch"), stated)
        for dist in LIBRARIES:
            found = versions.get(dist)
            if found is None and dist in narrowing:
                found = _fallback_among(self.installed.get(dist), narrowing[dist])
            versions[dist] = found or self.installed.get(dist) or Allowed.unknown(dist)
        return Targets(versions, library)


def _shared_pins(pins: Dict[str, Allowed], stated: Optional[Allowed]) -> Dict[str, Allowed]:
    """The pins that may narrow a library the project states as ``stated``: all of them, except
    where its statements contradict each other (:attr:`Allowed.either`, one environment per
    file), the pins of some but not all of those files. trl==0.18.1 in environment.yml says
    which transformers that environment has (>=4.50), and nothing of requirements.txt's (<4.38);
    a pin every environment shares (a README's Python, a file that states nothing of the
    library) narrows them all."""
    if stated is None or not stated.either:
        return pins
    files = set(stated.source.split(" and "))
    return {d: a for d, a in pins.items() if not set(a.source.split(" and ")) < files}


def _bounds_text(allowed: Allowed) -> str:
    """``>=4.3,<4.34``: the range's ends as a specifier."""
    parts = [f">={version_text(allowed.low)}"] if allowed.low is not None else []
    if allowed.high is not None:
        parts.append(f"{'<=' if allowed.high_inclusive else '<'}{version_text(allowed.high)}")
    return ",".join(parts)


def _fallback_among(installed: Optional[Allowed], narrow: Allowed) -> Optional[Allowed]:
    """What an unstated library targets where the project's pins of its neighbours narrow it:
    the installed version while they admit it (None: the usual fallback), else the versions
    they admit; with nothing installed, those versions where they end below the newest."""
    if installed is not None and installed.is_point:
        return None if narrow.admits(installed.low) else narrow
    return narrow if narrow.high is not None else None


@lru_cache(maxsize=None)
def _required(dist: str, spec: str) -> Allowed:
    """A requirement of the table, parsed once."""
    return parse_spec(dist, spec)


_COMPATIBLE: Dict[Tuple[str, Tuple[Allowed, ...]], Optional[Allowed]] = {}


def compatible_range(dist: str, pins: Dict[str, Allowed]) -> Optional[Allowed]:
    """:func:`_compatible_range`, once per library and pins (the folders of a project share them)."""
    key = (dist, tuple(a for _, a in sorted(pins.items())))
    if key not in _COMPATIBLE:
        _COMPATIBLE[key] = _compatible_range(dist, pins)
    return _COMPATIBLE[key]


def _admitted_rows(dist: str, pin: Allowed) -> List[Tuple[Version, Dict[str, str]]]:
    """``(minor, what it requires)`` of each release line of ``dist`` the pin admits; for a pin of
    exact releases (``trl==0.12.2``), each release's own requirements where the table has them
    (a patch release that caps a library its line's first release does not: the line's row
    bounds neither end)."""
    from ..knowledge import release_requirements, requirement_rows

    exact = pin.points or ((pin.low,) if pin.is_point else ())
    out: List[Tuple[Version, Dict[str, str]]] = []
    for minor, needs in requirement_rows(dist):
        if not pin.accepts_between(minor, _bump(minor, 1)):
            continue
        own = [release_requirements(dist, v) for v in exact if tuple(v[:2]) == tuple(minor[:2])]
        if own and all(o is not None for o in own):
            out.extend((minor, o) for o in own)
        else:
            out.append((minor, needs))
    return out


def _compatible_range(dist: str, pins: Dict[str, Allowed]) -> Optional[Allowed]:
    """The versions of ``dist`` that the project's pins of the libraries beside it admit, by
    what each release line requires (``knowledge/requires.toml``, read from the wheels' own
    metadata), or None where they say nothing (or contradict each other):

    - ``dist``'s own requirements: its release lines whose requirement of a pinned library
      meets the pin (``tokenizers==0.12.1``: transformers 4.34 requires tokenizers>=0.14, so
      transformers below 4.34; ``torch==1.13.0``: below the line that requires torch>=2.0);
    - the requirements of the pinned libraries: what the release lines a pin admits require of
      ``dist`` (``trl==0.7.4`` requires transformers>=4.18), any of them.

    The result reads ``transformers<4.34`` and its ``note`` says which pin decides and why."""
    from ..knowledge import requirement_rows

    limits: List[Tuple[Allowed, str]] = []
    rows = requirement_rows(dist)
    if rows:
        excluded: Dict[Version, Tuple[Allowed, str]] = {}  # a line -> the pin that rules it out, and why
        for dep, pin in pins.items():
            if dep == dist or pin.commit or pin.newest or (pin.low is None and pin.high is None):
                continue
            for minor, needs in rows:
                spec = needs.get(dep)
                if spec is None or minor in excluded:
                    continue
                if pin.intersect(_required(dep, spec)).is_empty:
                    excluded[minor] = (pin, f"{dist} {version_text(minor)} requires {dep}{_spec_text(spec)}")
        kept = [m for m, _ in rows if m not in excluded]
        if excluded and kept:
            minors = [m for m, _ in rows]
            low = None if kept[0] == minors[0] else kept[0]
            high = None if kept[-1] == minors[-1] else minors[minors.index(kept[-1]) + 1]
            ends = [m for m in (high, None if low is None else minors[minors.index(low) - 1]) if m is not None]
            by_pin: Dict[str, List[str]] = {}  # the ends one pin decides, said once with it
            for end in ends:
                by_pin.setdefault(excluded[end][0].where(), []).append(excluded[end][1])
            why = {where: f"{where}: {' and '.join(reasons)}" for where, reasons in by_pin.items()}
            if high is not None:
                limits.append((Allowed(dist, high=high), why[excluded[high][0].where()]))
            if low is not None:
                limits.append((Allowed(dist, low=low), why[excluded[minors[minors.index(low) - 1]][0].where()]))
    for other, pin in pins.items():
        if other == dist or pin.commit or pin.newest or (pin.low is None and pin.high is None):
            continue
        admitted = _admitted_rows(other, pin)
        if not admitted or any(dist not in needs for _, needs in admitted):
            continue
        specs = [_required(dist, needs[dist]) for _, needs in admitted]
        hull = specs[0]
        for spec in specs[1:]:
            hull = hull.hull(spec)
        # a pin open at an end admits releases past the table's, whose requirements are unknown
        if pin.high is None and admitted[-1][0] == requirement_rows(other)[-1][0]:
            hull = replace(hull, high=None, high_inclusive=False)
        if pin.low is None and admitted[0][0] == requirement_rows(other)[0][0]:
            hull = replace(hull, low=None)
        if hull.low is None and hull.high is None:
            continue
        limits.append((replace(hull, spec=""), f"{pin.where()}, which requires {dist}{_bounds_text(hull)}"))
    if not limits:
        return None
    out = limits[0][0]
    for limit, _ in limits[1:]:
        out = out.intersect(limit)
    if out.is_empty:
        return None  # the pins contradict the table: nothing is known
    deciding = [why for limit, why in limits if (out.high is not None and limit.high == out.high and limit.high_inclusive == out.high_inclusive)]
    deciding += [why for limit, why in limits if out.low is not None and limit.low == out.low]
    if not deciding:
        return None
    sources = [p.source for d, p in pins.items() if d != dist and any(why.startswith(p.where()) for why in deciding)]
    return Allowed(
        dist, out.low, out.high, out.high_inclusive, f"{dist}{_bounds_text(out)}",
        source=" and ".join(dict.fromkeys(sources)) or "the pins beside it", note="; ".join(dict.fromkeys(deciding)),
    )


def highest_minor(allowed: Allowed, dist: str) -> Optional[Version]:
    """The newest minor (``(4, 29)``) an upper-bounded range allows, by the release table
    (``<4.30`` -> 4.29, ``<=4.30.2`` and ``<4.30.2`` -> 4.30), or None: no upper bound."""
    from ..knowledge import release_dates

    if allowed.high is None or allowed.newest:
        return None
    high = tuple(allowed.high)
    if allowed.high_inclusive or any(high[2:]):
        return high[:2] if len(high) >= 2 else (high[0], 0)
    below = [v for v, _ in release_dates(dist) if compare(v, high) < 0]
    return below[-1] if below else None


def newest_admitted(allowed: Allowed) -> Optional[Version]:
    """The newest version a range admits, by the release table: what a fresh install of it
    gets today, and so the version the code plausibly targets. One version for a point;
    for an upper bound, the newest known minor below it (``<5`` -> 4.57, ``<=5.8.0`` -> 5.8);
    with no upper bound, the newest known release (or the range's floor, where that is newer).
    None where it is not known: a commit, nothing stated (the newest behaviour), or no table."""
    from ..knowledge import release_dates

    if allowed.commit or allowed.newest:
        return None
    if allowed.is_point:
        return tuple(allowed.low)
    if allowed.high is not None:
        top = highest_minor(allowed, allowed.dist)
    else:
        known = release_dates(allowed.dist)
        top = known[-1][0] if known else None
    if top is None:
        return None
    if allowed.low is not None and compare(top, allowed.low) < 0:
        return tuple(allowed.low)
    return tuple(top)


def implied_torch(own: Optional[Allowed], versions: Dict[str, Optional[Allowed]]) -> Optional[Allowed]:
    """The torch a file targets: its project's own torch range where that has an upper bound;
    else that range (or none) capped by the torch of the time of each pinned library
    (``knowledge/torch.toml``: transformers==4.27.1 was current until 4.28, when torch 2.0
    was the newest, so torch<2.1). Where the cap contradicts the project's own torch pin
    (torch>=2.2 beside transformers==4.27), the pin wins."""
    from ..knowledge import implying_libraries, torch_of_its_time

    if own is not None and own.high is not None:
        return own
    caps = []
    for dist in implying_libraries():
        allowed = versions.get(dist)
        if allowed is None or allowed.newest or allowed.source in ("installed", "newest", "configuration"):
            continue
        minor = highest_minor(allowed, dist)
        found = torch_of_its_time(dist, minor) if minor is not None else None
        if found is not None:
            caps.append((found[0], found[1], allowed))
    if not caps:
        return own
    torch, successor, by = min(caps, key=lambda c: _pad(c[0]))
    high = _bump(torch, 1)
    note = (
        f"below {version_text(high)} as {by.where()} implies: torch {version_text(torch)} was the newest "
        f"when {by.dist} {version_text(successor)} came out"
    )
    cap = Allowed("torch", high=high, spec=f"torch<{version_text(high)}", source=by.source, note=note)
    if own is None:
        return cap
    both = own.intersect(cap)
    if both.is_empty:
        return own
    note = f"{own.where()}, {note}"
    return replace(both, spec=f"{own.described},<{version_text(high)}", source=own.source, note=note)


def _shown(path: Path, start: Path) -> str:
    try:
        return os.path.relpath(path, start)
    except ValueError:  # another drive
        return str(path)


def resolver_for(config) -> VersionResolver:
    """The resolver of a run: versions the configuration sets win everywhere; the installed
    metadata is the fallback where a file's project says nothing."""
    configured: Dict[str, Allowed] = {}
    installed: Dict[str, Allowed] = {}
    for dist, attr in (("transformers", "transformers_version"), ("trl", "trl_version")):
        version = getattr(config, attr, None)
        if version is None:
            continue
        if config.version_sources.get(dist, "configuration") == "configuration":
            configured[dist] = Allowed.point(dist, version, "configuration")
        else:
            installed[dist] = Allowed.point(dist, version, "installed")
    for dist in INSTALLED_ONLY:  # no configuration key: the installed metadata
        version = _installed(dist)
        if version is not None:
            installed[dist] = Allowed.point(dist, version, "installed")
    return VersionResolver(configured, installed)


# The libraries without a configuration key: where a file's project pins nothing, the installed
# distribution's version (a cached run's findings depend on it: ``installed_fallbacks``).
INSTALLED_ONLY = ("torch", "accelerate", "peft")


def installed_fallbacks() -> Tuple[Tuple[str, Optional[Version]], ...]:
    """The installed versions of :data:`INSTALLED_ONLY`, for the key of a cached run (the
    configured libraries' are in the configuration)."""
    return tuple((dist, _installed(dist)) for dist in INSTALLED_ONLY)


def _installed(dist: str) -> Optional[Version]:
    from .config import installed_version

    return installed_version(dist)
