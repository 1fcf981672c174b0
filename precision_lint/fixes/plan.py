"""The one precision plan every fix follows.

Rules that rewrite precision (MP101, MP201, MP202) build their replacement code
here, so that their fixes agree: one capability probe per module, named
``BF16_OK`` (or, when the module already uses that name for something of its own,
the first free one of ``NATIVE_BF16``, ``BF16_SUPPORTED``, ``BF16_OK_2`` ...), true
only where bf16 runs natively (compute capability 8.0+, i.e. Ampere and newer),
reused by every guarded form:

- weights that are trained under fp16 autocast: ``torch.float32`` (fp32 master
  weights), or ``torch.bfloat16 if BF16_OK else torch.float32``;
- ``bf16=BF16_OK, fp16=torch.cuda.is_available() and not BF16_OK``;
- ``"flash_attention_2" if BF16_OK and is_flash_attn_2_available() else "sdpa"`` (the
  flash-attn package must import too).

Why a strict probe: in recent torch, ``torch.cuda.is_bf16_supported()`` also
returns True on GPUs that only *emulate* bf16 (pre-Ampere), so transformers and
accelerate accept ``bf16=True`` on a T4 and the job runs, very slowly, instead of
using the fp16 tensor cores the card has.
Two rules that add the probe to the same module produce the identical edit,
which the fixer applies once.

Where the edits go: the probe after the module's whole import block (so no import
of the user's ends up below code: no new E402 for ruff/flake8 users), and a
missing ``import torch`` in its sorted place among the third-party imports (no new
I001 for isort users). The layout (``facts/extract.py``) finds both places.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from ..diagnostics import Edit
from ..facts.model import ModuleFacts
from ..workspace.hardware import PROBE_COMMENT

PROBE_NAME = "BF16_OK"


def torch_name(facts: ModuleFacts) -> str:
    layout = facts.layout
    return layout.torch_name if layout is not None and layout.torch_name else "torch"


def _newline(facts: ModuleFacts) -> str:
    return facts.layout.newline if facts.layout is not None else "\n"


def ensure_torch(facts: ModuleFacts) -> Tuple[str, Tuple[Edit, ...]]:
    """The local name of the torch module, with an ``import torch`` edit if it is missing."""
    layout = facts.layout
    if layout is not None and layout.torch_name:
        return layout.torch_name, ()
    return "torch", (import_edit(facts, "import torch", "torch", plain=True),)


def import_edit(facts: ModuleFacts, line: str, module: str, plain: bool) -> Edit:
    """The insertion of ``line`` (``import torch``, ``from transformers.utils import x``), a
    third-party import of ``module``, in its sorted place as ruff's isort (I001) orders the
    module's imports: in the third-party section, plain ``import`` lines first, by module
    name (by name alone where the file sorts that way); a section of its own after the standard library's when there is no third-party
    one; at the end of the import block when the module has no import line."""
    layout = facts.layout
    nl = _newline(facts)
    text = f"{line}{nl}"
    if layout is None:
        return Edit(0, 0, text)
    third = [i for i in layout.imports if i.section == "third"]
    by_name = _sorted_by_name_only(third)
    key = (False, module.lower()) if by_name else (not plain, module.lower())
    if third:
        later = [i for i in third if ((False if by_name else not i.plain), i.key) > key]
        if later:
            return Edit(later[0].start, later[0].start, text)
        return Edit(third[-1].end, third[-1].end, text)
    before = [i for i in layout.imports if i.section in ("future", "stdlib")]
    if before:
        last = before[-1]
        return Edit(last.end, last.end, f"{nl}{text}" + ("" if last.blank_after else nl))
    return Edit(layout.insert_at, layout.insert_at, text)


def _sorted_by_name_only(imports) -> bool:
    """Whether a section sorts ``import x`` and ``from x import y`` together, by module name
    alone (isort's ``force_sort_within_sections``, Google style), and not plain imports first
    (ruff's and isort's default): the new import then goes where its name alone puts it."""
    names = [i.key for i in imports]
    styled = [(not i.plain, i.key) for i in imports]
    return len({i.plain for i in imports}) > 1 and names == sorted(names) and styled != sorted(styled)


def probe_expression(torch: str) -> str:
    return f"{torch}.cuda.is_available() and {torch}.cuda.get_device_capability()[0] >= 8"


# An import a fix needs: (line, module, plain), e.g. ("import torch", "torch", True).
ImportSpec = Tuple[str, str, bool]
TORCH_IMPORT: ImportSpec = ("import torch", "torch", True)


def import_edits(facts: ModuleFacts, specs: Sequence[ImportSpec]) -> Tuple[Edit, ...]:
    """The insertions of several imports, each in its sorted place; imports that go to the same
    place are one edit, in sorted order (the fixer never has to guess the order of two)."""
    groups: Dict[int, List[Tuple[Tuple[bool, str], Edit]]] = {}
    for line, module, plain in specs:
        edit = import_edit(facts, line, module, plain)
        groups.setdefault(edit.start, []).append(((not plain, module.lower()), edit))
    nl = _newline(facts)
    out = []
    for at, items in sorted(groups.items()):
        items.sort(key=lambda item: item[0])
        first = items[0][1].content
        lead = first[: len(first) - len(first.lstrip("\r\n"))]
        trail = first[len(first.rstrip("\r\n")) :]
        body = nl.join(dict.fromkeys(e.content.strip("\r\n") for _, e in items))
        out.append(Edit(at, at, lead + body + trail))
    return tuple(out)


def lazy_probe(ctx) -> bool:
    """Whether a new probe must be a cached function rather than a module-level constant: the
    module is a library module, one that other modules of the project import (a model adapter
    every worker imports, a Ray actor module), and not a notebook.

    A constant there runs ``torch.cuda.get_device_capability()`` at import, which initialises
    CUDA in the importing process: ``notebook_launcher`` then refuses to start (``ValueError: To
    launch a multi-GPU training from your notebook, the Accelerator should only be initialized
    inside your training function``) and forked data-loader workers fail with ``RuntimeError:
    Cannot re-initialize CUDA in forked subprocess``. A script or a notebook runs it once, at
    the top, where that is harmless.
    """
    from ..workspace.notebook import is_notebook

    return not is_notebook(ctx.path) and bool(ctx.project.importers_of(ctx.facts))


def stdlib_import_edit(facts: ModuleFacts, module: str) -> Edit:
    """``import module`` (a standard-library module) in its sorted place among the module's
    standard-library imports, or a section of its own before the third-party imports."""
    layout = facts.layout
    nl = _newline(facts)
    text = f"import {module}{nl}"
    if layout is None:
        return Edit(0, 0, text)
    std = [i for i in layout.imports if i.section == "stdlib"]
    if std:
        later = [i for i in std if (not i.plain, i.key) > (False, module)]
        at = later[0].start if later else std[-1].end
        return Edit(at, at, text)
    future = [i for i in layout.imports if i.section == "future"]
    if future:
        last = future[-1]
        return Edit(last.end, last.end, f"{nl}{text}" + ("" if last.blank_after else nl))
    if layout.imports:
        first = layout.imports[0]
        return Edit(first.start, first.start, f"{text}{nl}")
    return Edit(layout.insert_at, layout.insert_at, text)


def capability_probe(
    facts: ModuleFacts, imports: Sequence[ImportSpec] = (), lazy: bool = False
) -> Tuple[str, Tuple[Edit, ...]]:
    """The module's bf16 probe as an expression (``BF16_OK``, or ``bf16_ok()`` when ``lazy``),
    with the edits that create it (and ``import torch``) if missing, and the other ``imports``
    the fix needs, each in its sorted place.

    An existing module-level probe the user wrote (``BF16_OK = torch.cuda.is_bf16_supported()``,
    ``use_bf16 = major >= 8``, a probe function ``def bf16_ok(): return ...``) is reused as it is.
    ``lazy`` (see :func:`lazy_probe`): a function cached by ``functools.lru_cache(maxsize=None)``,
    run at its first use and once per process (not ``functools.cache``: Python 3.9 has it, and a
    project on torch 2.0 may run Python 3.8, where the fixed file would fail at import with
    ``AttributeError: module 'functools' has no attribute 'cache'``).
    """
    layout = facts.layout
    if layout is not None and layout.probes:
        return layout.probes[0].name, import_edits(facts, imports)
    torch = torch_name(facts) if layout is not None and layout.torch_name else "torch"
    specs = list(imports) if layout is not None and layout.torch_name else [TORCH_IMPORT, *imports]
    edits = list(import_edits(facts, specs))
    nl = _newline(facts)
    at = layout.insert_at if layout is not None else 0
    if lazy:
        function = layout.lazy_probe_name if layout is not None else "bf16_ok"
        functools = layout.functools_name if layout is not None else ""
        if not functools:
            functools = "functools"
            edits.insert(0, stdlib_import_edit(facts, "functools"))
        name = f"{function}()"
        text = (
            f"{nl}{nl}{PROBE_COMMENT}{nl}@{functools}.lru_cache(maxsize=None){nl}def {function}() -> bool:{nl}"
            f"    return {probe_expression(torch)}{nl}"
        )
        if at == 0:
            text = text[2 * len(nl):]
        # two blank lines around a function (E302/E305), with those already there
        text += nl * max(0, 2 - (layout.blank_lines_after if layout is not None else 0))
        merged = [e for e in edits if e.start == at]
        for e in merged:
            edits.remove(e)
        prefix = "".join(e.content.rstrip("\r\n") + nl for e in merged)
        return name, (*edits, Edit(at, at, prefix + text))
    name = layout.probe_name if layout is not None else PROBE_NAME
    text = f"{nl}{PROBE_COMMENT}{nl}{name} = {probe_expression(torch)}{nl}"
    if at == 0:
        text = text[len(nl):] + nl
    elif layout is not None and not layout.blank_after:
        text += nl  # keep the probe apart from the code that follows the imports
    same = [e for e in edits if e.start == at]
    if same:  # one insertion: the imports, then the probe
        edits.remove(same[0])
        return name, (*edits, Edit(at, at, same[0].content.rstrip("\r\n") + nl + text))
    return name, (*edits, Edit(at, at, text))


def fp32(torch: str, like: str = "") -> str:
    """``torch.float32``, or ``"float32"`` when the original was a string."""
    if like[:1] in ("'", '"'):
        return f'{like[0]}float32{like[0]}'
    return f"{torch}.float32"


def guarded_bf16_weights(torch: str, probe: str, fallback: str = "float32") -> str:
    """bf16 weights where bf16 runs natively; ``fallback`` (float32 for trained weights,
    float16 for inference-only ones) elsewhere."""
    return f"{torch}.bfloat16 if {probe} else {torch}.{fallback}"


def guarded_bf16_mode(torch: str, probe: str, bf16: str, fallback: str) -> str:
    """A bf16 *mode* that also runs on CPU (autocast dtype, ``Accelerator(mixed_precision=)``,
    Lightning ``precision=``): kept on Ampere+ and on CPU, ``fallback`` on pre-Ampere GPUs."""
    return f"{bf16} if {probe} or not {torch}.cuda.is_available() else {fallback}"


def guarded_fp16_flag(torch: str, probe: str) -> str:
    return f"{torch}.cuda.is_available() and not {probe}"


FLASH_CHECK = "is_flash_attn_2_available"
FLASH_CHECK_MODULE = "transformers.utils"


def flash_attention_check(facts: ModuleFacts) -> Tuple[str, Tuple[ImportSpec, ...]]:
    """transformers' own test that the ``flash-attn`` package is importable (what it checks
    before it raises ``ImportError: FlashAttention2 has been toggled on ...``), with the import
    that brings it when the module has none."""
    for local, target in facts.exports:
        if target.rsplit(".", 1)[-1] == FLASH_CHECK and target.startswith("transformers."):
            return local, ()
    return FLASH_CHECK, ((f"from {FLASH_CHECK_MODULE} import {FLASH_CHECK}", FLASH_CHECK_MODULE, False),)


def guarded_attention(probe: str, fallback: str = "sdpa", quote: str = '"', available: str = "") -> str:
    """FlashAttention-2 where the GPU runs it (``probe``) and, with ``available``, where the
    ``flash-attn`` package imports (an A100 on Colab has the GPU but not the package)."""
    condition = f"{probe} and {available}()" if available else probe
    return f'{quote}flash_attention_2{quote} if {condition} else {quote}{fallback}{quote}'


def no_fp16_params(model: str, torch: str) -> str:
    return f"not any(p.dtype == {torch}.float16 for p in {model}.parameters())"
