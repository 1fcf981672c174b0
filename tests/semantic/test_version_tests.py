"""A version test is read by what it compares (a library's installed version against a version
written in the code), never by the word "version" in its text."""
import pytest

from precision_lint.semantic.index import build_index
from precision_lint.semantic.version_tests import VersionTests

HEAD = """\
import torch
import transformers
from importlib import metadata
from packaging import version
from packaging.version import Version
from transformers.utils import is_torch_greater_or_equal, is_transformers_version

TV = version.parse(transformers.__version__)


def at_least(name, wanted):
    try:
        got = metadata.version(name)
        if Version(got) < Version(wanted):
            return False
    except metadata.PackageNotFoundError:
        return False
    return True


def torch_newer(wanted):
    return Version(torch.__version__) >= Version(wanted)


def installed_at_least(dist, floor):
    import pkg_resources
    try:
        found = pkg_resources.get_distribution(dist).version
        if pkg_resources.parse_version(found) < pkg_resources.parse_version(floor):
            return False
    except Exception:
        return False
    return True


def required_at_least(dist, floor):
    import pkg_resources
    return pkg_resources.parse_version(pkg_resources.require(dist)[0].version) >= pkg_resources.parse_version(floor)
"""


def _test(expr):
    ix = build_index(HEAD + f"\nprobe = {expr}\n", "m", False)
    (binding,) = ix.root.assignments["probe"]
    tests = VersionTests(ix)
    found, other = tests.test(binding.value, True), tests.test(binding.value, False)
    if found is None:
        assert other is None
        return None
    rng = lambda t: (t.allowed.low, t.allowed.high, t.allowed.high_inclusive) if t.allowed else None
    return found.dist, rng(found), rng(other)


@pytest.mark.parametrize(
    "expr, expected",
    [
        ('version.parse(transformers.__version__) < version.parse("4.35")', ("transformers", (None, (4, 35), False), ((4, 35), None, False))),
        ('TV >= version.parse("4.46")', ("transformers", ((4, 46), None, False), (None, (4, 46), False))),
        ('not at_least("transformers", "4.35.0")', ("transformers", (None, (4, 35, 0), False), ((4, 35, 0), None, False))),
        ('is_torch_greater_or_equal("2.3")', ("torch", ((2, 3), None, False), (None, (2, 3), False))),
        ('is_transformers_version("<", "4.46")', ("transformers", (None, (4, 46), False), ((4, 46), None, False))),
        ('torch_newer("2.1")', ("torch", ((2, 1), None, False), (None, (2, 1), False))),
        ('installed_at_least("transformers", "4.46.0")', ("transformers", ((4, 46, 0), None, False), (None, (4, 46, 0), False))),
        ('required_at_least("trl", "0.9")', ("trl", ((0, 9), None, False), (None, (0, 9), False))),
        ('metadata.version("trl") <= "0.9.6"', ("trl", (None, (0, 9, 6), True), ((0, 9, 6, 1), None, False))),
        ('"4.0" <= transformers.__version__ and torch.cuda.is_available()', ("transformers", ((4, 0), None, False), None)),
    ],
)
def test_version_tests_and_what_each_branch_admits(expr, expected):
    assert _test(expr) == expected


@pytest.mark.parametrize(
    "expr",
    [
        'version == "1.0"',  # a module named version is not a library's version
        'args.version >= "2"',
        'config.version < 3',
        'torch.cuda.get_device_capability() >= (8, 0)',
        'use_version_two and torch.cuda.is_available()',
        'transformers_version_ok',
    ],
)
def test_what_only_mentions_a_version_is_no_version_test(expr):
    assert _test(expr) is None


def test_a_variable_named_version_holding_a_string_is_no_version_test():
    src = 'version = "1.0"\nfast_version = "2"\nprobe = version >= fast_version\n'
    ix = build_index(src, "m", False)
    (binding,) = ix.root.assignments["probe"]
    assert VersionTests(ix).test(binding.value, True) is None
