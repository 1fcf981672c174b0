"""The library table is checked against the installed libraries, so it cannot rot."""
import importlib

import pytest

from precision_lint.knowledge import derives_from, library_bases, patched_keywords


def _resolve(qualname):
    module, _, name = qualname.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001 - optional heavy libraries (unsloth needs a GPU)
        return None


@pytest.mark.parametrize("library_class, bases", sorted(library_bases().items()))
def test_each_row_matches_the_installed_library(library_class, bases):
    pytest.importorskip(library_class.split(".")[0])
    cls = _resolve(library_class)
    if cls is None:
        pytest.skip(f"{library_class} is not in the installed version")
    for base in bases:
        base_cls = _resolve(base)
        if base_cls is None:
            pytest.skip(f"{base} is not in the installed version")
        assert issubclass(cls, base_cls), f"{library_class} does not derive from {base}"


def test_training_configs_and_other_configs():
    assert derives_from("trl.GRPOConfig", "transformers.TrainingArguments")
    assert derives_from("trl.trainer.gkd_config.GKDConfig", "transformers.TrainingArguments")
    assert not derives_from("trl.MergeConfig", "transformers.TrainingArguments")
    assert not derives_from("trl.ModelConfig", "transformers.TrainingArguments")


def test_patches_need_the_patching_library():
    assert patched_keywords(["unsloth", "trl"], "trl.SFTTrainer") == ("*",)  # its trainers take **kwargs
    assert patched_keywords(["trl"], "trl.SFTTrainer") == ()
    assert patched_keywords(["unsloth"], "transformers.Trainer") == ()


def test_bf16_defaults_match_the_installed_trl():
    """TRL configs listed as `bf16 = not fp16` have a None default that their __post_init__ turns
    on; TrainingArguments' own default is off; a project class is not judged."""
    import dataclasses

    from precision_lint.knowledge import _table, bf16_default_on

    pytest.importorskip("trl")
    listed = _table("libraries.toml")["bf16_defaults"]["not_fp16"]
    for name in listed:
        cls = _resolve(name)
        if cls is None:
            continue
        (field,) = [f for f in dataclasses.fields(cls) if f.name == "bf16"]
        assert field.default is None, f"{name}.bf16 defaults to {field.default!r}"
        assert bf16_default_on(name)
    assert bf16_default_on("trl.trainer.gkd_config.GKDConfig")  # a subclass of SFTConfig
    assert bf16_default_on("transformers.TrainingArguments") is False
    assert bf16_default_on("train.MyConfig") is None


def test_model_init_configs_match_the_installed_trl():
    """Every TRL config listed under [model_init] has the keyword the table names, and every
    TRL training config that has it is listed (or derives from one that is)."""
    import dataclasses

    from precision_lint.knowledge import _table, model_init_keyword

    trl = pytest.importorskip("trl")
    table = _table("libraries.toml")["model_init"]
    for name in table["configs"]:
        cls = _resolve(name)
        assert cls is not None, f"{name} is not in the installed trl"
        assert table["keyword"] in {f.name for f in dataclasses.fields(cls)}
        assert model_init_keyword(name) == "model_init_kwargs"
    for name in dir(trl):
        cls = getattr(trl, name, None)
        if name.endswith("Config") and dataclasses.is_dataclass(cls):
            if table["keyword"] in {f.name for f in dataclasses.fields(cls)}:
                assert model_init_keyword(f"trl.{name}"), f"trl.{name} takes model_init_kwargs"
    assert model_init_keyword("transformers.TrainingArguments") is None
    assert model_init_keyword("train.MyConfig") is None


# --- knowledge/torch.toml against the installed wheels ----------------------------------------
def _source_of(module_name, attr):
    import importlib
    import inspect

    return inspect.getsource(getattr(importlib.import_module(module_name), attr))


def test_bf16_facts_hold_in_the_installed_wheels():
    import inspect

    torch = pytest.importorskip("torch")
    from precision_lint.knowledge import bf16_facts

    facts = bf16_facts()
    installed = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    assert installed >= facts["including_emulation_since"] >= facts["torch_emulates_since"]
    # torch: the keyword, True by default, and the bf16-tensor fallback that makes it emulation
    assert inspect.signature(torch.cuda.is_bf16_supported).parameters["including_emulation"].default is True
    assert "_check_bf16_tensor_supported" in _source_of("torch.cuda", "is_bf16_supported")
    # torch's autocast, accelerate and transformers (>= 4.35) refuse only where torch says False
    assert facts["autocast_error"].split(": ", 1)[1] in inspect.getsource(torch.amp.autocast_mode)
    assert "torch.cuda.is_bf16_supported()" in _source_of("transformers.utils.import_utils", "is_torch_bf16_gpu_available")
    accelerate_check = _source_of("accelerate.utils.imports", "is_bf16_available")
    if "torch.cuda.is_bf16_supported()" not in accelerate_check:
        # accelerate 1.16 asks the accelerator's own module (`device_module.is_bf16_supported()`),
        # which on a CUDA machine is `torch.get_device_module("cuda")`: torch.cuda itself
        assert "device_module.is_bf16_supported()" in accelerate_check
        backend = _source_of("accelerate.utils.imports", "get_torch_accelerator_backend")
        assert '"cuda"' in backend and "torch.get_device_module(device.type)" in backend
        assert torch.get_device_module("cuda") is torch.cuda
    import accelerate.accelerator
    import transformers.training_args

    accelerator_source = inspect.getsource(accelerate.accelerator)
    if facts["accelerate_error"].split(": ", 1)[1] not in accelerator_source:
        # accelerate 1.16 words it "bf16 mixed precision requires a supported device." and
        # requires a torch that counts emulation (>= 2.6): on a CUDA GPU its refusal is never
        # reached, and the words quoted are those of the releases that raise them
        from importlib.metadata import requires

        assert "bf16 mixed precision requires a supported device." in accelerator_source
        torch_floor = [r for r in requires("accelerate") if r.startswith("torch>=")]
        assert torch_floor, "accelerate no longer requires a torch: the error may be reached again"
        floor = tuple(int(p) for p in torch_floor[0].split(">=")[1].split(".")[:2])
        assert floor >= facts["torch_emulates_since"]
    assert facts["training_error"].split(": ", 1)[1] in inspect.getsource(transformers.training_args)


def test_amp_facts_hold_in_the_installed_torch():
    import warnings

    torch = pytest.importorskip("torch")
    from precision_lint.knowledge import amp_facts

    assert amp_facts()["cuda_amp_deprecated_in"] <= tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    for name in ("autocast", "GradScaler", "custom_fwd", "custom_bwd"):
        assert hasattr(torch.amp, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.amp.GradScaler(enabled=False)
    assert any(issubclass(w.category, FutureWarning) and "deprecated" in str(w.message) for w in caught)


def test_release_dates_are_ordered_and_imply_the_torch_of_their_time():
    from precision_lint.knowledge import release_dates, torch_of_its_time

    for dist in ("torch", "transformers", "accelerate", "trl"):
        dates = release_dates(dist)
        assert dates and [d for _, d in dates] == sorted(d for _, d in dates), dist
    assert torch_of_its_time("transformers", (4, 27)) == ((2, 0), (4, 28))
    newest = release_dates("transformers")[-1][0]
    assert torch_of_its_time("transformers", newest) is None  # current: nothing caps torch


# --- [adapter_dtype]: the peft whose LoRA adapters take the base's dtype --------------------------
def test_adapter_dtype_row_parses_and_holds_in_the_installed_peft():
    """The row reads as a window [0.7, 0.12); the installed peft (past it) has the keyword that
    ended it, on by default, and makes LoRA adapters in the base's float16 dtype exactly when it
    is turned off (what 0.7 to 0.11 did unconditionally: ``LoraLayer.update_layer`` moves them
    ``.to(weight.device, dtype=weight.dtype)``)."""
    import inspect

    from precision_lint.knowledge import adapter_dtype

    row = adapter_dtype()
    assert (row.library, row.wrap, row.configs) == ("peft", "get_peft_model", ("peft.LoraConfig",))
    assert row.since == (0, 7) and row.until == (0, 12)
    peft = pytest.importorskip("peft")
    torch = pytest.importorskip("torch")
    installed = tuple(int(p) for p in peft.__version__.split(".")[:2])
    assert installed >= row.until
    assert inspect.signature(getattr(peft, row.wrap)).parameters["autocast_adapter_dtype"].default is True
    layer = inspect.getsource(peft.tuners.lora.layer.LoraLayer.update_layer)
    assert "_move_adapter_to_device_of_base_layer" in layer  # the base's float dtype, as in 0.7-0.11

    def adapters(**kwargs):
        base = torch.nn.Sequential(torch.nn.Linear(4, 4)).half()
        model = getattr(peft, row.wrap)(base, peft.LoraConfig(r=2, target_modules=["0"]), **kwargs)
        return {p.dtype for n, p in model.named_parameters() if p.requires_grad}

    assert adapters() == {torch.float32}
    assert adapters(autocast_adapter_dtype=False) == {torch.float16}


# --- [trainer_fused_default]: the Trainer's default optimizer is torch's fused AdamW ------------
def test_trainer_fused_default_holds_in_the_installed_transformers():
    """The installed transformers (past 4.54) on the installed torch (past 2.8) defaults
    ``optim`` to ``adamw_torch_fused``, and fused AdamW keeps float16 parameters finite where
    the unfused one writes inf/NaN (eps 1e-8 is 0 in float16): checked on the CPU, whose fused
    kernel computes in float32 as CUDA's does."""
    from precision_lint.knowledge import trainer_fused_default

    row = trainer_fused_default()
    assert (row.library, row.since, row.torch_since) == ("transformers", (4, 54), (2, 8))
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    installed = tuple(int(p) for p in transformers.__version__.split(".")[:2])
    installed_torch = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    assert installed >= row.since and installed_torch >= row.torch_since
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        assert transformers.TrainingArguments(output_dir=out).optim == "adamw_torch_fused"

    def stepped(fused: bool):
        torch.manual_seed(0)
        p = torch.nn.Parameter(torch.randn(64).half())
        opt = torch.optim.AdamW([p], lr=1e-3, eps=1e-8, fused=fused)
        for _ in range(3):
            p.grad = (torch.randn(64) * 1e-5).half()
            opt.step()
        return bool(torch.isfinite(p).all())

    assert stepped(fused=True) and not stepped(fused=False)


def test_autocast_ops_hold_in_the_installed_torch():
    """What ``[autocast]`` says autocast computes in float16 does so under an fp16 autocast
    (CPU autocast runs these products in float16 too), and the dtype-keeping methods return a
    float16 tensor for a float16 one."""
    import importlib

    import torch

    from precision_lint.knowledge import autocast_ops

    ops = autocast_ops()
    a, b, x3 = torch.randn(4, 4), torch.randn(4, 4), torch.randn(2, 4, 4)
    arguments = {
        "torch.matmul": (a, b), "torch.mm": (a, b), "torch.bmm": (x3, x3), "torch.einsum": ("ij,jk->ik", a, b),
        "torch.addmm": (a, a, b), "torch.baddbmm": (x3, x3, x3), "torch.addbmm": (a, x3, x3),
        "torch.nn.functional.linear": (a, b), "torch.nn.functional.conv1d": (torch.randn(1, 1, 4), torch.randn(1, 1, 3)),
        "torch.nn.functional.conv2d": (torch.randn(1, 1, 4, 4), torch.randn(1, 1, 3, 3)),
        "torch.nn.functional.conv3d": (torch.randn(1, 1, 4, 4, 4), torch.randn(1, 1, 3, 3, 3)),
    }
    assert set(arguments) == set(ops["float16_functions"])
    with torch.autocast("cpu", dtype=torch.float16):
        for qualname, args in arguments.items():
            module, name = qualname.rsplit(".", 1)
            assert getattr(importlib.import_module(module), name)(*args).dtype == torch.float16, qualname
        for method in ops["float16_methods"]:
            left = x3 if method == "bmm" else a
            assert getattr(left, method)(left).dtype == torch.float16, method
    half = torch.randn(4, 4, dtype=torch.float16)
    method_args = {"transpose": (0, 1), "permute": (1, 0), "view": (16,), "reshape": (16,), "unsqueeze": (0,),
                   "expand": (4, 4), "expand_as": (half,), "clamp": (-1, 1), "clip": (-1, 1)}
    for method in ops["dtype_keeping_methods"]:
        assert getattr(half, method)(*method_args.get(method, ())).dtype == torch.float16, method
    for qualname in ops["dtype_keeping_functions"]:
        module, name = qualname.rsplit(".", 1)
        assert getattr(importlib.import_module(module), name)(half).dtype == torch.float16, qualname
    inputs = {"Linear": (4,), "Conv1d": (1, 4), "Conv2d": (1, 4, 4), "Conv3d": (1, 4, 4, 4)}
    with torch.autocast("cpu", dtype=torch.float16):
        for qualname in ops["float16_modules"]:
            name = qualname.rsplit(".", 1)[1]
            kind = name.replace("Transpose", "")
            module = getattr(torch.nn, name)(4, 4) if kind == "Linear" else getattr(torch.nn, name)(1, 1, 3)
            shape = (2, 4) if kind == "Linear" else (1,) + inputs[kind]
            assert module(torch.randn(*shape)).dtype == torch.float16, qualname


def test_a_parsed_table_is_kept_and_read_back_while_its_text_is_the_same(tmp_path, monkeypatch):
    """The tables are kept as Python keeps bytecode (under ``sys.pycache_prefix`` here): a second
    read gives what the TOML says, a changed text is parsed again, and nothing is written where
    bytecode is not."""
    import sys

    from precision_lint import knowledge

    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = str(tmp_path / "t.toml")
    first = knowledge.parsed(path, 'a = 1\n[b]\nc = ["x"]\n')
    kept = knowledge._kept_path(path)
    assert kept.startswith(str(tmp_path / "prefix")) and __import__("os").path.isfile(kept)
    assert knowledge.parsed(path, 'a = 1\n[b]\nc = ["x"]\n') == first == {"a": 1, "b": {"c": ["x"]}}
    assert knowledge.parsed(path, "a = 2\n") == {"a": 2}  # the text changed: parsed again
    assert knowledge.parsed(path, "a = 2\n") == {"a": 2}
    with open(kept, "wb") as f:
        f.write(b"damaged")
    assert knowledge.parsed(path, "a = 2\n") == {"a": 2}
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    other = str(tmp_path / "u.toml")
    assert knowledge.parsed(other, "d = true\n") == {"d": True}
    assert not __import__("os").path.exists(knowledge._kept_path(other))


def test_every_knowledge_table_reads_as_tomllib_parses_it():
    import os
    import tomllib

    from precision_lint import knowledge

    folder = os.path.dirname(knowledge.__file__)
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".toml")):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            assert knowledge._table(name) == tomllib.loads(f.read()), name


def test_instance_attributes_hold_in_the_installed_libraries():
    """``accelerator.state`` is an AcceleratorState (the class the table says)."""
    from precision_lint.knowledge import instance_attributes

    for attribute, held in instance_attributes().items():
        owner, _, name = attribute.rpartition(".")
        pytest.importorskip(owner.split(".")[0])
        cls, held_cls = _resolve(owner), _resolve(held)
        assert cls is not None and held_cls is not None, attribute
        if owner == "accelerate.Accelerator":
            instance = cls(cpu=True)
        else:  # pragma: no cover - a row needs a way to build its owner here
            raise AssertionError(f"no way to build {owner}")
        assert isinstance(getattr(instance, name), held_cls), attribute


def test_argument_parsers_parse_into_their_dataclasses_in_order():
    """Each parser's parse methods exist and return one instance per dataclass, in order."""
    import dataclasses

    from precision_lint.knowledge import argument_parsers

    table = argument_parsers()

    @dataclasses.dataclass
    class A:
        a: int = 1

    @dataclasses.dataclass
    class B:
        b: str = "x"

    for name in sorted(table["classes"]):
        pytest.importorskip(name.split(".")[0])
        cls = _resolve(name)
        assert cls is not None, name
        for method in ("parse_args_into_dataclasses", "parse_dict", "parse_json_file", "parse_yaml_file"):
            assert hasattr(cls, method), (name, method)
        assert [type(p) for p in cls((A, B)).parse_args_into_dataclasses(args=[])] == [A, B]
        assert [type(p) for p in cls((A, B)).parse_dict({"a": 2, "b": "y"})] == [A, B]
        if hasattr(cls, "parse_args_and_config"):
            assert [type(p) for p in cls((A, B)).parse_args_and_config(args=[])] == [A, B]
    assert set(table["methods"]) <= {m for c in table["classes"] for m in dir(_resolve(c))}


# --- [requires.toml]: what each release line requires of the others ------------------------------
def _tool(name: str):
    """``tools/<name>.py``, a script that writes a table from the wheels (read here without the network)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generator():
    """tools/requires_table.py, the script that writes the table."""
    return _tool("requires_table")


@pytest.mark.parametrize("dist", ["transformers", "trl", "peft", "accelerate", "torch"])
def test_requires_rows_hold_for_the_installed_wheels(dist):
    """The row of the installed release's minor lists that release, and admits what its own
    installed metadata requires (``Requires-Dist``, and ``Requires-Python`` as a ``python`` line,
    read as the generator reads them); where the row was read from that release alone, it says
    exactly that."""
    from importlib.metadata import PackageNotFoundError, metadata, requires, version

    from precision_lint.knowledge import requirement_releases, requirement_rows
    from precision_lint.workspace.versions import parse_spec, read_version

    pytest.importorskip("packaging")
    try:
        installed = version(dist).split("+", 1)[0]  # torch's `2.13.0+cpu`: the release it builds
    except PackageNotFoundError:
        pytest.skip(f"{dist} is not installed")
    minor = read_version(installed)[:2]
    rows = dict(requirement_rows(dist))
    assert minor in rows, f"requires.toml has no row for {dist} {installed}: run tools/requires_table.py"
    assert installed in requirement_releases(dist)[minor]
    generator = _generator()
    own = {}
    lines = list(requires(dist) or [])
    if metadata(dist).get("Requires-Python"):
        lines.append(f"python{metadata(dist)['Requires-Python']}")
    for dep, (low, high, inclusive) in generator.bounds(lines, generator.dependencies_of(dist)).items():
        text = generator.spec_text(low, high, inclusive)
        if text:
            own[dep] = parse_spec(dep, text)
    row = {dep: parse_spec(dep, spec) for dep, spec in rows[minor].items()}
    for dep, needs in row.items():
        assert dep in own, f"{dist} {installed} requires no {dep}, but its row says {rows[minor][dep]}"
        mine = own[dep]
        assert mine.low is None or (needs.low is not None and needs.low <= mine.low), (dep, needs, mine)
        assert needs.high is None or (mine.high is not None and mine.high <= needs.high), (dep, needs, mine)
    if requirement_releases(dist)[minor] == (installed,):
        assert set(row) == set(own) and all((row[d].low, row[d].high) == (own[d].low, own[d].high) for d in row)


def test_the_generator_reads_the_requirements_that_hold_for_a_torch_install():
    generator = _generator()
    found = generator.bounds([
        "tokenizers (!=0.11.3,<0.14,>=0.11.1)",
        "torch (!=1.12.0,>=1.9) ; extra == 'torch'",
        "torch (>=2.5) ; extra == 'dev'",  # another extra's: not read
        "accelerate",  # no version: no bound
        "trl~=0.7.2 ; python_version >= '3.8'",
        "peft==0.4.0",
    ])
    assert found["tokenizers"] == (generator.Version("0.11.1"), generator.Version("0.14"), False)
    assert found["torch"] == (generator.Version("1.9"), None, False)
    assert found["accelerate"] == (None, None, False)
    assert found["trl"] == (generator.Version("0.7.2"), generator.Version("0.8"), False)
    assert found["peft"] == (generator.Version("0.4.0"), generator.Version("0.4.0"), True)


def test_the_generator_joins_a_wheels_requirements_as_pip_does():
    """Unmarked requirements of one library all hold (their bounds intersect); one under a
    Python marker holds on top of them in that environment only, so it narrows nothing
    overall (TRL 0.24's ``transformers!=4.57.0; python_version == "3.9"`` beside
    ``transformers>=4.56.1``: the table lost TRL 0.24's floor, and with it a Soup finding's
    evidence); marked ones alone are alternatives (their hull)."""
    generator = _generator()
    v = generator.Version
    found = generator.bounds([
        "transformers>=4.56.1",
        'transformers!=4.57.0; python_version == "3.9"',
        "accelerate>=0.34",
        "accelerate<2 ; extra == 'torch'",  # a counted extra: unconditional for a [torch] install
        "torch>=1.13 ; python_version < '3.12'",
        "torch>=2.2 ; python_version >= '3.12'",
    ])
    assert found["transformers"] == (v("4.56.1"), None, False)
    assert found["accelerate"] == (v("0.34"), v("2"), False)
    assert found["torch"] == (v("1.13"), None, False)


def test_requires_rows_are_in_order_and_read():
    from precision_lint.knowledge import requirement_rows
    from precision_lint.workspace.versions import parse_spec

    for dist in ("transformers", "trl", "peft", "accelerate", "torch"):
        rows = requirement_rows(dist)
        assert rows and [m for m, _ in rows] == sorted(m for m, _ in rows), dist
        for _, needs in rows:
            for dep, spec in needs.items():
                assert not parse_spec(dep, spec).is_empty, (dist, dep, spec)


# --- [peft_model_kept]: the TRL whose trainers keep a PeftModel as they are given it -------------
def test_peft_model_kept_row_parses_and_holds_in_the_installed_trl():
    """The row reads as TRL below 0.20; the installed TRL (past it) makes no such exception: its
    SFTTrainer refuses a PeftModel given with ``peft_config=`` instead of keeping it."""
    import inspect

    from precision_lint.knowledge import peft_model_kept

    row = peft_model_kept()
    assert (row.library, row.until) == ("trl", (0, 20))
    trl = pytest.importorskip("trl")
    assert tuple(int(p) for p in trl.__version__.split(".")[:2]) >= row.until
    source = inspect.getsource(trl.SFTTrainer)
    assert "You passed a `PeftModel` instance together with a `peft_config`" in source
    assert "isinstance(model, PeftModel):\n            return model" not in source


# --- [attention_classes.toml]: the per-backend attention tables and their removal -------------
def _attention_generator():
    """tools/attention_classes_table.py, the script that writes the table."""
    return _tool("attention_classes_table")


def test_every_attention_table_is_gone_from_the_installed_transformers():
    """Each row names a modeling module and a table that the installed release (newer than
    every removal listed) no longer defines, and the rows become import migrations and
    ``removed_module`` rows alike."""
    import importlib

    from precision_lint.knowledge import _attention_classes, migrations, parse_version, removed_module

    transformers = pytest.importorskip("transformers")
    rows = _attention_classes()
    assert len(rows) > 50 and {"LLAMA_ATTENTION_CLASSES", "WHISPER_ATTENTION_CLASSES"} <= {r["name"] for r in rows}
    installed = parse_version(transformers.__version__.split("+", 1)[0])
    imports = {(m.owner, m.name) for m in migrations() if m.kind == "import"}
    for row in rows:
        assert parse_version(row["removed_in"]) <= installed
        try:
            module = importlib.import_module(row["module"])
        except ImportError:
            module = None  # the model itself is gone
        assert module is None or not hasattr(module, row["name"]), row
        assert (row["module"], row["name"]) in imports
        assert removed_module(f"{row['module']}.{row['name']}").removed_in == parse_version(row["removed_in"])


def test_the_attention_table_generator_reads_a_wheels_modeling_files(tmp_path):
    import zipfile

    path = tmp_path / "transformers-4.99.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("transformers/models/toy/modeling_toy.py", "TOY_ATTENTION_CLASSES = {\n    'eager': 1,\n}\nx = 1\n")
        z.writestr("transformers/models/toy/configuration_toy.py", "OTHER_ATTENTION_CLASSES = {}\n")
        z.writestr("transformers/models/toy/modeling_tf_toy.py", "    INDENTED_ATTENTION_CLASSES = {}\n")
    assert _attention_generator().tables(str(path)) == {"TOY_ATTENTION_CLASSES": "transformers.models.toy.modeling_toy"}


def test_package_tests_ask_for_their_package_in_the_installed_libraries():
    """Each availability test of ``[package_tests]`` the installed library still has reads the
    package it is listed for; one it no longer has is a removal the table of removed imports
    records (the 4.38 alias ``is_flash_attn_available``)."""
    import importlib
    import inspect

    from precision_lint.knowledge import package_tests, removed_modules

    pytest.importorskip("transformers")
    removed = set(removed_modules())
    assert package_tests(), "libraries.toml has no [package_tests]"
    for qualname, package in package_tests().items():
        module_name, _, name = qualname.rpartition(".")
        function = getattr(importlib.import_module(module_name), name, None)
        if function is None:
            assert qualname in removed, f"{qualname} is in neither the installed library nor [[removed_module]]"
            continue
        assert f'"{package}"' in inspect.getsource(function), f"{qualname} does not ask for {package}"

