"""MP301 trainer-tokenizer-argument: before/after for every shape, and the negatives."""
import pytest

from conftest import config, dedent, findings_in, fix, lint, write_tree

CODE = "MP301"


@pytest.mark.parametrize(
    "before, after",
    [
        (  # plain keyword, the library class
            """
            from transformers import Trainer
            trainer = Trainer(model=model, args=args, tokenizer=tok)  # keep me
            """,
            """
            from transformers import Trainer
            trainer = Trainer(model=model, args=args, processing_class=tok)  # keep me
            """,
        ),
        (  # module alias and Seq2SeqTrainer
            """
            import transformers as tf
            t = tf.Seq2SeqTrainer(model, args,
                                  tokenizer=tok,
                                  data_collator=c)
            """,
            """
            import transformers as tf
            t = tf.Seq2SeqTrainer(model, args,
                                  processing_class=tok,
                                  data_collator=c)
            """,
        ),
        (  # import alias
            """
            from transformers import Trainer as T
            T(model, tokenizer=tok)
            """,
            """
            from transformers import Trainer as T
            T(model, processing_class=tok)
            """,
        ),
        (  # TRL trainers
            """
            from trl import SFTTrainer, DPOTrainer
            import trl
            SFTTrainer(model=m, tokenizer=tok)
            DPOTrainer(model=m, tokenizer=tok)
            trl.GRPOTrainer(model=m, tokenizer=tok)
            """,
            """
            from trl import SFTTrainer, DPOTrainer
            import trl
            SFTTrainer(model=m, processing_class=tok)
            DPOTrainer(model=m, processing_class=tok)
            trl.GRPOTrainer(model=m, processing_class=tok)
            """,
        ),
        (  # a **kwargs dict literal (both spellings) that feeds a Trainer
            """
            from transformers import Trainer
            kw = dict(model=m, tokenizer=tok)
            other = {'args': a, 'tokenizer': tok}
            Trainer(**kw)
            Trainer(**other)
            """,
            """
            from transformers import Trainer
            kw = dict(model=m, processing_class=tok)
            other = {'args': a, 'processing_class': tok}
            Trainer(**kw)
            Trainer(**other)
            """,
        ),
        (  # a project subclass: the call, super().__init__, self.tokenizer
            """
            from transformers import Trainer

            class DistillTrainer(Trainer):
                def __init__(self, teacher, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.teacher = teacher

                def compute_loss(self, model, inputs, return_outputs=False, **kw):
                    pad = self.tokenizer.pad_token_id
                    return 0.0

            trainer = DistillTrainer(teacher, model=m, tokenizer=tok)
            print(trainer.tokenizer)
            """,
            """
            from transformers import Trainer

            class DistillTrainer(Trainer):
                def __init__(self, teacher, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.teacher = teacher

                def compute_loss(self, model, inputs, return_outputs=False, **kw):
                    pad = self.processing_class.pad_token_id
                    return 0.0

            trainer = DistillTrainer(teacher, model=m, processing_class=tok)
            print(trainer.processing_class)
            """,
        ),
        (  # a subclass that takes `tokenizer` itself: its own signature stays, super() is fixed
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def __init__(self, *args, tokenizer=None, **kwargs):
                    super().__init__(*args, tokenizer=tokenizer, **kwargs)

            MyTrainer(model=m, tokenizer=tok)
            """,
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def __init__(self, *args, tokenizer=None, **kwargs):
                    super().__init__(*args, processing_class=tokenizer, **kwargs)

            MyTrainer(model=m, tokenizer=tok)
            """,
        ),
    ],
)
def test_fix(before, after):
    assert lint(before, CODE), "expected a finding"
    fixed = fix(before, CODE)
    assert fixed == dedent(after)
    assert lint(fixed, CODE) == []  # a second run finds nothing
    assert fix(fixed, CODE) == fixed  # idempotent


@pytest.mark.parametrize(
    "src",
    [
        # not a Trainer: pipelines, collators, the user's own functions and classes
        """
        from transformers import pipeline, DataCollatorWithPadding
        pipe = pipeline("text-generation", model=m, tokenizer=tok)
        collator = DataCollatorWithPadding(tokenizer=tok)
        """,
        """
        def build(model, tokenizer=None):
            return model
        build(m, tokenizer=tok)
        """,
        """
        class Trainer:  # a look-alike, not from transformers
            def __init__(self, tokenizer):
                self.tokenizer = tokenizer
        t = Trainer(tokenizer=tok)
        print(t.tokenizer)
        """,
        """
        from mylib import Trainer
        Trainer(tokenizer=tok)
        """,
        # already migrated
        """
        from transformers import Trainer
        Trainer(model=m, processing_class=tok)
        """,
        # a trainer subclass that keeps its own `self.tokenizer`
        """
        from transformers import Trainer
        class T2(Trainer):
            def setup(self, tok):
                self.tokenizer = tok
            def log(self):
                return self.tokenizer
        """,
        # a dict that does not feed a Trainer
        """
        cfg = dict(tokenizer="gpt2")
        """,
    ],
)
def test_negatives(src):
    assert lint(src, CODE) == []


def test_subclass_defined_in_another_file(tree):
    from precision_lint.engine import Engine

    root = tree(
        {
            "pkg/__init__.py": "",
            "pkg/trainers.py": """
                from transformers import Trainer
                class KDTrainer(Trainer):
                    pass
            """,
            "pkg/train.py": """
                from .trainers import KDTrainer
                KDTrainer(model=m, tokenizer=tok)
            """,
        }
    )
    engine = Engine(config(transformers_version="5.0"), [CODE])
    diags = engine.run_paths([str(root)]).diagnostics
    assert [(d.path.endswith("train.py"), d.span.line) for d in diags] == [(True, 2)]


def test_version_awareness():
    src = """
    from transformers import Trainer
    Trainer(model=m, tokenizer=tok)
    """
    assert lint(src, CODE, config(transformers_version="4.45.2")) == []
    deprecated = lint(src, CODE, config(transformers_version="4.46.0"))
    assert len(deprecated) == 1 and "deprecated since transformers 4.46" in deprecated[0].message
    removed = lint(src, CODE, config(transformers_version="5.0.0"))
    assert "removed in transformers 5" in removed[0].message
    assert "unexpected keyword argument 'tokenizer'" in removed[0].message


def test_processor_tokenizer_message():
    src = """
    from transformers import AutoProcessor, Trainer
    processor = AutoProcessor.from_pretrained(path)
    Trainer(model=m, tokenizer=processor.tokenizer)
    """
    (d,) = lint(src, CODE)
    assert "the processor itself is usually what belongs" in d.message


def test_a_variable_named_processor_is_no_processor_by_its_name():
    """What ``x`` holds comes from the calls that reach it, not from its name: a tokenizer
    bound to ``processor`` is a tokenizer."""
    src = """
    from transformers import AutoTokenizer, Trainer
    processor = AutoTokenizer.from_pretrained(path)
    Trainer(model=m, tokenizer=processor.tokenizer)
    """
    (d,) = lint(src, CODE)
    assert "multimodal processor" not in d.message


def test_both_names_passed_reports_without_fix():
    src = """
    from transformers import Trainer
    Trainer(model=m, tokenizer=tok, processing_class=tok)
    """
    (d,) = lint(src, CODE)
    assert d.fix is None and "passed as well" in d.message


def test_its_versions_and_error_are_the_tables():
    from precision_lint.knowledge import migrations
    from precision_lint.rules.mp301_trainer_tokenizer_argument import ERROR, REMOVED_IN

    row = next(m for m in migrations() if m.code == CODE and m.kind == "keyword" and m.owner == "transformers.Trainer")
    assert (ERROR, REMOVED_IN) == (row.error, row.removed_in)
    src = "from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n"
    (d,) = lint(src, CODE, config(transformers_version="5"))
    assert "was removed in transformers 5" in d.message


@pytest.mark.parametrize(
    "src, named",
    [
        ("from trl import SFTTrainer\nSFTTrainer(model=m, tokenizer=tok)\n", "SFTTrainer"),
        ("from trl import SFTTrainer\nclass Mine(SFTTrainer):\n    pass\nMine(model=m, tokenizer=tok)\n", "SFTTrainer"),
        ("from transformers import Seq2SeqTrainer\nSeq2SeqTrainer(model=m, tokenizer=tok)\n", "Seq2SeqTrainer"),
        ("from transformers import Trainer\nclass Mine(Trainer):\n    pass\nMine(model=m, tokenizer=tok)\n", "Trainer"),
    ],
)
def test_the_error_names_the_init_the_call_reaches(src, named):
    """TRL's trainers have their own __init__: the TypeError names `SFTTrainer.__init__()`."""
    (d,) = lint(src, CODE, config(**{"transformers-version": "5.23"}))
    assert f"`TypeError: {named}.__init__() got an unexpected keyword argument 'tokenizer'`" in d.message


@pytest.mark.parametrize(
    "trainer, silent, warns, removed",
    [
        ("SFTTrainer", "0.12", "0.13", "0.16"),
        ("DPOTrainer", "0.12", "0.13", "0.16"),
        ("KTOTrainer", "0.12", "0.13", "0.14"),
        ("RLOOTrainer", "0.12", "0.13", "0.14"),
        ("RewardTrainer", "0.12", "0.13", "0.15"),
        ("GKDTrainer", "0.12", None, "0.13"),
        ("XPOTrainer", "0.12", None, "0.13"),
    ],
)
def test_each_trl_trainer_has_its_own_release(trainer, silent, warns, removed):
    """TRL 0.12 renames `tokenizer=` silently, 0.13 warns, and each trainer's own decorator
    removes it in its own release (read in the wheels); a subclass goes by its TRL base."""
    for src in (
        f"from trl import {trainer}\n{trainer}(model=m, tokenizer=tok)\n",
        f"from trl import {trainer}\nclass Mine({trainer}):\n    pass\nMine(model=m, tokenizer=tok)\n",
    ):
        assert lint(src, CODE, config(trl_version=silent)) == []
        if warns is not None:
            (d,) = lint(src, CODE, config(trl_version=warns))
            assert f"is deprecated since TRL {warns} and raises" in d.message and f"from TRL {removed} on" in d.message
        (d,) = lint(src, CODE, config(trl_version=removed))
        assert f"was removed in TRL {removed}" in d.message
        before = ".".join(str(int(p) - (i == 1)) for i, p in enumerate(removed.split(".")))
        assert all("was removed" not in d.message for d in lint(src, CODE, config(trl_version=before)))


@pytest.mark.parametrize("pins, found", [
    ("", ["MP302", "MP302"]),  # TRL 1.x: no PPOTrainer nor PPOConfig; their imports fail first
    ("trl==0.20.0\n", ["MP201", "MP301"]),  # both exist: tokenizer= is gone (0.15), bf16 on by default (0.19)
])
def test_a_class_whose_import_fails_everywhere_holds_no_finding_of_its_calls(tmp_path, pins, found):
    """The first PPO API (``PPOTrainer(config=, model=, tokenizer=, dataset=)``) on the newest TRL:
    MP302 reports the imports; the calls never run, so neither MP301's rename nor MP201's TRL
    default is said of them (review 23h)."""
    write_tree(tmp_path, {
        ".git/HEAD": "", "requirements.txt": pins or "numpy\n",
        "rollout.py": "from trl import PPOConfig, PPOTrainer\n"
                      "cfg = PPOConfig(learning_rate=1e-5)\n"
                      "runner = PPOTrainer(config=cfg, model=policy, tokenizer=tok, dataset=None)\n",
    })
    assert sorted(d.code for d in findings_in(tmp_path, ["MP201", "MP301", "MP302"])) == found
