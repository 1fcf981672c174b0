"""Attribute rows of review 24b: generation parameters stored on a model config beyond the first
nine (M4: `config.early_stopping` / `length_penalty`, the rest of 4.57's
`_get_global_generation_defaults`, which 5.x's `save_pretrained` refuses), and the AMP state a
Trainer subclass read from Trainer (M6: `self.do_grad_scaling` / `self.scaler`, gone in 4.35;
`self.use_apex`, gone in 5.0)."""
from __future__ import annotations

import pytest

from conftest import findings_in, write_tree

CONFIG = """
from transformers import VisionEncoderDecoderModel

model = VisionEncoderDecoderModel.from_pretrained("org/ocr-base")
model.config.NAME = VALUE
model.save_pretrained("out")
"""


def stored(tmp_path, name, value="2.0", pin=None):
    files = {".git/HEAD": "", "train.py": CONFIG.replace("NAME", name).replace("VALUE", value)}
    if pin:
        files["requirements.txt"] = pin + "\n"
    write_tree(tmp_path, files)
    return [d.code for d in findings_in(tmp_path, ["MP302", "MP304"]) if f"config.{name} = " in d.message]


@pytest.mark.parametrize("name", ["early_stopping", "length_penalty", "num_return_sequences", "forced_bos_token_id"])
def test_a_generation_parameter_stored_on_the_config_fails_on_5(tmp_path, name):
    assert stored(tmp_path, name) == ["MP302"]


def test_before_5_the_store_is_read(tmp_path):
    assert stored(tmp_path, "early_stopping", pin="transformers==4.57.1") == []


@pytest.mark.parametrize("name", ["forced_eos_token_id", "suppress_tokens", "use_cache", "decoder_start_token_id"])
def test_a_field_of_model_configs_is_no_generation_parameter_of_the_table(tmp_path, name):
    assert stored(tmp_path, name, "0") == []


def test_a_generation_config_store_is_the_replacement(tmp_path):
    write_tree(tmp_path, {".git/HEAD": "", "train.py": CONFIG.replace("model.config.NAME = VALUE", "model.generation_config.early_stopping = True")})
    assert [d for d in findings_in(tmp_path, ["MP302", "MP304"]) if "early_stopping" in d.message] == []


TRAINER = """
from transformers import Trainer


class AWPTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = self.compute_loss(model, inputs)
        if self.do_grad_scaling:
            self.scaler.scale(loss).backward()
        elif self.use_apex:
            raise NotImplementedError
        else:
            self.accelerator.backward(loss)
        return loss.detach()
"""


def amp_reads(tmp_path, pin=None, script=TRAINER):
    files = {".git/HEAD": "", "trainer.py": script}
    if pin:
        files["requirements.txt"] = pin + "\n"
    write_tree(tmp_path, files)
    return sorted(
        (d.code, d.message.split("`")[1]) for d in findings_in(tmp_path, ["MP302", "MP304"])
    )


def test_a_trainer_subclass_reading_the_removed_amp_state(tmp_path):
    assert amp_reads(tmp_path) == [("MP302", "self.do_grad_scaling"), ("MP302", "self.scaler"), ("MP302", "self.use_apex")]


def test_4_40_has_use_apex_but_no_scaler(tmp_path):
    assert amp_reads(tmp_path, "transformers==4.40.2") == [("MP302", "self.do_grad_scaling"), ("MP302", "self.scaler")]


def test_4_34_has_all_of_them(tmp_path):
    assert amp_reads(tmp_path, "transformers==4.34.0") == []


def test_a_subclass_that_sets_its_own_scaler(tmp_path):
    script = (
        "import torch\nfrom transformers import Trainer\n\n\n"
        "class ScaledTrainer(Trainer):\n"
        "    def __init__(self, *a, **k):\n"
        "        super().__init__(*a, **k)\n"
        "        self.scaler = torch.amp.GradScaler('cuda')\n\n"
        "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
        "        loss = self.compute_loss(model, inputs)\n"
        "        self.scaler.scale(loss).backward()\n"
        "        return loss.detach()\n"
    )
    assert amp_reads(tmp_path, script=script) == []


def test_a_class_that_is_no_trainer(tmp_path):
    script = "class Loop:\n    def step(self):\n        return self.do_grad_scaling and self.use_apex\n"
    assert amp_reads(tmp_path, script=script) == []
