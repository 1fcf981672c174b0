"""Package list for setuptools; everything else is in pyproject.toml.

The rule pages live in the top-level ``rules/`` folder (one page per rule code,
next to the code a reader looks for) and are shipped inside the package as
``precision_lint/rule_pages`` so that ``precision-lint rule CODE`` works after
``pip install``. ``[tool.setuptools.packages.find]`` cannot add a package whose
folder lies outside the package tree, so the list is built here.
"""
from setuptools import find_namespace_packages, setup

# Namespace discovery, as pyproject's [tool.setuptools.packages.find] does: some folders
# (precision_lint/facts) have no __init__.py.
PACKAGES = find_namespace_packages(include=["precision_lint", "precision_lint.*"], exclude=["*.__pycache__"])

setup(
    packages=PACKAGES + ["precision_lint.rule_pages"],
    package_dir={"precision_lint.rule_pages": "rules"},
    package_data={"precision_lint.rule_pages": ["*.md"], "precision_lint.knowledge": ["*.toml"]},
)
