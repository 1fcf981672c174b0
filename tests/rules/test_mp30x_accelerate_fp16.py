"""MP302 / MP304: ``Accelerator(fp16=True)``, the spelling before ``mixed_precision=``: accelerate
0.14 and 0.15 warn, 0.16 has no such parameter (``TypeError: Accelerator.__init__() got an
unexpected keyword argument 'fp16'``); the Hugging Face course's chapter 7 notebooks still call
it (review 38's M2)."""
import pytest
from conftest import findings_in, write_tree

CODE = "from accelerate import Accelerator\naccelerator = Accelerator({})\n"


@pytest.mark.parametrize(
    "pin, argument, expected",
    [
        ("accelerate\n", "fp16=True", "MP302"),
        ("accelerate\n", "fp16=False", "MP302"),  # the parameter is gone: any value raises
        ("accelerate==0.15.0\n", "fp16=True", "MP304"),
        ("accelerate==0.15.0\n", "fp16=False", None),  # warns only `if fp16:`
        ("accelerate==0.13.0\n", "fp16=True", None),  # a DeprecationWarning, hidden outside __main__
        ("accelerate\n", 'mixed_precision="fp16"', None),
    ],
)
def test_accelerator_fp16(tmp_path, pin, argument, expected):
    write_tree(tmp_path, {".git/HEAD": "", "requirements.txt": pin, "train.py": CODE.format(argument)})
    found = findings_in(tmp_path, ["MP302", "MP304"])
    assert [d.code for d in found] == ([expected] if expected else [])
    if expected == "MP302":
        assert "TypeError: Accelerator.__init__() got an unexpected keyword argument 'fp16'" in found[0].message
        assert 'mixed_precision="fp16"' in found[0].message and found[0].fix is None
