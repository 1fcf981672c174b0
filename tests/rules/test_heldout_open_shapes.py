"""Shapes found in the held-out review of 2026-12-02 (#23's closing note) that precision-lint
gets wrong today, each a small program of our own. They are strict expected failures: the day
one passes, pytest says so, and its marker comes off.
"""
import pytest

from conftest import dedent, findings_in, lint, write_tree


@pytest.mark.xfail(
    strict=True,
    reason="MP202 names the ImportError for missing flash-attn where the value is chosen only when "
    "`importlib.util.find_spec('flash_attn')` found the package: only the kernel's RuntimeError can "
    "happen there (the guard is not read as a package test, as a guarded `import flash_attn` is)",
)
def test_mp202_a_choice_behind_a_package_test_claims_only_the_kernel_error():
    src = """
        import importlib.util

        import torch
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(
            "some/model",
            torch_dtype=torch.float16,
            attn_implementation="flash_attention_2" if importlib.util.find_spec("flash_attn") is not None else "sdpa",
        )
    """
    (d,) = lint(src, "MP202")
    assert "FlashAttention only supports Ampere GPUs or newer" in d.message
    assert "doesn't seem to be installed" not in d.message


@pytest.mark.xfail(
    strict=True,
    reason="MP304 reads `torch_dtype=` of `from_pretrained` only on the library's own classes: a "
    "project's subclass of `PreTrainedModel` (a copied modeling file) inherits the same "
    "`from_pretrained`, which warns the same way on transformers >= 4.56",
)
def test_mp304_torch_dtype_of_a_project_subclass_of_pretrained_model(tmp_path):
    root = write_tree(
        tmp_path,
        {
            ".git/HEAD": "",
            "tiny_model.py": """
                from transformers.modeling_utils import PreTrainedModel


                class TinyLM(PreTrainedModel):
                    def forward(self, x):
                        return x
            """,
            "run.py": """
                import torch
                from tiny_model import TinyLM

                model = TinyLM.from_pretrained("some/model", torch_dtype=torch.float16)
            """,
        },
    )
    found = [d for d in findings_in(root, ["MP304"]) if d.path.endswith("run.py")]
    assert len(found) == 1 and "torch_dtype" in found[0].message
