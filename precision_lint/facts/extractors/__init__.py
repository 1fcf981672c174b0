"""Domain extractors. Each module defines ``SECTION`` (a name) and
``extract(index, evaluator) -> tuple`` returning plain, picklable facts."""
