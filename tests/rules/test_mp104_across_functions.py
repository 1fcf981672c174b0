"""MP104 across functions and files: the optimizer is built in a function over the parameters
of its argument (``def fit(net): AdamW(net.parameters())``) and a caller, here or in another
module, passes a model it loads in float16. What callers pass is the join's
(``project/interproc.py``); whether that model trains as float16 is the caller's weights facts
(review 20c's and 21's MP104 misses: the optimizer in a training-loop module, the model made in
the script)."""
import pytest
from conftest import findings_in, write_tree


LOOP = """\
import torch


def fit(net, batches):
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    for ids in batches:
        net(input_ids=ids, labels=ids).loss.backward()
        opt.step()
"""
MAIN = """\
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from pkg.loop import fit


def main():
    net = AutoModelForCausalLM.from_pretrained("some/lm", torch_dtype=torch.float16)
{between}
    fit(net, [])


if __name__ == "__main__":
    main()
"""


def findings(tmp_path, between=""):
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "requirements.txt": "peft==0.13.0\n", "pkg/__init__.py": "", "pkg/loop.py": LOOP,
        "pkg/main.py": MAIN.format(between=between),
    })
    found = findings_in(root, ["MP104"])
    return [(d.path.replace(str(root), "").lstrip("/"), d.span.line, [(r.path.replace(str(root), "").lstrip("/"), r.span.line) for r in d.related]) for d in found]



def test_the_optimizer_in_another_module_over_a_float16_model_its_caller_loads(tmp_path):
    assert findings(tmp_path) == [("pkg/loop.py", 5, [("pkg/main.py", 9)])]


@pytest.mark.parametrize("between", [
    "    net.float()",  # cast back in place
    "    net = net.to(torch.float32)",  # another dtype under the same name
    "    net = get_peft_model(net, LoraConfig(r=8))",  # float32 adapters on peft 0.13
    "    net.requires_grad_(False)",  # nothing of it trains
])
def test_a_model_that_does_not_train_as_float16_there_is_left_alone(tmp_path, between):
    assert findings(tmp_path, between) == []


HELPERS = """\
def trainable_params(m):
    return [p for n, p in m.named_parameters() if "lora_" in n]


def describe(m):
    return str(m)
"""
LOOP_THROUGH_HELPER = """\
import torch

from pkg.helpers import {helper}


def fit(net, batches):
    params = {helper}(net)
    opt = torch.optim.AdamW(params, lr=1e-4)
    for ids in batches:
        net(input_ids=ids, labels=ids).loss.backward()
        opt.step()
"""


@pytest.mark.parametrize("helper, found", [("trainable_params", 1), ("describe", 0)])
def test_parameters_a_helper_of_another_module_returns(tmp_path, helper, found):
    """``params = trainable_params(net)``, whose function returns ``net``'s parameters (review
    21's M1, DPO-LoRA: hand-written LoRA parameters picked by a helper): the optimizer updates
    ``net``'s parameters; a helper that returns something else hands it none."""
    root = write_tree(tmp_path / "p", {
        ".git/HEAD": "", "pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
        "pkg/loop.py": LOOP_THROUGH_HELPER.format(helper=helper), "pkg/main.py": MAIN.format(between=""),
    })
    found_now = findings_in(root, ["MP104"])
    assert len(found_now) == found


def test_parameter_returns_facts():
    from precision_lint.facts.extract import extract_facts

    facts = extract_facts(HELPERS, "pkg/helpers.py", "pkg.helpers")
    ((function, (ref,)),) = facts.section("parameter_returns")
    assert (function, ref.name, ref.index) == ("pkg.helpers.trainable_params", "m", 0)
