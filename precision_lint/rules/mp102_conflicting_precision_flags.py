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

When both flags are literally ``True`` the run can never start, so the fix is
safe: the precision plan's guarded pair ``bf16=BF16_OK, fp16=torch.cuda.is_available()
and not BF16_OK`` (bf16 where it is native, fp16 on other GPUs, fp32 on CPU).
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from ..diagnostics import SAFE, Fix, Related
from ..facts.values import CAPABILITY, COND, CONST, CUDA
from ..plan import capability_probe, guarded_fp16_flag, torch_name
from .base import Rule, RuleContext, replace

BOTH_ERROR = "ValueError: At most one of fp16 and bf16 can be True, but not both"
DS_ERROR = "ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values"
TRAINING_KINDS = ("training-args", "training-args-class")
_EQUALS = re.compile(r"\(?\s*([\w.\[\]\"']+)\s*==\s*([\w.\"']+)\s*\)?")


def _truthy(value) -> bool:
    return value not in (None, False, 0, "", "no", "false", "False")


def _states(arg, option) -> List[Tuple[str, object]]:
    """How a flag may be on: ("on", atom) certainly, ("cond", atom) on some machines or
    branches, ("switch", None) when the user turns it on (an option that defaults to off)."""
    if option is not None:
        return [("on" if option.default_on else "switch", None)]
    out = []
    for v in arg.values if arg is not None else ():
        if v.kind == CONST and _truthy(v.value) and any(g.user_choice for g in v.guards):
            out.append(("switch", v))  # `--fp16` of a parser's TrainingArguments: the user's to pass
        elif v.kind == CONST and _truthy(v.value):
            out.append(("on" if not v.guards else "cond", v))
        elif v.kind in (CAPABILITY, COND, CUDA):
            out.append(("cond", v))
    return out


def _names(atom, written: Tuple[str, ...]) -> List[str]:
    """The texts that say when a flag is on: its condition, its positive guards, and how the
    flag is written (the keyword's value, the option it reads)."""
    out = list(written)
    if atom is not None:
        out.append(atom.text)
        out.extend(g.text for g in atom.guards if g.positive)
    return [t for t in out if t]


def _exclusive(a, b, a_written: Tuple[str, ...] = (), b_written: Tuple[str, ...] = ()) -> bool:
    """Whether two ways of being on cannot hold together: opposite branches of one test, or one
    is the negation of the other (``bf16=OK, fp16=... and not OK``; ``bf16=not args.fp16``)."""
    if a is not None and b is not None:
        for g in a.guards:
            for h in b.guards:
                if g.text == h.text and g.positive != h.positive:
                    return True
    a_names, b_names = _names(a, a_written), _names(b, b_written)
    for t in a_names:  # `x == torch.float16` and `x == torch.bfloat16`: one value, two tests
        for o in b_names:
            ta, to = _EQUALS.fullmatch(t.strip()), _EQUALS.fullmatch(o.strip())
            if ta and to and ta.group(1) == to.group(1) and ta.group(2) != to.group(2):
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
    summary = "fp16 and bf16 both on for one run (one config, or the DeepSpeed config vs TrainingArguments)"
    evidence = (r"\bfp16\b", r"\bbf16\b")
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
                    # tell (`use_bf16 = not args.fp16`)
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
        probe, edits = capability_probe(ctx.facts)
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
        config = ctx.project.read_json(ctx.facts, site.deepspeed)
        if not isinstance(config, dict):
            return
        for name in ("fp16", "bf16"):
            section = config.get(name)
            if not isinstance(section, dict) or "enabled" not in section:
                continue
            ds = section["enabled"]
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
            where = ctx.project.json_value_span(ctx.facts, site.deepspeed, (name, "enabled"))
            shown_ds = f'"{ds}"' if isinstance(ds, str) else str(ds).lower()
            message = (
                f"the DeepSpeed config `{site.deepspeed}` has `{name}.enabled: {shown_ds}` but "
                f"`{site.callee.rsplit('.', 1)[-1]}` has {name}={hf}"
                + (" (a string is never equal to a boolean)" if isinstance(ds, str) else "")
                + f": `{DS_ERROR}`; set it to \"auto\" (or make both agree)"
            )
            related = (Related(where[0], where[1], f"DeepSpeed {name}.enabled here"),) if where else ()
            span = (arg.key_span or arg.value_span) if arg is not None else site.span
            yield ctx.diagnostic(self.code, span, message, None, related)
