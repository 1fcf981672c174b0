"""Which files are analysed: those of a unit that imports a library the rules are about.

Every rule is about PyTorch or a library built on it, so a file is analysed when it, or a
project module it is linked to by imports (either way, transitively: a ``losses.py`` fed by the
``models.py`` that loads fp16 weights, a config helper a training script calls), imports one of
:data:`LIBRARIES` (ruff's ``seen_module``, per unit). The answer never depends on a comment, a
string, the selected rules or the order files are given in. A file that does not parse is
always analysed, so that its syntax error is reported.
"""
from __future__ import annotations

import ast
import os
import warnings
from typing import Dict, Iterable, List, Optional, Set, Tuple

from .tree import SKIPPED_FIELDS


# The libraries the rules are about (top-level package names).
LIBRARIES = frozenset(
    {
        "torch", "transformers", "accelerate", "trl", "peft", "deepspeed", "lightning", "pytorch_lightning",
        "lightning_fabric", "diffusers", "bitsandbytes", "apex", "timm", "open_clip", "clip", "sentence_transformers",
        "setfit", "unsloth", "fairscale", "optimum", "xformers", "flash_attn", "torchvision", "torchaudio",
        "torchdistill", "composer", "colossalai", "megatron", "vllm", "auto_gptq", "awq", "torch_xla",
        "habana_frameworks", "intel_extension_for_pytorch", "transformer_engine", "ignite", "fastai", "keras",
        # a cloud runner whose functions request the run's GPU (Modal's `gpu="H100:8"`) for the
        # training code they launch: what the rules read as the stated hardware
        "modal",
        # a SageMaker estimator that launches the training script in a container of known
        # versions, on an instance of a known GPU (`facts/extractors/sagemaker.py`)
        "sagemaker",
        # a Hydra app builds the classes its YAML configs name (`_target_: transformers.
        # TrainingArguments`, `project/hydra_configs.py`): what its imports do not show
        "hydra",
    }
)


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    """Resolve ``from ..x import y`` (level 2, name ``x``) inside ``module``."""
    if level == 0:
        return name
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if name:
        return f"{base}.{name}" if base else name
    return base


def imported_modules(
    text: str, module: str = "", is_package: bool = False, tree: Optional[ast.Module] = None
) -> Optional[Tuple[str, ...]]:
    """Every module the text imports (relative imports resolved against ``module``), read with
    CPython's ``ast``; None when the text does not parse. ``tree``: CPython's tree of the
    text, where the caller has parsed it (``facts/extract.read_imports``: the text is parsed
    once for the gate and the facts).

    A command that launches one of the libraries' launchers (``subprocess.run(["accelerate",
    "launch", ...])``, ``os.system("torchrun ...")``) counts as an import of that library: the
    script it launches runs under it."""
    if tree is None:
        try:
            with warnings.catch_warnings():  # `"str"()`, invalid escapes: the user's business, not ours
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    found: Set[str] = set()
    for node in _nodes(tree):
        cls = type(node)
        if cls is ast.Import:
            found.update(alias.name for alias in node.names)
        elif cls is ast.ImportFrom:
            base = resolve_relative(module, is_package, node.level, node.module or "")
            if base:
                found.add(base)
            for alias in node.names:
                if alias.name != "*":
                    found.add(f"{base}.{alias.name}" if base else alias.name)
        elif cls is ast.List or cls is ast.Tuple:
            found.update(_launched([e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]))
        elif cls is ast.Call and node.args and _callee_name(node.func) in COMMAND_CALLS:
            command = node.args[0]  # os.system("accelerate launch train.py"), f"torchrun {script}"
            if isinstance(command, ast.JoinedStr) and command.values:
                command = command.values[0]
            if isinstance(command, ast.Constant) and isinstance(command.value, str):
                found.update(_launched(command.value.split()))
    return tuple(sorted(found))


# a class → its fields that may hold a node the gate reads (a Constant holds none at all)
_CODE_FIELDS: Dict[type, Tuple[str, ...]] = {ast.Constant: ()}


def _nodes(tree: ast.AST) -> List[ast.AST]:
    """The nodes of ``tree`` but contexts and operators, in no particular order (what the gate
    reads of each does not depend on it): ``ast.walk``'s nodes for less than half its time."""
    out: List[ast.AST] = []
    stack = [tree]
    pop, push, extend, keep = stack.pop, stack.append, stack.extend, out.append
    node_class = ast.AST
    fields_of = _CODE_FIELDS
    while stack:
        node = pop()
        keep(node)
        cls = type(node)
        fields = fields_of.get(cls)
        if fields is None:
            fields = fields_of[cls] = tuple(f for f in cls._fields if f not in SKIPPED_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(v for v in value if isinstance(v, node_class))
            elif isinstance(value, node_class):
                push(value)
    return out


# functions that run a shell command given as one string
COMMAND_CALLS = frozenset({"system", "run", "call", "Popen", "check_call", "check_output", "getoutput", "getstatusoutput"})


def _callee_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


# launcher command → the library it belongs to
LAUNCHERS = {"accelerate": "accelerate", "torchrun": "torch", "deepspeed": "deepspeed"}


def _launched(words) -> Tuple[str, ...]:
    """The libraries a command's words launch: a launcher as the first word, or the module of
    ``python -m MODULE``."""
    out = []
    if words and words[0] in LAUNCHERS:
        out.append(LAUNCHERS[words[0]])
    for flag, module in zip(words, words[1:]):
        if flag == "-m":
            out.append(module)
    return tuple(out)


def seen_library(imports: Iterable[str]) -> bool:
    return any(name.partition(".")[0] in LIBRARIES for name in imports)


def analysed(files: Dict[str, Tuple[str, str, Optional[Tuple[str, ...]]]]) -> Set[str]:
    """The paths to analyse among ``files`` (path → (module name, import root, imported modules
    or None)): every file of an import-linked group in which some file imports one of
    :data:`LIBRARIES`, and every file that does not parse. An import finds the module of its own
    root first (two example folders may each have a ``models.py``), else that module anywhere."""
    by_module: Dict[str, Dict[str, str]] = {}
    for path, (module, root, _) in files.items():
        if module:
            by_module.setdefault(module, {})[root] = path
    by_file = {os.path.normcase(os.path.abspath(path)): path for path in files}
    links: Dict[str, Set[str]] = {path: set() for path in files}
    # (a dotted name, the importer's root) → the files it finds: the same imports are written
    # in hundreds of files of one root
    finds: Dict[Tuple[str, str], List[str]] = {}
    for path, (_, root, imports) in files.items():
        for name in imports or ():
            parts = name.split(".")
            for i in range(len(parts), 0, -1):  # `a.b.c` imports the packages `a.b` and `a` too
                dotted = ".".join(parts[:i])
                others = finds.get((dotted, root))
                if others is None:
                    found = by_module.get(dotted, {})
                    others = [found[root]] if root in found else list(found.values())
                    if not others and i > 1 and root:
                        # a module of an implicit namespace package (a folder without
                        # `__init__.py`, PEP 420): `component.argument` is `<root>/component/argument.py`
                        base = os.path.join(root, *parts[:i])
                        others = [by_file[k] for k in (os.path.normcase(os.path.abspath(c)) for c in (base + ".py", os.path.join(base, "__init__.py"))) if k in by_file]
                    finds[(dotted, root)] = others
                for other in others:
                    if other != path:
                        links[path].add(other)
                        links[other].add(path)
    todo = [p for p, (_, _, imports) in files.items() if imports is None or seen_library(imports)]
    out: Set[str] = set(todo)
    while todo:
        for other in links[todo.pop()]:
            if other not in out:
                out.add(other)
                todo.append(other)
    return out
