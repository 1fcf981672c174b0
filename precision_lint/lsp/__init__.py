"""``precision-lint server``: the language server (needs the ``lsp`` extra: pygls).

Nothing outside this package imports it: the linter stays light, and pygls is imported only
when the ``server`` command starts.
"""
