"""Domain extractors. Each module defines ``SECTION`` (a name) and
``extract(index, evaluator)`` returning plain, picklable facts, and may define ``EMPTY`` (its
section for a file that is not analysed: see ``facts/gate.py``)."""
