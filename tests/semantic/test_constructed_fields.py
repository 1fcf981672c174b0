"""An instance's field, read where the instance arrives as a parameter (``settings.dtype`` in
a helper): what the one construction that reaches it passes, not the class's default.

A dataclass (or any class whose ``__init__`` is generated from its fields) keeps what its
constructor was given; its default is read only when the call leaves the field out. The
false shape this guards against: an inference script whose config dataclass defaults to
``dtype = "bfloat16"`` but is always built with ``dtype=pick()``, a capability check that
chooses float16 below sm80, got MP201 "bf16 without a capability check" from the default.
"""
from conftest import config, lint, write_tree

from precision_lint.engine import Engine

PICK = """
    import torch
    from dataclasses import dataclass


    def pick() -> str:
        if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
            return "bfloat16"
        return "float16"


    @dataclass
    class Settings:
        dtype: str = "bfloat16"
        steps: int = 10


    def generate(model, x, settings):
        with torch.autocast("cuda", dtype=getattr(torch, settings.dtype)):
            return model(x)


    if __name__ == "__main__":
        net = torch.nn.Linear(4, 4).cuda()
        settings = {construction}
        print(generate(net, torch.randn(2, 4, device="cuda"), settings))
    """


def _mp201(construction: str):
    return lint(PICK.replace("{construction}", construction), "MP201")


def test_a_field_passed_by_keyword_replaces_the_default():
    assert _mp201("Settings(dtype=pick())") == []


def test_a_field_passed_by_position_replaces_the_default():
    assert _mp201("Settings(pick())") == []


def test_a_construction_that_leaves_the_field_out_reads_the_default():
    (finding,) = _mp201("Settings(steps=3)")
    assert finding.span.line == 18


def test_a_field_passed_a_hard_coded_bf16_is_still_a_finding():
    (finding,) = _mp201('Settings(dtype="bfloat16")')
    assert finding.span.line == 18


def test_a_post_init_may_set_the_field_so_the_default_still_counts():
    src = PICK.replace("{construction}", "Settings(dtype=pick())").replace(
        "        steps: int = 10\n",
        "        steps: int = 10\n\n        def __post_init__(self):\n            self.dtype = \"bfloat16\"\n",
    )
    assert len(lint(src, "MP201")) == 1


def test_a_class_with_its_own_init_is_not_read_by_keyword():
    """``__init__(self, dtype)`` may store anything under ``self.dtype``: the keyword is a
    parameter of it, judged through that ``__init__``, not a field."""
    src = """
        import torch

        class Settings:
            dtype = "bfloat16"

            def __init__(self, dtype="float16"):
                self.steps = 3

        def generate(model, x, settings):
            with torch.autocast("cuda", dtype=getattr(torch, settings.dtype)):
                return model(x)

        if __name__ == "__main__":
            print(generate(torch.nn.Linear(4, 4).cuda(), torch.randn(2, 4), Settings(dtype="float16")))
        """
    (finding,) = lint(src, "MP201")
    assert finding.span.line == 10


def test_the_construction_in_another_file(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "settings.py": """
                from dataclasses import dataclass

                @dataclass
                class Settings:
                    dtype: str = "bfloat16"
                """,
            "generation.py": """
                import torch

                def generate(model, x, settings):
                    with torch.autocast("cuda", dtype=getattr(torch, settings.dtype)):
                        return model(x)
                """,
            "infer.py": """
                import torch
                from generation import generate
                from settings import Settings

                def pick():
                    return "bfloat16" if torch.cuda.is_bf16_supported(including_emulation=False) else "float16"

                if __name__ == "__main__":
                    print(generate(torch.nn.Linear(4, 4).cuda(), torch.randn(2, 4), Settings(dtype=pick())))
                """,
        },
    )
    engine = Engine(config(), ["MP201"], jobs=1)
    infer = root / "infer.py"
    assert engine.run_paths([str(root)]).diagnostics == []
    infer.write_text(infer.read_text().replace("Settings(dtype=pick())", "Settings()"))
    assert [d.path.endswith("generation.py") for d in Engine(config(), ["MP201"], jobs=1).run_paths([str(root)]).diagnostics] == [True]
