"""One configuration's values together: the evaluator's reading of an instance that
``HfArgumentParser`` fills from a file (a field is the file's key, else the class default; each
file its own configuration, ``Possible.chosen``) and ``project/configurations.py``'s questions."""
from conftest import dedent

from precision_lint.project.configurations import alongside, runs_deepspeed, wraps_adapters
from precision_lint.semantic.evaluate import Evaluator
from precision_lint.semantic.index import build_index
from precision_lint.semantic.values import CONST, RETURN, UNKNOWN, Possible, exclusive

A = ("train.py:10", "/p/a.json")
B = ("train.py:10", "/p/b.json")


def _c(value, chosen=()):
    return Possible(CONST, value, chosen=chosen)


def test_two_files_of_one_parse_are_exclusive_and_other_values_are_not():
    assert exclusive(_c(True, A), _c("whole", B))
    assert not exclusive(_c(True, A), _c("whole", A))
    assert not exclusive(_c(True, A), _c("whole"))  # not a configuration's value: in every run
    assert not exclusive(_c(True, A), _c("x", ("train.py:99", "/p/b.json")))  # another parse
    assert alongside([_c("a", A), _c("b", B), _c("c")], _c(True, A)) == [_c("a", A), _c("c")]


def test_deepspeed_is_run_only_where_every_value_of_that_configuration_sets_it():
    ds = [_c(None, A), _c("ds.json", B)]
    assert runs_deepspeed(ds, _c(True, B))
    assert not runs_deepspeed(ds, _c(True, A))
    assert not runs_deepspeed([_c("ds.json"), _c(None)], _c(True))  # set in some runs only
    assert not runs_deepspeed([Possible(UNKNOWN)], _c(True))


def test_a_conditional_wrap_holds_where_every_value_of_its_subject_is_accepted():
    when = (((_c("adapters", A), _c("whole", B)), ("adapters", "lora"), True),)
    assert wraps_adapters(when, _c(True, A))
    assert not wraps_adapters(when, _c(True, B))
    assert not wraps_adapters(when, _c(True))  # unknown which file: one of them trains it whole
    unknown = (((Possible(UNKNOWN),), ("adapters",), True),)
    assert not wraps_adapters(unknown, _c(True))
    negated = (((_c("whole", A),), ("whole",), False),)  # `if mode != "whole":`
    assert not wraps_adapters(negated, _c(True, A))
    assert not wraps_adapters((), _c(True))


def _values_at(src, call_text, arg=0):
    index = build_index(dedent(src), "train")
    ev = Evaluator(index)
    (site,) = [s for s in index.calls if index.text(s.node.func) == call_text]
    return ev.values(site.node.args[arg], site.scope)


SRC = """
    import argparse
    from dataclasses import dataclass
    from transformers import HfArgumentParser, TrainingArguments

    @dataclass
    class Opts:
        mode: str = "a"

    def setup():
        p = argparse.ArgumentParser()
        p.add_argument("--cfg", default="a.json")
        a = p.parse_args()
        opts, targs = HfArgumentParser((Opts, TrainingArguments)).parse_json_file(json_file=a.cfg)
        return opts, targs

    def main():
        opts, targs = setup()
        use(opts)
    """


def test_an_instance_filled_from_a_file_names_the_files_and_the_option_and_flows_out_of_a_tuple():
    (v,) = _values_at(SRC, "use")
    assert v.kind == RETURN and v.value.callee == "train.Opts"
    assert v.value.files == ("a.json",) and v.value.option == "cfg" and v.value.choice
    assert not v.value.command_line  # the file's keys, not the user's command line


def test_a_tuple_of_a_local_function_without_a_literal_tuple_stays_unknown():
    src = SRC.replace("return opts, targs", "return pair(opts, targs)")
    assert all(v.kind == UNKNOWN for v in _values_at(src, "use"))
