"""The `>>>` examples in the package's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest
from source_tree import PACKAGE, package_modules

# Only modules that show an example are imported: importing is all it takes to run one.
WITH_EXAMPLES = [
    module.dotted
    for module in package_modules()
    if ">>>" in (PACKAGE / module.name).read_text(encoding="utf-8")
]


def test_the_package_shows_examples() -> None:
    assert len(WITH_EXAMPLES) >= 5


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_of(name: str) -> None:
    module = importlib.import_module(name)
    examples = doctest.DocTestFinder().find(module)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for example in examples:
        runner.run(example)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name} shows an example the finder does not see"
    assert result.failed == 0
