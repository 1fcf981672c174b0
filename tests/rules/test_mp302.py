"""MP302 removed-hf-api: every kind of table row (keyword, attribute, import), before/after
for the fixes (renames, keywords moved into the TRL config), version gating, negatives."""
import pytest

from conftest import config, dedent, findings_in, fix, lint

CODE = "MP302"
NEW = config(transformers_version="5.23", trl_version="1.16")


def lint302(src, cfg=NEW):
    return lint(src, CODE, cfg)


def fix302(src, cfg=NEW, unsafe=False):
    return fix(src, CODE, cfg, unsafe=unsafe)


@pytest.mark.parametrize(
    "before, after",
    [
        (  # TrainingArguments keyword, the error's own row (removed in 4.51)
            """
            from transformers import TrainingArguments
            args = TrainingArguments(output_dir="o", evaluation_strategy="steps")  # keep
            """,
            """
            from transformers import TrainingArguments
            args = TrainingArguments(output_dir="o", eval_strategy="steps")  # keep
            """,
        ),
        (  # module-qualified, a subclass of the library (Seq2Seq) and of the project's own
            """
            import transformers as tf
            class MyArgs(tf.TrainingArguments):
                pass
            a = tf.Seq2SeqTrainingArguments("o", per_gpu_train_batch_size=2)
            b = MyArgs("o", no_cuda=True)
            """,
            """
            import transformers as tf
            class MyArgs(tf.TrainingArguments):
                pass
            a = tf.Seq2SeqTrainingArguments("o", per_device_train_batch_size=2)
            b = MyArgs("o", use_cpu=True)
            """,
        ),
        (  # a dict of the caller's, else empty, filled by update() (recall 26c: tweetnlp's loader)
            """
            from transformers import AutoModel
            def load(name, token=None, model_kwargs=None):
                model_kwargs = {} if model_kwargs is None else model_kwargs
                model_kwargs.update({"use_auth_token": token})
                return AutoModel.from_pretrained(name, **model_kwargs)
            """,
            """
            from transformers import AutoModel
            def load(name, token=None, model_kwargs=None):
                model_kwargs = {} if model_kwargs is None else model_kwargs
                model_kwargs.update({"token": token})
                return AutoModel.from_pretrained(name, **model_kwargs)
            """,
        ),
        (  # **kwargs dicts (literal and dict()) and a TRL config (a TrainingArguments subclass)
            """
            from trl import SFTConfig
            extra = {"push_to_hub_token": tok}
            more = dict(per_gpu_eval_batch_size=8)
            cfg = SFTConfig(output_dir="o", **extra, **more)
            """,
            """
            from trl import SFTConfig
            extra = {"hub_token": tok}
            more = dict(per_device_eval_batch_size=8)
            cfg = SFTConfig(output_dir="o", **extra, **more)
            """,
        ),
        (  # a method keyword on a trainer variable; from_pretrained on an Auto class
            """
            from transformers import AutoModelForCausalLM, Trainer
            model = AutoModelForCausalLM.from_pretrained("m", use_auth_token=True)
            trainer = Trainer(model=model)
            trainer.train(model_path="ckpt")
            """,
            """
            from transformers import AutoModelForCausalLM, Trainer
            model = AutoModelForCausalLM.from_pretrained("m", token=True)
            trainer = Trainer(model=model)
            trainer.train(resume_from_checkpoint="ckpt")
            """,
        ),
        (  # an attribute of a tokenizer variable; a TRL config keyword
            """
            from transformers import AutoTokenizer
            from trl import SFTConfig, GRPOConfig
            tok = AutoTokenizer.from_pretrained("m")
            print(tok.additional_special_tokens)
            SFTConfig(output_dir="o", max_seq_length=512, use_liger=True)
            GRPOConfig(output_dir="o", vllm_guided_decoding_regex=r"\\d+")
            """,
            """
            from transformers import AutoTokenizer
            from trl import SFTConfig, GRPOConfig
            tok = AutoTokenizer.from_pretrained("m")
            print(tok.extra_special_tokens)
            SFTConfig(output_dir="o", max_length=512, use_liger_kernel=True)
            GRPOConfig(output_dir="o", vllm_structured_outputs_regex=r"\\d+")
            """,
        ),
        (  # a removed module
            """
            import transformers.deepspeed
            """,
            """
            import transformers.integrations.deepspeed
            """,
        ),
    ],
)
def test_fixes(before, after):
    assert lint302(before)
    assert fix302(before) == dedent(after)
    assert lint302(after) == []


def test_a_removed_module_named_by_from_import_quotes_the_error_that_form_raises():
    # `import transformers.deepspeed` raises ModuleNotFoundError on 4.46+, but the same module
    # taken as a name of its package raises `ImportError: cannot import name ...` (run on 5.24)
    (plain,) = lint302("import transformers.deepspeed\n")
    assert "ModuleNotFoundError: No module named 'transformers.deepspeed'" in plain.message
    (named,) = lint302("from transformers import deepspeed\n")
    assert "ImportError: cannot import name 'deepspeed' from 'transformers'" in named.message
    assert "ModuleNotFoundError" not in named.message


def test_message_names_the_error_the_class_and_the_replacement():
    (d,) = lint302(
        """
        from transformers import Seq2SeqTrainingArguments
        Seq2SeqTrainingArguments(output_dir="o", evaluation_strategy="epoch")
        """
    )
    assert "`evaluation_strategy=` passed to `Seq2SeqTrainingArguments` was removed in transformers 4.51" in d.message
    assert "TypeError: Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'" in d.message
    assert "use eval_strategy=" in d.message


@pytest.mark.parametrize(
    "src, shown",
    [
        ('from transformers import AdamW\n', "ImportError: cannot import name 'AdamW' from 'transformers'"),
        ("import transformers\nopt = transformers.AdamW(params)\n", "AttributeError: module transformers has no attribute AdamW"),
        ("from trl import DataCollatorForCompletionOnlyLM\n", "from 'trl'"),
        ("from trl import PPOTrainer, PPOConfig\n", "cannot import name 'PPOConfig'"),
        ("from transformers.utils import is_torch_bf16_available\n", "is_torch_bf16_available"),
        ("import transformers\nprint(transformers.TRANSFORMERS_CACHE)\n", "TRANSFORMERS_CACHE"),
    ],
)
def test_imports_are_report_only(src, shown):
    found = lint302(src)
    assert found and any(shown in d.message for d in found)
    assert all(d.fix is None for d in found)



# The SQuAD processors: in every wheel up to 5.19.0, gone from 5.20.0 (a notebook that installs
# the newest transformers stops at the import). The package path fails as a missing module.
SQUAD = """
    from transformers import BertTokenizer, squad_convert_examples_to_features
    from transformers.data.processors.squad import SquadV1Processor

    examples = SquadV1Processor().get_train_examples("data/squad")
    features, dataset = squad_convert_examples_to_features(examples=examples, tokenizer=tok, max_seq_length=384,
                                                           doc_stride=128, max_query_length=64, is_training=True)
    """


@pytest.mark.parametrize("version", ["5.20", "5.24"])
def test_squad_processors_are_removed_from_5_20(version):
    found = lint(SQUAD, None, config(transformers_version=version))
    assert [(d.code, d.span.line) for d in found] == [("MP302", 1), ("MP302", 2)]
    assert "was removed in transformers 5.20 and raises `ImportError: cannot import name 'squad_convert_examples_to_features' from 'transformers'`" in found[0].message
    assert "raises `ModuleNotFoundError: No module named 'transformers.data.processors'`" in found[1].message
    assert all(d.fix is None and "remove it: transformers 5.20 has no SQuAD processors" in d.message for d in found)


@pytest.mark.parametrize("version", ["4.37.2", "4.57.6", "5.0", "5.19"])
def test_squad_processors_are_silent_where_they_exist(version):
    assert [d for d in lint(SQUAD, None, config(transformers_version=version)) if d.code.startswith("MP30")] == []


def test_squad_processors_under_a_pinned_4x_project(tmp_path):
    from conftest import write_tree

    def run(root):
        return findings_in(root, ["MP302", "MP304"])

    pinned = write_tree(tmp_path / "pinned", {".git/HEAD": "", "requirements.txt": "transformers==4.57.6\n", "squad.py": dedent(SQUAD)})
    assert run(pinned) == []
    newest = write_tree(tmp_path / "newest", {".git/HEAD": "", "requirements.txt": "transformers>=5.20\n", "squad.py": dedent(SQUAD)})
    assert [d.code for d in run(newest)] == ["MP302", "MP302"]

def test_report_only_rows_say_what_to_do_instead():
    found = lint302(
        """
        from transformers import AutoModelForCausalLM, TrainingArguments
        m = AutoModelForCausalLM.from_pretrained("m", load_in_8bit=True)
        TrainingArguments("o", group_by_length=True, fp16_backend="amp")
        """
    )
    assert [d.fix for d in found] == [None, None, None]
    text = " ".join(d.message for d in found)
    assert "quantization_config=BitsAndBytesConfig" in text
    assert 'train_sampling_strategy="group_by_length"' in text
    assert "remove it (mixed precision is torch.amp only)" in text



def test_the_model_class_a_from_pretrained_builds_is_named_where_the_call_names_it():
    """`{model}`: a model class of transformers raises in its own `__init__`; an Auto class
    builds the class the checkpoint names, a project subclass's or its base's `__init__`
    raises, and a class the code picks among several is any of them: not named."""
    found = lint302(
        """
        from transformers import AutoModelForCausalLM, GPT2LMHeadModel, LlamaForCausalLM
        class Mine(GPT2LMHeadModel):
            pass
        a = GPT2LMHeadModel.from_pretrained("m", use_flash_attention_2=True)
        b = AutoModelForCausalLM.from_pretrained("m", use_flash_attention_2=True)
        c = Mine.from_pretrained("m", use_flash_attention_2=True)
        cls = GPT2LMHeadModel if big else LlamaForCausalLM
        d = cls.from_pretrained("m", use_flash_attention_2=True)
        """
    )
    errors = [d.message.split("raises `")[1].split(".__init__()")[0] for d in found]
    assert errors == ["TypeError: GPT2LMHeadModel", "TypeError: <model class>", "TypeError: <model class>", "TypeError: <model class>"]


# --- SFTTrainer keywords moved into SFTConfig -------------------------------------------------
def test_move_into_the_config_of_the_same_scope_is_safe_and_one_pass():
    before = """
        from trl import SFTConfig, SFTTrainer
        def main():
            cfg = SFTConfig(
                output_dir="o",
                max_steps=4,
            )
            trainer = SFTTrainer(model=m, args=cfg, max_seq_length=128, packing=True, train_dataset=ds)
        """
    after = """
        from trl import SFTConfig, SFTTrainer
        def main():
            cfg = SFTConfig(
                output_dir="o",
                max_steps=4,
                max_length=128,
                packing=True,
            )
            trainer = SFTTrainer(model=m, args=cfg, train_dataset=ds)
        """
    found = lint302(before)
    assert len(found) == 2 and all(d.fix is not None and d.fix.applicability == "safe" for d in found)
    assert found[0].fix.edits == found[1].fix.edits  # one edit set: the whole call in one pass
    from precision_lint.fixes.fixer import apply_fixes

    fixed, applied, problem = apply_fixes(dedent(before), [d.fix for d in found])
    assert problem is None and len(applied) == 2 and fixed == dedent(after)
    assert fix302(before) == dedent(after)


def test_move_into_an_inline_config_and_out_of_the_last_position():
    before = """
        from trl import SFTConfig, SFTTrainer
        SFTTrainer(m, args=SFTConfig("o"), dataset_text_field="text")
        """
    after = """
        from trl import SFTConfig, SFTTrainer
        SFTTrainer(m, args=SFTConfig("o", dataset_text_field="text"))
        """
    assert fix302(before) == dedent(after)


def test_move_into_a_shared_config_is_unsafe():
    before = """
        from trl import SFTConfig, SFTTrainer
        CFG = SFTConfig(output_dir="o")
        def train(m):
            return SFTTrainer(m, args=CFG, max_seq_length=64)
        """
    (d,) = lint302(before)
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert fix302(before) == dedent(before)
    assert "max_length=64" in fix302(before, unsafe=True)


@pytest.mark.parametrize(
    "src, why",
    [
        (  # nothing to move into
            "from trl import SFTTrainer\ndef f(cfg):\n    SFTTrainer(m, args=cfg, max_seq_length=64)\n",
            "passes no `SFTConfig(...)`",
        ),
        (  # args= is not an SFTConfig
            "from trl import SFTTrainer\nfrom transformers import TrainingArguments\n"
            "SFTTrainer(m, args=TrainingArguments('o'), max_seq_length=64)\n",
            "is not a `SFTConfig`",
        ),
        (  # the config sets it already
            "from trl import SFTConfig, SFTTrainer\nSFTTrainer(m, args=SFTConfig('o', max_length=32), max_seq_length=64)\n",
            "already sets `max_length`",
        ),
        (  # a **kwargs dict
            "from trl import SFTConfig, SFTTrainer\nkw = {'packing': True}\nSFTTrainer(m, args=SFTConfig('o'), **kw)\n",
            "from the **kwargs dict",
        ),
    ],
)
def test_move_is_report_only_where_it_cannot_be_done(src, why):
    (d,) = lint302(src)
    assert d.fix is None and why in d.message


def test_dpo_trainer_keywords_move_into_dpo_config():
    before = """
        from trl import DPOConfig, DPOTrainer
        DPOTrainer(m, ref, args=DPOConfig("o"), beta=0.1, max_prompt_length=64)
        """
    found = lint302(before)
    assert {d.message.split("`")[1] for d in found} == {"beta=", "max_prompt_length="}
    fixed = fix302(before)
    assert 'DPOConfig("o", beta=0.1)' in fixed and "max_prompt_length=64" in fixed  # no 1:1 home in TRL 1


# --- attributes ---------------------------------------------------------------------------------
def test_attributes_on_typed_receivers_only():
    found = lint302(
        """
        from transformers import AutoConfig, GenerationConfig, LlamaConfig, PreTrainedTokenizerFast
        cfg = LlamaConfig()
        print(cfg.rope_theta)
        auto = AutoConfig.from_pretrained("m")
        print(auto.max_length)
        gen = GenerationConfig(max_length=20)
        print(gen.max_length)
        tok = PreTrainedTokenizerFast(tokenizer_file="t.json")
        tok.batch_encode_plus(["a"])
        other = make_something()
        print(other.rope_theta, other.encode_plus)
        """
    )
    assert [(d.span.line, d.message.split("`")[1]) for d in found] == [
        (3, "cfg.rope_theta"), (5, "auto.max_length"), (9, "tok.batch_encode_plus")
    ]


def test_self_attribute_in_a_library_subclass_unless_it_sets_it():
    found = lint302(
        """
        from transformers import PreTrainedTokenizerFast
        class Tok(PreTrainedTokenizerFast):
            def go(self):
                return self.encode_plus("a")
        class Own(PreTrainedTokenizerFast):
            def __init__(self):
                self.encode_plus = print
            def go(self):
                return self.encode_plus("a")
        """
    )
    assert [d.span.line for d in found] == [4]


# --- version gating ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "version, reported",
    [("4.40", False), ("4.50.3", False), ("4.51", True), ("5.23", True)],
)
def test_gated_on_the_transformers_version(version, reported):
    src = "from transformers import TrainingArguments\nTrainingArguments('o', evaluation_strategy='no')\n"
    assert bool(lint302(src, config(transformers_version=version))) is reported


@pytest.mark.parametrize("version, reported", [("0.12", False), ("0.13", True), ("1.16", True)])
def test_gated_on_the_trl_version(version, reported):
    src = "from trl import SFTTrainer\nSFTTrainer(m, dataset_text_field='text')\n"
    assert bool(lint302(src, config(trl_version=version))) is reported


def test_no_rename_where_the_target_predates_the_new_name():
    """TRL 0.14 has removed SFTTrainer(max_seq_length=) but SFTConfig has no max_length yet
    (0.16): moving it as `max_length` would break; it moves under the name 0.14's SFTConfig has."""
    src = """
        from trl import SFTConfig, SFTTrainer
        SFTTrainer(m, args=SFTConfig("o"), max_seq_length=64)
        """
    (d,) = lint302(src, config(trl_version="0.14"))
    assert "use SFTConfig(max_seq_length=...)" in d.message and "max_length=" not in d.fix.edits[0].content
    assert d.fix.edits[0].content == ", max_seq_length=64"
    (d,) = lint302(src, config(trl_version="0.16"))
    assert d.fix is not None and d.fix.edits[0].content == ", max_length=64"


# --- negatives --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        # a function of the user's own with the same keyword
        "def TrainingArguments(**kw): pass\nTrainingArguments(evaluation_strategy='no')\n",
        # the project's subclass takes the keyword in its own __init__
        "from transformers import TrainingArguments\nclass A(TrainingArguments):\n"
        "    def __init__(self, no_cuda=False, **kw):\n        super().__init__(use_cpu=no_cuda, **kw)\nA(no_cuda=True)\n",
        # an unrelated library with a keyword of the same name
        "import optuna\noptuna.create_study(evaluation_strategy='x')\n",
        # tokenizers accept use_auth_token silently (only models reject it)
        "from transformers import AutoTokenizer\nAutoTokenizer.from_pretrained('m', use_auth_token=True)\n",
        # the tokenizer keyword belongs to MP301
        "from transformers import Trainer\nTrainer(model=m, tokenizer=tok)\n",
        # BLIP-2 keeps `language_model` on 5.x (review 27a); LLaVA's moved to `model.model`
        "from transformers import Blip2ForConditionalGeneration\n"
        "m = Blip2ForConditionalGeneration.from_pretrained('x')\nlm = m.language_model\n",
    ],
)
def test_negatives(src):
    assert lint302(src) == []


def test_a_major_version_alone_is_that_version():
    src = "from transformers import TrainingArguments\nTrainingArguments('o', no_cuda=True)\n"
    assert lint302(src, config(transformers_version="5"))
    assert lint302(src, config(transformers_version="4")) == []


@pytest.mark.parametrize("pin, reported", [("trl==0.12.0", False), ("trl==0.13.0", True), ("trl<0.13", False)])
def test_gated_on_the_projects_trl_pin(tmp_path, pin, reported):
    from conftest import write_tree
    from precision_lint.workspace.config import load
    from precision_lint.engine import Engine

    root = write_tree(
        tmp_path,
        {
            "requirements.txt": f"{pin}\n",
            "setup.py": "",
            "train.py": "from trl import SFTTrainer\nSFTTrainer(m, dataset_text_field='text')\n",
        },
    )
    cfg = load(start=[str(root)])
    found = Engine(cfg, ["MP302"], jobs=1).run_paths([str(root)]).diagnostics
    assert bool(found) is reported


def test_a_subclass_defined_in_another_file(tmp_path):
    """The dominant shape: a helper module defines the project's arguments class, the script
    builds it with a removed keyword."""
    from conftest import write_tree
    from precision_lint.engine import check_paths

    root = write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/arguments.py": "from transformers import TrainingArguments\nclass RunArgs(TrainingArguments):\n    pass\n",
            "train.py": "from pkg.arguments import RunArgs\nargs = RunArgs('o', per_gpu_train_batch_size=8)\n",
        },
    )
    found = [d for d in check_paths([str(root)], NEW, select=["MP302"])]
    assert [(d.path.endswith("train.py"), d.span.line) for d in found] == [(True, 2)]
    assert "`RunArgs`" in found[0].message


def test_super_init_in_a_library_subclass():
    found = lint302(
        """
        from transformers import TrainingArguments
        from trl import SFTTrainer
        class RunArgs(TrainingArguments):
            def __init__(self, out):
                super().__init__(output_dir=out, evaluation_strategy="epoch")
        class MyTrainer(SFTTrainer):
            def __init__(self, model, cfg):
                super().__init__(model=model, args=cfg, max_seq_length=256)
        """
    )
    assert [(d.span.line, d.fix is not None) for d in found] == [(5, True), (8, False)]
    assert "passed to `TrainingArguments`" in found[0].message
    assert "passed to `SFTTrainer`" in found[1].message


def test_tokenizer_and_max_seq_length_in_one_call_are_fixed_together():
    """trl#6168's shape: MP301's rename and MP302's move touch one call without clashing."""
    from precision_lint.engine import fix_source

    before = dedent(
        """
        from trl import SFTConfig, SFTTrainer
        cfg = SFTConfig(output_dir="o", bf16=False, fp16=False)
        trainer = SFTTrainer(model=m, max_seq_length=512, tokenizer=tok, args=cfg, packing=True)
        """
    )
    after = dedent(
        """
        from trl import SFTConfig, SFTTrainer
        cfg = SFTConfig(output_dir="o", bf16=False, fp16=False, max_length=512, packing=True)
        trainer = SFTTrainer(model=m, processing_class=tok, args=cfg)
        """
    )
    assert fix_source(before, path="train.py", config=NEW) == after
    assert lint(after, None, NEW) == []


# --- keywords handed on through a helper's **kwargs ---------------------------------------------
def test_keyword_forwarded_through_a_helpers_kwargs():
    before = """
        from transformers import TrainingArguments
        def make_args(out, **overrides):
            return TrainingArguments(output_dir=out, **overrides)
        args = make_args("o", evaluation_strategy="steps", logging_steps=5)
        """
    (d,) = lint302(before)
    assert "passed to `make_args`, which hands its **kwargs to `TrainingArguments` (line 3)" in d.message
    assert fix302(before) == dedent(before).replace("evaluation_strategy=", "eval_strategy=")


def test_keyword_forwarded_by_a_helper_module_in_another_file(tmp_path):
    """The dominant shape of the reference's threads: a helper module calls Hugging Face."""
    from conftest import write_tree
    from precision_lint.engine import check_paths

    root = write_tree(
        tmp_path,
        {
            "helpers/__init__.py": "",
            "helpers/hf.py": """
                from trl import SFTConfig

                def sft_config(out, **extra):
                    return SFTConfig(output_dir=out, bf16=False, **extra)
                """,
            "train.py": "from helpers.hf import sft_config\ncfg = sft_config('o', max_seq_length=512, no_cuda=True)\n",
        },
    )
    found = check_paths([str(root)], NEW, select=["MP302"])
    assert sorted((d.path.rsplit("/", 1)[-1], d.message.split("`")[1]) for d in found) == [
        ("train.py", "max_seq_length="), ("train.py", "no_cuda=")
    ]
    assert all("helpers/hf.py" in d.message and d.fix is not None for d in found)


@pytest.mark.parametrize(
    "src",
    [
        # the helper names the keyword itself: it never reaches **kwargs
        "from transformers import TrainingArguments\n"
        "def make(no_cuda=False, **kw):\n    return TrainingArguments('o', use_cpu=no_cuda, **kw)\n"
        "make(no_cuda=True)\n",
        # the helper hands **kwargs to something that is not a library class of the table
        "def make(**kw):\n    return dict(**kw)\nmake(evaluation_strategy='no')\n",
        # no **kwargs at all
        "from transformers import TrainingArguments\n"
        "def make(out):\n    return TrainingArguments(out)\nmake(evaluation_strategy='no')\n",
    ],
)
def test_forwarding_negatives(src):
    assert lint302(src) == []


# --- code written for several versions ----------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        # a fallback import for old versions under a version check (peft's shape)
        "import transformers\nfrom packaging import version\n"
        "if version.parse(transformers.__version__) >= version.parse('4.33.0'):\n"
        "    from transformers.integrations import deepspeed_config\n"
        "else:\n    from transformers.deepspeed import deepspeed_config\n",
        # tried first, the ImportError caught
        "try:\n    from transformers import AdamW\nexcept ImportError:\n    from torch.optim import AdamW\n",
        # the old keyword as the fallback after a TypeError
        "from transformers import TrainingArguments\n"
        "try:\n    args = TrainingArguments('o', eval_strategy='no')\n"
        "except TypeError:\n    args = TrainingArguments('o', evaluation_strategy='no')\n",
    ],
)
def test_code_that_expects_the_failure_is_left_alone(src):
    assert lint302(src) == []


def test_an_unrelated_try_does_not_hide_the_crash():
    src = (
        "from transformers import TrainingArguments\n"
        "try:\n    args = TrainingArguments('o', evaluation_strategy='no')\nexcept KeyError:\n    pass\n"
    )
    assert len(lint302(src)) == 1


def test_attributes_of_a_models_config():
    found = lint302(
        """
        from transformers import AutoModelForCausalLM, Trainer
        model = AutoModelForCausalLM.from_pretrained("m")
        theta = model.config.rope_theta
        n = model.config.max_length
        trainer = Trainer(model=model)
        other = trainer.config.max_length
        """
    )
    assert [(d.span.line, d.message.split("`")[1]) for d in found] == [
        (3, "model.config.rope_theta"), (4, "model.config.max_length")
    ]
    assert "model.generation_config.<name>" in found[1].message


def test_a_project_class_named_like_a_config_is_no_pretrained_config():
    src = """
        class DecisionConfig:
            def __init__(self):
                self.scale = 1.0

            def warper(self):
                return self.temperature
        """
    assert lint(src, "MP302") == []


def test_a_generation_config_keeps_its_sampling_attributes():
    src = """
        import copy
        from transformers import GenerationConfig

        gen = GenerationConfig(max_new_tokens=8)
        gen.do_sample = False
        gen.top_p = 0.9
        """
    assert lint(src, "MP302") == []


# peft renamed prepare_model_for_int8_training to prepare_model_for_kbit_training in 0.4 (the
# old name warned and forwarded) and dropped the old name in 0.10: a LoRA script whose
# requirements install peft from its main branch stops at the import. Judged by peft's pin.
PEFT_INT8 = """\
import transformers
from peft import LoraConfig, get_peft_model, prepare_model_for_int8_training

model = transformers.AutoModelForCausalLM.from_pretrained("m", device_map="auto")
model = prepare_model_for_int8_training(model)
model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM"))
"""


@pytest.mark.parametrize(
    "requirement, code",
    [("peft==0.3.0", None), ("peft==0.4.0", "MP304"), ("peft==0.9.0", "MP304"), ("peft>=0.4,<0.11", "MP304"),
     ("peft==0.10.0", "MP302"), ("peft>=0.10", "MP302")],
)
def test_peft_prepare_model_for_int8_training_by_peft_pin(tmp_path, requirement, code):
    from conftest import write_tree

    root = write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": f"transformers>=4.28.0\n{requirement}\n", "finetune.py": PEFT_INT8})
    found = findings_in(root, ["MP302", "MP304"])
    assert [d.code for d in found] == ([code] if code else [])
    if code:
        (d,) = found
        assert (d.span.line, d.fix) == (2, None)
        assert "raises `ImportError: cannot import name 'prepare_model_for_int8_training' from 'peft'`" in d.message
        assert "use prepare_model_for_kbit_training" in d.message and "peft 0.10" in d.message


@pytest.mark.parametrize("version, code", [("4.38", None), ("4.45", "MP304"), ("4.51", "MP302")])
def test_the_examples_tpu_probe_import(version, code):
    """``from transformers import is_torch_tpu_available`` (scripts grown from the 4.x examples):
    warned when called from 4.39, gone from the package in 4.51."""
    src = "from transformers import is_torch_tpu_available\n\nif is_torch_tpu_available():\n    pass\n"
    found = [d.code for d in lint(src, cfg=config(transformers_version=version)) if d.code in ("MP302", "MP304")]
    assert found == ([code] if code else [])


@pytest.mark.parametrize("value, told", [("False", "remove it (`False` is what it defaulted to"), ("True", 'use train_sampling_strategy="group_by_length"')])
def test_a_removed_flag_given_its_default_is_removed_not_replaced(value, told):
    """``group_by_length=False``: its replacement, ``train_sampling_strategy="group_by_length"``,
    would turn grouping on; the default it passes is what the run does without it."""
    src = f"from transformers import TrainingArguments\n\nargs = TrainingArguments('out', group_by_length={value})\n"
    (d,) = [d for d in lint(src, cfg=config(transformers_version="5.2")) if d.code == "MP302"]
    assert told in d.message


@pytest.mark.parametrize(
    "keyword, value, told",
    [
        ("use_flash_attention_2", "False", "remove it (`False` is what it defaulted to"),
        ("use_flash_attention_2", "True", 'use attn_implementation="flash_attention_2"'),
        ("load_in_8bit", "False", "remove it (`False` is what it defaulted to"),
        ("load_in_4bit", "True", "use quantization_config=BitsAndBytesConfig(...)"),
    ],
)
def test_a_removed_loader_flag_given_its_default_is_removed_not_replaced(keyword, value, told):
    """``use_flash_attention_2=False`` (held-out 46u's F1): its replacement would turn
    FlashAttention-2 on (and need an Ampere GPU); ``load_in_8bit=False`` asks for no
    quantization. The default is what the load does without the keyword."""
    src = f"from transformers import AutoModelForCausalLM\n\nm = AutoModelForCausalLM.from_pretrained('m', {keyword}={value})\n"
    (d,) = [d for d in lint(src, cfg=config(transformers_version="5.2")) if d.code == "MP302"]
    assert told in d.message


@pytest.mark.parametrize(
    "handler, reported",
    [
        ("return TrainingArguments('out')", False),
        ("raise", True),
        ("raise SystemExit('see the README') from err", False),
        ("return None", True),
    ],
)
def test_a_handler_that_raises_again_survives_nothing(handler, reported):
    """A removed keyword inside ``try`` is code written for the TypeError where the handler goes
    on with a fallback of its own (``return TrainingArguments('out')``) or stops with an error of
    its own (the author expected it); one that raises the same exception again (``log; raise``)
    stops the run all the same, and one that catches any error, reports it and returns nothing
    (``return None``) swallows it: what the ``try`` made is lost on the versions without the
    keyword (held-out 30u: every evaluation round "model not available")."""
    src = (
        "from transformers import TrainingArguments\n\n\ndef make_args():\n    try:\n"
        "        return TrainingArguments('out', evaluation_strategy='steps')\n"
        f"    except Exception as err:\n        print('bad arguments', err)\n        {handler}\n"
    )
    assert bool([d for d in lint(src, cfg=config(transformers_version="5.0")) if d.code == "MP302"]) == reported


@pytest.mark.parametrize(
    "handler, reported",
    [
        ("print(f'could not load: {err}')", True),  # the model is never bound: the code after it fails
        ("logger.warning('no 8-bit load: %s', err)", True),
        ("model = AutoModelForCausalLM.from_pretrained('m')", False),  # a fallback binds it
    ],
)
def test_a_handler_that_only_reports_leaves_what_the_try_binds_unbound(handler, reported):
    """``try: model = from_pretrained(..., load_in_8bit=True)`` / ``except Exception as e: print(e)``
    (review 24b): on transformers 5 the TypeError is printed and ``model`` never bound, so the next
    line that reads it fails. A handler that binds it (a fallback load) expected the failure."""
    src = (
        "import logging\nfrom transformers import AutoModelForCausalLM\nlogger = logging.getLogger()\n"
        "try:\n    model = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=True)\n"
        f"except Exception as err:\n    {handler}\nmodel.config.use_cache = False\n"
    )
    assert bool([d for d in lint(src, cfg=config(transformers_version="5.0")) if d.code == "MP302"]) == reported


def test_a_reported_failure_of_a_call_that_binds_nothing_is_survived():
    """``try: model.gradient_checkpointing_enable(...)`` / ``except Exception as e: print(e)``: an
    optional step skipped, nothing left unbound; the handler expected it."""
    src = (
        "from transformers import TrainingArguments\n"
        "try:\n    TrainingArguments('o', evaluation_strategy='no').to_json_string()\n"
        "except Exception as err:\n    print(err)\n"
    )
    assert not [d for d in lint(src, cfg=config(transformers_version="5.0")) if d.code == "MP302"]


@pytest.mark.parametrize(
    "before, body",
    [
        ("model = None\n", "model = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=True)"),  # bound before
        ("", "self_model.attn = AutoModelForCausalLM.from_pretrained('m', load_in_8bit=True)"),  # no variable
    ],
)
def test_a_reporting_handler_after_a_binding_or_around_an_attribute_store_is_a_fallback(before, body):
    """Where the name was bound before the ``try`` (``model = None``), or the body stores an
    attribute, the code after a reporting handler reads something bound: the handler expected it."""
    src = (
        "from transformers import AutoModelForCausalLM\nclass _Holder: pass\nself_model = _Holder()\n"
        f"{before}try:\n    {body}\nexcept Exception as err:\n    print(err)\n"
    )
    assert not [d for d in lint(src, cfg=config(transformers_version="5.0")) if d.code == "MP302"]


def test_reading_what_a_try_binds_leaves_the_tree_as_it_was():
    """The names a ``try`` body binds are read from a copy of each assignment's targets: the
    tree every extractor reads keeps ``a, b = ...`` and ``self.x = ...`` whole."""
    import ast
    from precision_lint.semantic.index import _caught_names

    tree = ast.parse("try:\n    a, b = f()\n    self.x = 1\n    c = d = 2\nexcept Exception as e:\n    print(e)\n")
    before = ast.dump(tree)
    assert _caught_names(tree.body[0]) == ()
    assert ast.dump(tree) == before


@pytest.mark.parametrize(
    "src, named",
    [
        # a subclass of Qwen2-Audio reading `self.language_model` (51 tune, a speech SFT script):
        # Python names the object's own class, the project's `Model`, not LLaVA's
        (
            "from transformers import Qwen2AudioForConditionalGeneration\n"
            "class Model(Qwen2AudioForConditionalGeneration):\n"
            "    def head(self):\n"
            "        return self.language_model.lm_head\n",
            "'Model' object",
        ),
        (
            "from transformers import LlavaForConditionalGeneration\n"
            "m = LlavaForConditionalGeneration.from_pretrained('x')\nlm = m.language_model\n",
            "'LlavaForConditionalGeneration' object",
        ),
    ],
)
def test_a_removed_attributes_error_names_the_objects_class(src, named):
    [found] = lint302(src)
    assert f"AttributeError: {named} has no attribute 'language_model'" in found.message


def test_peft_auto_classes_hand_quantization_keywords_to_the_base_model():
    """`AutoPeftModelForCausalLM.from_pretrained(path, load_in_4bit=True)` passes its keywords to
    the base model's `from_pretrained` (peft's `auto.py`), which has no `load_in_4bit` from
    transformers 5.0 (a held-over miss of review 48c)."""
    src = (
        "from peft import AutoPeftModelForCausalLM\n"
        "model = AutoPeftModelForCausalLM.from_pretrained('out', load_in_4bit=True, bnb_4bit_quant_type='nf4')\n"
    )
    found = lint302(src)
    assert [f.message.split("`")[1] for f in found] == ["load_in_4bit=", "bnb_4bit_quant_type="]
    assert all("AutoPeftModelForCausalLM.from_pretrained" in f.message for f in found)


def test_trl_trainer_utils_prepare_deepspeed_is_gone_from_trl_1_1():
    """`from trl.trainer.utils import prepare_deepspeed` (a distillation script's teacher set-up):
    in trl/trainer/utils.py up to TRL 1.0.0, absent from 1.1.0; `trl.models.prepare_deepspeed`
    takes other arguments, so there is no automatic fix (48c's miss)."""
    src = "from trl.trainer.utils import prepare_deepspeed\nteacher = prepare_deepspeed(teacher, 8, fp16=True)\n"
    [found] = lint302(src, config(trl_version="1.1.0"))
    assert "cannot import name 'prepare_deepspeed' from 'trl.trainer.utils'" in found.message and found.fix is None
    assert lint302(src, config(trl_version="1.0.0")) == []
    assert lint302("from trl.models import prepare_deepspeed\n", config(trl_version="1.1.0")) == []
