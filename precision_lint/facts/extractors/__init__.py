"""Domain extractors. Each module defines ``SECTION`` (a name) and
``extract(index, evaluator)`` returning plain, picklable facts. A module may also define
``EVIDENCE`` (a compiled regular expression) and ``EMPTY`` (its section when the text does
not match): a module whose text cannot hold its facts is then skipped without analysis."""
