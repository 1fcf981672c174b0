"""Fenced code blocks as CommonMark reads them (workspace/markdown.py): a README's prose states
its GPUs and its code blocks its install commands; a fence misread turns the rest of the file
from one into the other."""
from __future__ import annotations

import pytest

from precision_lint.workspace.hardware import markdown_prose, stated_in_text
from precision_lint.workspace.markdown import closes, opening_fence
from precision_lint.workspace.versions import readme_requirements


@pytest.mark.parametrize(
    "line, fence",
    [("```", "```"), ("```python", "```"), ("  ~~~~ sh", "~~~~"), ("```--lr 1e-4 --bf16```", None), ("`` x ``", None), ("text ```", None)],
)
def test_a_fence_opens_where_commonmark_opens_one(line, fence):
    assert opening_fence(line) == fence


@pytest.mark.parametrize(
    "line, fence, closed",
    [("```", "```", True), ("````  ", "```", True), ("``", "```", False), ("```python", "```", False), ("~~~", "```", False), ("```", "````", False)],
)
def test_a_fence_closes_with_its_own_characters_and_nothing_after(line, fence, closed):
    assert closes(line, fence) is closed


README = """# A model

Train it with the options below:
```--train_type "states" --lr_init 1```

```python
print("a block")
```

For the paper I trained it on 8x A100 40G.
"""


def test_an_inline_triple_backtick_span_does_not_hide_the_prose_after_it():
    prose = markdown_prose(README)
    assert "trained it on 8x A100" in prose and 'print("a block")' not in prose
    assert stated_in_text(prose) == [80]


def test_an_install_command_after_an_inline_span_is_still_read_from_its_block():
    text = "Use ```--fp16``` to halve memory.\n\n```bash\npip install transformers==4.31.0\n```\n"
    (pin,) = readme_requirements(text, "README.md")
    assert (pin.dist, pin.low) == ("transformers", (4, 31, 0))


def test_a_fence_line_with_an_info_string_inside_a_block_is_a_line_of_it():
    text = "```\nsteps:\n```python\nstill code, on an A100\n```\n\nRuns on a T4.\n"
    prose = markdown_prose(text)
    assert "still code" not in prose and "Runs on a T4." in prose


def test_a_readme_written_as_unfenced_commands_runs_them():
    """Review 31a: a README that lists ``python main_qwen.py`` then ``python merge_qwen.py`` with
    no fences runs them as a fenced block would; prose that mentions a command does not."""
    from precision_lint.workspace.markdown import shell_text

    text = (
        "# Steps\n"
        "1. python train.py      (overnight)\n"
        "$ accelerate launch --num_processes 2 main.py --x 1\n"
        "torchrun --nproc_per_node=4 dist.py\n"
        "python is what the scripts are written in.\n"
        "Run python train.py to train.\n"
        "```bash\npython fenced.py\n```\n"
    )
    lines = shell_text(text).splitlines()
    assert [line for line in lines if line] == [
        "python train.py      (overnight)", "accelerate launch --num_processes 2 main.py --x 1",
        "torchrun --nproc_per_node=4 dist.py", "python fenced.py",
    ]
    assert lines[1] == "python train.py      (overnight)"  # each command keeps its line
