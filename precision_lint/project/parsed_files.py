"""Which configuration files a parse of ``HfArgumentParser`` reads.

``parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))`` (also ``parse_yaml_file``,
and ``parse_dict`` of a file a loader read) hands every top-level key of one file to the
dataclasses of the parser (``TrainingArguments`` among them) as a keyword: a key none of them
has stops the run with ``ValueError: Some keys are not used by the HfArgumentParser: [...]``.
The keys are data the project ships, so the file has to be found. A file is tied to a parse
(``facts/extractors/migrations.py``: ``ParsedFile``):

1. **by the code**: the path it names (``parse_yaml_file("train.yaml")``, the default of the
   argparse option that names the file, ``parse_dict(json.load(open("train.json")))``);
2. **by a shipped launch**: what a launcher that runs the script passes for the option naming
   the file (``--train_args_file configs/sft.json``) or as the positional argument
   ``sys.argv[N]`` reads (``python train.py configs/sft.json``), looked for from the launcher's
   folder, the script's and the working directory. The scripts are the module itself and the
   scripts whose runs hold it (a helper module's parse runs in the scripts that import it); a
   value that is a shell variable names nothing;
3. **where the code names none** (the script reads a file its user names at run time; a
   launch, or a README's command, names one run's, and the project ships the others beside
   it: ``starting_point.json`` in the README, ``large.json`` and ``debug.json`` next to it):
   a JSON/YAML file the project ships around the script
   (``ShippedFiles.config_files_near``: its folder, or up to two above it, never above the
   folder the check runs from), of a suffix the method reads, whose top-level keys
   include a field of one of the *project's own* dataclasses of that parse (a
   ``ModelArguments.model_name_or_path``, a ``DataTrainingArguments.dataset_dir``). Keys that
   are only ``TrainingArguments`` fields would not do: every Hugging Face script reads them,
   and a file holding only them may be another script's (or a ``TrainingArguments(**cfg)``
   call's, with its own pins). A file that mixes the script's own fields with
   ``TrainingArguments``' is the input of a parse of both, which is what this parse is; a
   DeepSpeed JSON, a model's ``config.json`` or a data file holds none of the script's
   fields. A parse of library classes only (``HfArgumentParser(TrainingArguments)``) ties
   no file this way, nor does TRL's ``parse_args_and_config()`` (its ``--config``): a project's
   TRL scripts share their dataclasses and every YAML of theirs holds those fields (sft.yaml,
   dpo.yaml, ...), so the keys say nothing of which script reads which file.
"""
from __future__ import annotations

from .._dataclass import dataclass
from typing import List, Optional, Tuple

from ..workspace.launches import passed_options


@dataclass(frozen=True)
class Tied:
    """A configuration file a parse reads, and why it is thought to."""

    path: str  # absolute
    how: str  # "code", "launch" or "project"
    launcher: str = ""  # for "launch": the launcher's absolute path ...
    line: int = 0  # ... and the line of its command


def own_fields(project, module, parse) -> Tuple[str, ...]:
    """The fields of the project's own dataclasses among those ``parse`` fills, and of their
    project bases, where no class of their ancestry is a library's (a project subclass of
    ``TrainingArguments`` adds nothing: its fields are mixed with the library's)."""
    out = []
    for qualname in parse.classes:
        ancestry = list(project.symbols.ancestry(qualname, module)) if qualname else []
        if not ancestry or any(cls is None for _, _, cls in ancestry):
            continue
        for _, _, cls in ancestry:
            out.extend(cls.fields)
    return tuple(dict.fromkeys(out))


def tied_files(project, module, parse, words: Tuple[str, ...]) -> List[Tied]:
    """The files ``parse`` (a ``ParsedFile`` of ``module``) reads: see the module's docstring.
    ``words``: the keys worth looking for in the files a project ships (step 3)."""
    configs = project.configs
    out: List[Tied] = []
    seen = set()

    def add(path: Optional[str], how: str, launcher: str = "", line: int = 0) -> None:
        if path is not None and path not in seen and path.lower().endswith(parse.suffixes):
            seen.add(path)
            out.append(Tied(path, how, launcher, line))

    for written in parse.paths:
        add(configs.found(module.path, written), "code")
    if parse.option or parse.argv is not None:
        scripts = [module, *[m for m in project.roots_of(module) if m.path != module.path]]
        for script in scripts:
            for launcher, launch in project.shipped.launches_for(script.path):
                word = _passed(launch.args, parse)
                if not word or "$" in word or "`" in word:
                    continue
                for near in (launcher, script.path):
                    found = configs.found(near, word)
                    if found is not None:
                        add(found, "launch", launcher, launch.line)
                        break
    if any(t.how == "code" for t in out) or (not parse.option and parse.argv is None) or parse.method == "parse_args_and_config":
        return out  # (TRL's `--config`: only a file the code or a launch names, see above)
    own = set(own_fields(project, module, parse))
    if not own or not words:
        return out
    for path in project.shipped.config_files_near(module.path, words, configs.cwd):
        if not path.lower().endswith(parse.suffixes):
            continue
        entries = configs.entries(module.path, path, quiet=True)  # an invalid one is no one's to report
        if entries and any(e.key in own for e in entries):
            add(configs.found(module.path, path), "project")
    return out


def _passed(args: Tuple[str, ...], parse) -> Optional[str]:
    """The word a launch passes where ``parse`` reads its file: the option's value, or the
    positional argument ``sys.argv[N]`` is (the N-th word after the script)."""
    if parse.option:
        return passed_options(args).get(parse.option)
    n = parse.argv
    if n is None or not args:
        return None
    if n == -1:
        return args[-1]
    return args[n - 1] if 0 < n <= len(args) else None
