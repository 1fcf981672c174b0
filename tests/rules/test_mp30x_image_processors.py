"""MP302 / MP304 on the image-text processors' ``feature_extractor`` (DonutProcessor, TrOCR, CLIP,
LayoutLMv3...): an alias of ``image_processor`` that warns from transformers 4.26 and is gone in
5.0 (``AttributeError: 'DonutProcessor' object has no attribute 'feature_extractor'``); a speech
processor's ``feature_extractor`` is its own and stays (review 40b's M1: a Donut OCR fine-tune)."""
import pytest
from conftest import findings_in, write_tree

CODE = (
    "from transformers import {cls}\n"
    "processor = {cls}.from_pretrained('some/model')\n"
    "processor.feature_extractor.do_align_long_axis = False\n"
    "height = processor.feature_extractor.size['height']\n"
)


def _check(tmp_path, code: str, pin: str):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin, "train.py": code})
    return findings_in(tmp_path, ["MP302", "MP304"])


@pytest.mark.parametrize("cls", ["DonutProcessor", "TrOCRProcessor", "LayoutLMv3Processor", "CLIPProcessor"])
def test_the_alias_fails_from_5_and_is_renamed(tmp_path, cls):
    found = _check(tmp_path, CODE.format(cls=cls), "transformers\n")
    assert [(d.code, d.span.line) for d in found] == [("MP302", 3), ("MP302", 4)]
    assert f"'{cls}' object has no attribute 'feature_extractor'" in found[0].message
    assert all(d.fix is not None and d.fix.edits[0].content == "image_processor" for d in found)


def test_the_alias_warns_where_it_is_deprecated(tmp_path):
    found = _check(tmp_path, CODE.format(cls="DonutProcessor"), "transformers==4.30.2\n")
    assert [d.code for d in found] == ["MP304", "MP304"] and "deprecated since transformers 4.26" in found[0].message


@pytest.mark.parametrize("cls, pin", [
    ("DonutProcessor", "transformers==4.25.1\n"),  # the plain attribute: no image processors yet
    ("Wav2Vec2Processor", "transformers\n"),  # a speech processor's own feature extractor
    ("WhisperProcessor", "transformers\n"),
    ("AutoProcessor", "transformers\n"),  # a speech model's processor keeps it
])
def test_a_processor_whose_feature_extractor_is_its_own_is_not_reported(tmp_path, cls, pin):
    assert _check(tmp_path, CODE.format(cls=cls), pin) == []
