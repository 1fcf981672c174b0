"""MP102 conflicting-precision-flags: fp16 and bf16 both on for one run.

transformers refuses a ``TrainingArguments`` (or TRL config) with both flags on::

    ValueError: At most one of fp16 and bf16 can be True, but not both

and a DeepSpeed config whose ``fp16.enabled`` / ``bf16.enabled`` is not ``"auto"``
must equal the flag, compared with ``!=`` (so the string ``"true"`` never equals
``True``)::

    ValueError: Please correct the following DeepSpeed config values that mismatch
    TrainingArguments values:
    - ds fp16.enabled=True vs hf fp16|fp16_full_eval=False

Both flags usually end up on when two recipes are merged (a base dict with
``fp16=True`` and ``bf16=True`` added later), when an option defaults to on
(``--fp16`` with ``default=True`` and a ``--bf16`` switch), when a machine check
turns bf16 on next to a hard-coded ``fp16=True`` (both on an A100), or when
``args.bf16 = True`` is set after construction (no error at all then: the
Trainer silently runs one of them).

Across the launch: ``accelerate launch --config_file accel.yaml train.py`` exports the
config's ``mixed_precision`` as ``ACCELERATE_MIXED_PRECISION``, which ``Accelerator`` reads only
when its ``mixed_precision`` argument is None and ``TrainingArguments`` only when fp16 and bf16
are both off (a TRL config's ``bf16`` defaults to ``not fp16``). A script that asks for another
precision silently wins (the config has no effect); ``fp16=False`` does not turn the config's fp16
off. With a DeepSpeed JSON named by the config, the other half precision enabled there raises::

    ValueError: `--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.

A ``mixed_precision`` written next to a ``deepspeed_config_file`` in the accelerate config is
refused by the DeepSpeedPlugin the script builds (``ValueError: When using
`deepspeed_config_file`, the following accelerate config variables will be ignored: [...,
'mixed_precision']``).

Only a launch command written in Python (``subprocess.run([...])``, ``os.system``) ties a config
to a script: accelerate reads no config from the project by itself (its default config lives in
the user's cache folder), and a config file names no script.

When both flags are literally ``True`` the run can never start, so the fix is
safe: the precision plan's guarded pair ``bf16=BF16_OK, fp16=torch.cuda.is_available()
and not BF16_OK`` (bf16 where it is native, fp16 on other GPUs, fp32 on CPU).
"""
from __future__ import annotations

import os
import re
from .._dataclass import dataclass
from typing import List, Optional, Tuple

from ..diagnostics import SAFE, Fix, Related
from ..semantic.literal_tests import never_together
from ..semantic.values import CAPABILITY, COND, CONST, CUDA, may_be_true
from ..knowledge import bf16_default_on
from ..fixes.plan import capability_probe, guarded_fp16_flag, lazy_probe, torch_name
from ..project.options import from_launcher, passed_by
from .base import Rule, RuleContext, replace

BOTH_ERROR = "ValueError: At most one of fp16 and bf16 can be True, but not both"
DS_LAUNCH_ERROR = "ValueError: `--mixed_precision` arg cannot be set to `{mine}` when `{other}` is set in the DeepSpeed config file."
DS_FIELDS_ERROR = (
    "ValueError: When using `deepspeed_config_file`, the following accelerate config variables will be ignored: "
    "[..., 'mixed_precision']"
)
DS_ERROR = "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values"
TRAINING_KINDS = ("training-args", "training-args-class")
def _truthy(value) -> bool:
    return value not in (None, False, 0, "", "no", "false", "False")


def _states(arg, option) -> List[Tuple[str, object]]:
    """How a flag may be on: ("on", atom) certainly, ("cond", atom) on some machines or
    branches, ("switch", None) when the user turns it on (an option that defaults to off),
    ("launch", atom) when a shipped launch command passes it (``run_sft.sh: --bf16``): on in
    that launched run, and still a command-line choice, not one the code makes."""
    if option is not None:
        return [("on" if option.default_on else "switch", None)]
    out = []
    for v in arg.values if arg is not None else ():
        if v.kind == CONST and _truthy(v.value) and any(g.user_choice for g in v.guards):
            out.append(("switch", v))  # `--fp16` of a parser's TrainingArguments: the user's to pass
        elif v.kind == CONST and _truthy(v.value) and from_launcher(v):
            out.append(("launch", v))  # `--fp16` that a shipped run_sft.sh passes
        elif v.kind == CONST and _truthy(v.value):
            out.append(("on" if not v.guards else "cond", v))
        elif v.kind in (CAPABILITY, COND, CUDA):
            # `fp16 and use_cuda` of the user's switch: on only where the user turns it on
            out.append(("switch" if any(g.user_choice for g in v.guards) else "cond", v))
    return out


def _when_switched(atom) -> str:
    """``when the user passes `--no_fp16` `` for a flag that is on by the user's choice."""
    choices = [g.text for g in (atom.guards if atom is not None else ()) if g.user_choice and g.text]
    if not choices:
        return "when the user turns it on"
    text = choices[-1]
    return f"when the user passes `{text}`" if text.startswith("-") else f"when the user turns `{text}` on"


def _names(atom, written: Tuple[str, ...]) -> List[str]:
    """The texts that say when a flag is on: its condition, its positive guards, and how the
    flag is written (the keyword's value, the option it reads)."""
    out = list(written)
    if atom is not None:
        out.append(atom.text)
        out.extend(g.text for g in atom.guards if g.positive)
    return [t for t in out if t]


def _exclusive(a, b, a_written: Tuple[str, ...] = (), b_written: Tuple[str, ...] = ()) -> bool:
    """Whether two ways of being on cannot hold together: two launches of the script (each a run
    of its own, ``Possible.chosen``), opposite branches of one test, or one is the negation of
    the other (``bf16=OK, fp16=... and not OK``; ``bf16=not args.fp16``)."""
    if a is not None and b is not None:
        if a.chosen and b.chosen and a.chosen[0] == b.chosen[0] and a.chosen[1] != b.chosen[1]:
            return True  # two choices of one configuration: two shipped launches (or one and a run by hand)
        a_terms, b_terms = a.implies(), b.implies()
        if any((t, not truth) in b_terms for t, truth in a_terms):
            return True  # one implies a test the other denies, whatever names carry them
        for g in a.guards:
            for h in b.guards:
                if g.text == h.text and g.positive != h.positive:
                    return True
    a_names, b_names = _names(a, a_written), _names(b, b_written)
    # `x == torch.float16` and `x == torch.bfloat16`, `x in ["fp16", "float16"]` and `x == "bf16"`:
    # no value of `x` passes both
    for t in a_names:
        if any(never_together((t,), (o,)) for o in b_names):
            return True
    for xs, ys in ((a_names, b_names), (b_names, a_names)):
        for t in xs:
            for o in ys:
                if re.search(rf"\bnot\s+\(?{re.escape(o)}(?![\w.(])", t):
                    return True
    return False


class ConflictingPrecisionFlags(Rule):
    code = "MP102"
    name = "conflicting-precision-flags"
    summary = (
        "fp16 and bf16 both on for one run (one config, or the DeepSpeed config vs TrainingArguments), "
        "or a script that overrides the accelerate config it is launched with"
    )
    fix_availability = "sometimes"
    fix_applicability = SAFE

    def check(self, ctx: RuleContext):
        flags = ctx.facts.section("precision_flags") or {"options": (), "overrides": ()}
        for site in ctx.facts.section("precision"):
            if site.kind not in TRAINING_KINDS:
                continue
            found = self._both(ctx, site, flags)
            if found is not None:
                yield found
            yield from self._deepspeed(ctx, site, flags)
        yield from self._launch_configs(ctx, flags)
        yield from self._launch_deepspeed_fields(ctx)

    # --- one config ------------------------------------------------------------------
    def _flag(self, site, flags, name):
        arg = site.arg(name)
        option = next((o for o in flags["options"] if o.site == site.span and o.flag == name), None)
        overrides = [o for o in flags["overrides"] if o.site == site.span and o.flag == name]
        return arg, option, overrides

    def _both(self, ctx: RuleContext, site, flags):
        fp16, fp16_option, fp16_over = self._flag(site, flags, "fp16")
        bf16, bf16_option, bf16_over = self._flag(site, flags, "bf16")
        fp16_states = _states(fp16, fp16_option)
        bf16_states = _states(bf16, bf16_option)
        for over, states in ((fp16_over, fp16_states), (bf16_over, bf16_states)):
            for o in over:
                states.extend(("on" if v.kind == CONST and not v.guards else "cond", v)
                              for v in o.values if (v.kind == CONST and _truthy(v.value)) or v.kind in (CAPABILITY, COND, CUDA))
        pair = None
        for a_state, a in fp16_states:
            for b_state, b in bf16_states:
                if "switch" in (a_state, b_state) and "on" not in (a_state, b_state):
                    # a user switch conflicts with a flag that is certainly on; next to another
                    # switch it is the user asking for both, next to a condition the facts cannot
                    # tell (`use_bf16 = not args.fp16`), next to a flag a shipped launch passes
                    # the user adding the other flag by hand to that command
                    continue
                if _exclusive(a, b, self._written(fp16, fp16_option), self._written(bf16, bf16_option)):
                    continue
                pair = (a_state, b_state)
                break
            if pair:
                break
        if pair is None:
            return None
        name = site.callee.rsplit(".", 1)[-1]
        over = (fp16_over or bf16_over)
        fp16_text = self._shown("fp16", fp16, fp16_option)
        bf16_text = self._shown("bf16", bf16, bf16_option)
        when = "always" if pair == ("on", "on") else "in some runs"
        if "switch" in pair:
            when = _when_switched(a if a_state == "switch" else b)
        if pair == ("launch", "launch"):
            when = f"as {passed_by([a for _, a in fp16_states + bf16_states if a is not None], ctx.path)} runs it"
        if over:
            o = over[0]
            message = (
                f"`{o.flag} = {o.text}` is set after `{name}(...)` was built with {fp16_text if o.flag == 'bf16' else bf16_text}: "
                f"both fp16 and bf16 are on ({when}); the arguments are not validated again, and the Trainer "
                f"silently runs one of them"
            )
            span = o.span
        else:
            message = f"`{name}` gets {fp16_text} and {bf16_text}: both can be True ({when}), and it raises `{BOTH_ERROR}`"
            span = (bf16.key_span or bf16.value_span) if bf16 is not None else site.span
        related = []
        if fp16 is not None:
            related.append(Related(ctx.path, fp16.key_span or fp16.value_span, f"fp16 switched on here: {fp16_text}"))
        fix = self._fix(ctx, fp16, bf16) if pair == ("on", "on") and not over and not (fp16_option or bf16_option) else None
        return ctx.diagnostic(self.code, span, message, fix, tuple(related))

    @staticmethod
    def _written(arg, option) -> Tuple[str, ...]:
        return tuple(t for t in ((arg.value_text if arg is not None else ""), (option.text if option else "")) if t)

    @staticmethod
    def _shown(name, arg, option) -> str:
        if option is not None:
            return f"`{name}` from the option `--{option.option}` (default {'on' if option.default_on else 'off'})"
        if arg is None:
            return f"`{name}` off"
        return f"`{name}={arg.value_text}`"

    def _fix(self, ctx: RuleContext, fp16, bf16) -> Optional[Fix]:
        if fp16 is None or bf16 is None or fp16.via != "keyword" or bf16.via != "keyword":
            return None
        probe, edits = capability_probe(ctx.facts, lazy=lazy_probe(ctx))
        torch = torch_name(ctx.facts)
        return Fix(
            SAFE,
            "Use bf16 where it is native, fp16 on other GPUs (the precision plan)",
            (replace(bf16.value_span, probe), replace(fp16.value_span, guarded_fp16_flag(torch, probe))) + tuple(edits),
        )

    # --- DeepSpeed config -------------------------------------------------------------
    def _deepspeed(self, ctx: RuleContext, site, flags):
        if not site.deepspeed:
            return
        for name in ("fp16", "bf16"):
            found = ctx.project.configs.lookup(ctx.path, site.deepspeed, (name, "enabled"))
            if found is None or found.keys is not None:
                continue  # no such file or key, or a table where DeepSpeed wants a value
            ds = found.value
            if ds == "auto":
                continue
            arg, option, overrides = self._flag(site, flags, name)
            if option is not None or overrides:
                continue
            hf_values = [v.value for v in (arg.values if arg is not None else ()) if v.kind == CONST]
            if arg is not None and len(hf_values) != len(arg.values):
                continue  # depends on the machine or on input: not judged
            hf_values = [bool(v) for v in hf_values] or [False]
            if all(ds == hf for hf in hf_values):
                continue
            hf = next(hf for hf in hf_values if ds != hf)
            shown_ds = f'"{ds}"' if isinstance(ds, str) else str(ds).lower()
            message = (
                f"the DeepSpeed config `{site.deepspeed}` has `{name}.enabled: {shown_ds}` but "
                f"`{site.callee.rsplit('.', 1)[-1]}` has {name}={hf}"
                + (" (a string is never equal to a boolean)" if isinstance(ds, str) else "")
                + f": `{DS_ERROR}`; set it to \"auto\" (or make both agree)"
            )
            related = (Related(found.path, found.span, f"DeepSpeed {name}.enabled here"),)
            span = (arg.key_span or arg.value_span) if arg is not None else site.span
            yield ctx.diagnostic(self.code, span, message, None, related)

    # --- the accelerate config of the command that launches this script ----------------
    def _launch_configs(self, ctx: RuleContext, flags):
        sites = [s for s in ctx.facts.section("precision") if s.kind in ("accelerator", "training-args")]
        if not sites:
            return
        seen = set()
        for launcher, launch in _launches_of(ctx):
            asked = _launch_precision(ctx, launcher, launch)
            if asked is None:
                continue
            for site in sites:
                found = self._against_launch(ctx, site, flags, launcher, launch, asked)
                if found is not None and (found.span, found.message) not in seen:
                    seen.add((found.span, found.message))
                    yield found

    def _launch_deepspeed_fields(self, ctx: RuleContext):
        """A launch command of this module whose accelerate config has a ``deepspeed_config_file``
        and its own ``mixed_precision``: the JSON alone decides, and the DeepSpeedPlugin that any
        Accelerator or TrainingArguments of the launched script builds refuses the launch."""
        for launch in ctx.facts.section("accelerate_launches"):
            if launch.mixed_precision:
                continue  # `--mixed_precision` on the command line: the config's value is not passed on
            asked = _launch_precision(ctx, ctx.facts, launch)
            if asked is None or asked.deepspeed is None or not asked.key:
                continue
            script = _script_module(ctx, ctx.path, launch)
            if script is None or not any(s.kind in ("accelerator", "training-args") for s in script.section("precision")):
                continue  # the launched script is not linted, or builds no DeepSpeedPlugin
            message = (
                f"the accelerate config `{asked.config}` of this launch names a `deepspeed_config_file` and also "
                f"has `{asked.key}`: with a DeepSpeed config file its precision comes from the "
                f"JSON alone, and accelerate refuses the run of `{launch.script}`: `{DS_FIELDS_ERROR}`; remove "
                f"`mixed_precision` from the accelerate config (set fp16/bf16 in the DeepSpeed JSON)"
            )
            yield ctx.diagnostic(self.code, launch.span, message, None, (asked.where,))

    def _against_launch(self, ctx: RuleContext, site, flags, launcher, launch, asked):
        mine = _script_precision(site, flags, self._flag)
        if mine is None:
            return None
        precision, span, how, written_off = mine
        name = site.callee.rsplit(".", 1)[-1]
        ran = f"`accelerate launch` in {_shown(launcher.path, ctx.path)}:{launch.span.line}"
        related = [Related(launcher.path, launch.span, f"this script is launched here: {launch.script}")]
        if asked.deepspeed is not None:  # the DeepSpeed JSON decides; accelerate checks the script's choice
            ds = site.arg("deepspeed")
            if ds is not None and (
                ds.via not in ("parsed", "command-line")
                or may_be_true(v for v in ds.values if not any(g.user_choice for g in v.guards))
            ):
                return None  # `TrainingArguments(deepspeed=...)`: its own JSON is the one checked
            other = "bf16" if precision == "fp16" else "fp16"
            enabled = asked.deepspeed.get(other)
            if precision in (None, "no") or enabled is None or str(enabled.value).lower() != "true":
                return None
            related.insert(0, Related(enabled.path, enabled.span, f"DeepSpeed {other}.enabled here"))
            shown = f'"{enabled.value}"' if isinstance(enabled.value, str) else str(enabled.value).lower()
            message = (
                f"{how} asks for {precision}, but the DeepSpeed config `{enabled.path}` of the accelerate config "
                f"`{asked.config}` ({ran}) has `{other}.enabled: {shown}`: accelerate raises "
                f"`{DS_LAUNCH_ERROR.format(mine=precision, other=other)}`"
            )
            return ctx.diagnostic(self.code, span, message, None, tuple(related))
        if asked.value not in ("fp16", "bf16", "fp8"):
            return None  # the config asks for no mixed precision (accelerate config's default answer)
        if asked.where is not None:
            related.insert(0, asked.where)
        if precision is not None and precision != asked.value:
            result = "full precision (fp32)" if precision == "no" else precision
            reads = (
                "reads it only when `mixed_precision` is None" if site.kind == "accelerator"
                else "reads it only when fp16 and bf16 are both off"
            )
            message = (
                f"{how} overrides {asked.text} ({ran}): the launch sets ACCELERATE_MIXED_PRECISION={asked.value} "
                f"and `{name}` {reads}; the run is silently {result} and the config's {asked.value} has no effect "
                f"(make them agree, or leave the precision to one of them)"
            )
            return ctx.diagnostic(self.code, span, message, None, tuple(related))
        if precision is None and written_off and asked.value in written_off:
            flag, off_span = asked.value, written_off[asked.value]
            message = (
                f"`{flag}=False` does not turn {flag} off: with fp16 and bf16 both off, `{name}` takes its mixed "
                f"precision from ACCELERATE_MIXED_PRECISION={asked.value}, which {asked.text} sets ({ran}); "
                f"the Trainer silently runs {asked.value} while `args.{flag}` reads False"
            )
            return ctx.diagnostic(self.code, off_span, message, None, tuple(related))
        return None


@dataclass(frozen=True)
class _Asked:
    """The mixed precision a launch command asks for, and where it is written."""

    value: str  # "no", "fp16", "bf16", "fp8"
    text: str  # for messages: "`mixed_precision: fp16` of the accelerate config `x.yaml`"
    where: Optional[Related]
    config: Optional[str] = None  # the accelerate config as shown
    # {"fp16": ConfigValue, "bf16": ConfigValue} of the config's deepspeed_config_file, when it has one
    deepspeed: Optional[dict] = None
    key: str = ""  # the config's own `mixed_precision: X` as written (empty: not set there)


def _shown(path: str, near: str) -> str:
    relative = os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(near)))
    return os.path.basename(path) if relative.startswith("..") else relative


def _launches_of(ctx: RuleContext):
    """The launch commands of the project whose script is this module."""
    for module in ctx.project.modules:
        for launch in module.section("accelerate_launches"):
            script = _script_module(ctx, module.path, launch)
            if script is not None and script.path == ctx.path:
                yield module, launch


def _script_module(ctx: RuleContext, launcher_path: str, launch):
    """The linted module a launch command runs, or None. Its path is read from the launcher's
    folder and from the working directory (where the command may run): when the two name two
    different linted files, which one runs is not known, and none is tied."""
    found = {
        m.path: m
        for base in (os.path.dirname(os.path.abspath(launcher_path)), os.getcwd())
        for m in (ctx.project.module_at(os.path.join(base, launch.script)),)
        if m is not None
    }
    return next(iter(found.values())) if len(found) == 1 else None


def _launch_precision(ctx: RuleContext, launcher, launch) -> Optional[_Asked]:
    """What the launch asks for: ``--mixed_precision`` of the command, else the accelerate
    config's ``mixed_precision`` (legacy ``fp16: true``), as ``accelerate launch`` decides it.
    None when there is no config file the linter can read (the user's default config is in
    their home, not the project) or the file is no accelerate config for this machine."""
    configs = ctx.project.configs
    config = deepspeed = None
    if launch.config_file:
        top = configs.lookup(launcher.path, launch.config_file, ())
        if top is None or top.keys is None or "distributed_type" not in top.keys:
            return None  # accelerate refuses a config without distributed_type
        env = configs.lookup(launcher.path, launch.config_file, ("compute_environment",))
        if env is not None and env.value not in (None, "LOCAL_MACHINE"):
            return None  # SageMaker: another launcher
        config = top.path
        kind = configs.lookup(launcher.path, launch.config_file, ("distributed_type",))
        ds_file = configs.lookup(launcher.path, launch.config_file, ("deepspeed_config", "deepspeed_config_file"))
        if kind is not None and kind.value == "DEEPSPEED" and ds_file is not None and isinstance(ds_file.value, str):
            found = {}
            for name in ("fp16", "bf16"):
                value = configs.lookup(launcher.path, ds_file.value, (name, "enabled"))
                if value is not None:
                    found[name] = value
            deepspeed = found
    if launch.mixed_precision:
        value = launch.mixed_precision.lower()
        where = Related(launcher.path, launch.mixed_precision_span or launch.span, f"--mixed_precision {value} here")
        return _Asked(value, f"`--mixed_precision {value}` of the launch command", where, config, deepspeed)
    if config is None:
        return None
    found = configs.lookup(launcher.path, launch.config_file, ("mixed_precision",))
    if found is None:
        legacy = configs.lookup(launcher.path, launch.config_file, ("fp16",))
        if legacy is None or legacy.value is not True:
            return _Asked("no", "", None, config, deepspeed)
        found, key = legacy, "fp16: true"
        value = "fp16"
    else:
        value = "no" if found.value is None else str(found.value).lower()
        key = f"mixed_precision: {value}"
    where = Related(found.path, found.span, f"{key} here")
    return _Asked(value, f"`{key}` of the accelerate config `{config}`", where, config, deepspeed, key if found.value is not None else "")


def _constant(arg, default):
    """A flag's one certain truth value (``default`` when not given), else None."""
    if arg is None:
        return default
    truths = {bool(_truthy(v.value)) for v in arg.values if v.kind == CONST and not v.guards}
    if len(truths) != 1 or len(arg.values) != sum(1 for v in arg.values if v.kind == CONST and not v.guards):
        return None
    return truths.pop()


def _script_precision(site, flags, flag_of):
    """(precision or None, span, how it is asked, (flag, span) of a flag written False) of a
    site whose precision is certain; None when it depends on input or the machine."""
    name = site.callee.rsplit(".", 1)[-1]
    if site.kind == "accelerator":
        arg = site.arg("mixed_precision")
        if arg is None or not arg.values:
            return None
        if any(v.kind != CONST or v.guards or not isinstance(v.value, str) for v in arg.values):
            return None
        values = {v.value.lower() for v in arg.values}
        if len(values) != 1:
            return None
        return values.pop(), arg.key_span or arg.value_span, f"`{name}(mixed_precision={arg.value_text})`", None
    fp16, fp16_option, fp16_over = flag_of(site, flags, "fp16")
    bf16, bf16_option, bf16_over = flag_of(site, flags, "bf16")
    if fp16_option or bf16_option or fp16_over or bf16_over:
        return None  # the user's switch, or set again later
    fp16_on = _constant(fp16, False)
    if fp16_on is None:
        return None
    default = bf16_default_on(site.callee)
    bf16_on = _constant(bf16, None if default is None else (default and not fp16_on))
    if bf16_on is None or (fp16_on and bf16_on):
        return None  # unknown, or both (the ValueError above)
    if fp16_on:
        return "fp16", fp16.key_span or fp16.value_span, f"`{name}(fp16={fp16.value_text})`", None
    if bf16_on and bf16 is None:
        return "bf16", site.span, f"`{name}(...)` (bf16 left unset: TRL turns it on when fp16 is off)", None
    if bf16_on:
        return "bf16", bf16.key_span or bf16.value_span, f"`{name}(bf16={bf16.value_text})`", None
    return None, site.span, f"`{name}(...)`", _written_off(fp16, bf16)


def _written_off(fp16, bf16):
    """Both flags off: the ones written ``=False`` as keywords, {flag: span}."""
    return {
        flag: arg.key_span or arg.value_span
        for flag, arg in (("fp16", fp16), ("bf16", bf16))
        if arg is not None and arg.via == "keyword" and arg.value_text == "False"
    }
