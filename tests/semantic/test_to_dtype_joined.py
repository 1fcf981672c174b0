"""``.to(x)`` whose dtype is known only at the join: a config file's ``dtype:`` read through
``getattr(torch, cfg["dtype"])``, or what a function of another module returns
(``.to(get_dtype())``). The argument in the dtype's place is followed (``.to(dtype)``,
``.to(device, dtype)``); a device in that place (``cfg["device"]``, ``get_device()``) is
never a dtype."""
import pytest
from conftest import config, write_tree

from precision_lint.engine import Engine

CONFIG_SCRIPT = """
    import torch
    import yaml

    cfg = yaml.safe_load(open("config.yaml"))
    net = torch.nn.Linear(4, 4).cuda()
    net = net.to({arg})
    optimizer = torch.optim.AdamW(net.parameters())
    scaler = torch.amp.GradScaler("cuda")
    """
RETURN_SCRIPT = """
    import torch
    from precision import get_device, get_dtype

    net = torch.nn.Linear(4, 4).cuda()
    net = net.to({arg})
    optimizer = torch.optim.AdamW(net.parameters())
    scaler = torch.amp.GradScaler("cuda")
    """
PRECISION = """
    import torch

    def get_dtype():
        return torch.{dtype}

    def get_device():
        return "cuda"
    """


def _run(root, *names, fix=False):
    engine = Engine(config(), ["MP101"], jobs=1)
    paths = [str(root / n) for n in names] if names else [str(root)]
    return engine.run_paths(paths, fix=fix)


def _found(root, *names):
    return [(d.path.replace(str(root) + "/", ""), d.span.line) for d in _run(root, *names).diagnostics]


@pytest.mark.parametrize("arg", ['getattr(torch, cfg["dtype"])', 'cfg["device"], getattr(torch, cfg["dtype"])'])
def test_a_dtype_from_a_yaml_config(tmp_path, arg):
    write_tree(tmp_path, {"train.py": CONFIG_SCRIPT.format(arg=arg), "config.yaml": "device: cuda\ndtype: float16\n"})
    (d,) = _run(tmp_path).diagnostics
    assert d.span.line == 6 and "float16 is set in config.yaml (line 2)" in d.message
    write_tree(tmp_path, {"config.yaml": "device: cuda\ndtype: float32\n"})
    assert _found(tmp_path) == []


def test_a_device_from_a_yaml_config_is_no_dtype(tmp_path):
    # `.to(cfg["device"])` is followed to the file like a dtype would be: "cuda" is none
    write_tree(tmp_path, {"train.py": CONFIG_SCRIPT.format(arg='cfg["device"]'), "config.yaml": "device: cuda\ndtype: float16\n"})
    assert _found(tmp_path) == []


@pytest.mark.parametrize("arg", ["get_dtype()", "get_device(), get_dtype()"])
@pytest.mark.parametrize("names", [(), ("train.py",)])
def test_a_dtype_returned_by_a_function_of_another_module(tmp_path, arg, names):
    write_tree(tmp_path, {"train.py": RETURN_SCRIPT.format(arg=arg), "precision.py": PRECISION.format(dtype="float16")})
    assert _found(tmp_path, *names) == [("train.py", 5)]
    write_tree(tmp_path, {"precision.py": PRECISION.format(dtype="float32")})
    assert _found(tmp_path, *names) == []


def test_a_device_returned_by_a_function_of_another_module_is_no_dtype(tmp_path):
    write_tree(tmp_path, {"train.py": RETURN_SCRIPT.format(arg="get_device()"), "precision.py": PRECISION.format(dtype="float16")})
    assert _found(tmp_path) == []


def test_the_fix_keeps_other_dtypes_and_leaves_the_config_file_alone(tmp_path):
    write_tree(tmp_path, {"train.py": CONFIG_SCRIPT.format(arg='getattr(torch, cfg["dtype"])'), "config.yaml": "dtype: float16\n"})
    result = _run(tmp_path, fix=True)
    fixed = result.fixed_texts[str(tmp_path / "train.py")]
    assert 'net.to(torch.float32 if getattr(torch, cfg["dtype"]) == torch.float16 else getattr(torch, cfg["dtype"]))' in fixed
    assert (tmp_path / "config.yaml").read_text() == "dtype: float16\n"
    (tmp_path / "train.py").write_text(fixed)
    assert _found(tmp_path) == []
