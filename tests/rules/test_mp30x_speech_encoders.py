"""MP302 / MP304 on the speech models' removed methods, as the HF CTC fine-tuning blog's code
(widely copied) calls them: ``model.freeze_feature_extractor()`` (warns from transformers 4.16,
``AttributeError`` from 5.0: ``freeze_feature_encoder()``), and ``processor.as_target_processor()``
through the blog's ``DataCollatorCTCWithPadding`` (a dataclass whose field ``processor:
Wav2Vec2Processor`` types ``self.processor``) or an ``AutoProcessor`` (review 36a's M1-M3)."""
import pytest
from conftest import findings_in, write_tree

README = "```bash\nconda create -n asr python=3.8\npip install -r requirements.txt\n```\n"  # transformers<4.47 (4.47 requires python>=3.9)


def _check(tmp_path, code: str, pin: str = "transformers\n"):
    write_tree(tmp_path, {".git/HEAD": "", "README.md": README, "requirements.txt": pin, "train.py": code})
    return findings_in(tmp_path, ["MP302", "MP304"])


FREEZE = (
    "from transformers import {cls}\n"
    "model = {cls}.from_pretrained('facebook/wav2vec2-base')\n"
    "model.freeze_feature_extractor()\n"
)


@pytest.mark.parametrize("cls", ["Wav2Vec2ForCTC", "HubertForCTC", "WavLMForSequenceClassification", "AutoModelForCTC"])
def test_freeze_feature_extractor_warns_where_it_is_deprecated_and_fails_from_5(tmp_path, cls):
    (d,) = _check(tmp_path, FREEZE.format(cls=cls))
    assert d.code == "MP304" and (d.span.line, d.span.col) == (3, 6)
    assert "deprecated since transformers 4.16" in d.message and "object has no attribute 'freeze_feature_extractor'" in d.message
    assert ("'<model class>'" in d.message) == cls.startswith("Auto")
    (gone,) = _check(tmp_path, FREEZE.format(cls=cls), pin="transformers==5.0.0\n")
    assert gone.code == "MP302"
    assert gone.fix is not None and gone.fix.edits[0].content == "freeze_feature_encoder"  # 5.0 has the new name


def test_freeze_feature_extractor_is_fine_before_its_deprecation(tmp_path):
    assert _check(tmp_path, FREEZE.format(cls="Wav2Vec2ForCTC"), pin="transformers==4.15.0\n") == []


COLLATOR = '''from dataclasses import dataclass
from transformers import Wav2Vec2Processor

@dataclass
class DataCollatorCTCWithPadding:
    processor: Wav2Vec2Processor

    def __call__(self, features):
        with self.processor.as_target_processor():
            return self.processor.pad(features, return_tensors="pt")
'''


def test_a_dataclass_field_types_self_attribute(tmp_path):
    (d,) = _check(tmp_path, COLLATOR)
    assert d.code == "MP304" and d.span.line == 9 and "'Wav2Vec2Processor' object" in d.message
    # a method that assigns self.processor decides what it is, not the annotation
    assigned = COLLATOR.replace("    def __call__", "    def __post_init__(self):\n        self.processor = object()\n\n    def __call__")
    assert _check(tmp_path, assigned) == []


def test_as_target_processor_of_an_auto_processor(tmp_path):
    code = "from transformers import AutoProcessor\nprocessor = AutoProcessor.from_pretrained('m')\nwith processor.as_target_processor():\n    pass\n"
    (d,) = _check(tmp_path, code)
    assert d.code == "MP304" and "'<processor class>' object has no attribute 'as_target_processor'" in d.message
