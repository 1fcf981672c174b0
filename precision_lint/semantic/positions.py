"""Where a CST node is in the text, from CPython's own parser instead of LibCST's positions pass.

LibCST finds positions by generating the whole module's code again while it records where
each node starts and ends: on real library code that pass costs more than the parse itself
(about a quarter of a second for a 2,000-line module). CPython's ``ast`` parser gives the
same positions for expressions, in C, for a few milliseconds.

The two trees are paired family by family: the calls of a module, taken in source order, are
the same calls in both trees, and so are its attributes, subscripts, names in expression
position, constants and the other expression kinds listed in ``_FAMILIES``. Every pair is
checked (a name's identifier, a literal's exact text, an operator's kind), and a family whose
counts or checks disagree anywhere in the module is not used for that module: its nodes, and
every node of a kind this module does not pair (a ``Tuple``, a chained ``and``), are placed by
LibCST's own pass, run once for the module on first need. The result is always LibCST's answer:
``tests/semantic/test_positions.py`` compares the two on real modules and generated programs.

Differences handled here: LibCST's range of a parenthesized expression leaves its parentheses
out, as CPython's does; an argument (``Arg``) has no node of its own in ``ast``, so it is placed
from its value and its star or keyword; columns are characters, where CPython counts UTF-8 bytes.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Span

_SKIPPED_FIELDS = frozenset(
    {
        "leading_lines", "lines_after_decorators", "header", "footer", "lpar", "rpar", "comma",
        "semicolon", "trailing_whitespace", "equal", "colon", "operator", "dot", "star_tok",
        "lbracket", "rbracket", "lbrace", "rbrace", "first_colon", "second_colon", "asynchronous",
        "posonly_ind", "trailing_comma", "indent",
    }
)

# Children in source order where LibCST's field order is not (and names that are not expressions
# in ``ast``: a def's or a class's name, a keyword, an attribute's name, ``except E as name``).
_SOURCE_ORDER: Dict[type, Tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "body"),
    cst.ExceptStarHandler: ("type", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.Param: ("annotation", "default"),
    cst.Arg: ("value",),
    cst.Attribute: ("value",),
    cst.MatchAs: ("pattern",),
    cst.MatchKeywordElement: ("pattern",),
    cst.MatchMapping: ("elements",),
    # not expressions in ``ast`` (names as strings), or not paired at all; an import's aliases
    # are ``alias`` nodes (placed, with the name each holds)
    cst.Import: ("names",),
    cst.ImportFrom: ("names",),
    cst.ImportAlias: (),
    cst.Global: (),
    cst.MatchStar: (),
    cst.MatchSingleton: (),
    cst.Nonlocal: (),
    cst.FormattedString: (),
}

_DEF_HEAD = re.compile(r"(?:async\s+)?(?:def|class)\s+")
_CONSTANT_NAMES = frozenset({"True", "False", "None"})


def _fields(cls: type) -> Tuple[str, ...]:
    names = _SOURCE_ORDER.get(cls)
    if names is None:
        names = _SOURCE_ORDER[cls] = tuple(
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
    return names


def _cst_family(node: cst.CSTNode) -> Optional[str]:
    cls = type(node)
    if cls is cst.Name:
        return "Constant" if node.value in _CONSTANT_NAMES else "Name"
    if cls in (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis):
        return "Constant"
    return _CST_FAMILIES.get(cls)


# LibCST class → the ``ast`` class of the same node (one to one, in source order).
_CST_FAMILIES: Dict[type, str] = {
    cst.Call: "Call",
    cst.Attribute: "Attribute",
    cst.Subscript: "Subscript",
    cst.BinaryOperation: "BinOp",
    cst.UnaryOperation: "UnaryOp",
    cst.Comparison: "Compare",
    cst.IfExp: "IfExp",
    cst.Dict: "Dict",
    cst.List: "List",
    cst.Set: "Set",
    cst.ListComp: "ListComp",
    cst.SetComp: "SetComp",
    cst.DictComp: "DictComp",
    cst.Await: "Await",
    cst.Lambda: "Lambda",
    cst.NamedExpr: "NamedExpr",
    cst.Tuple: "Tuple",
    cst.FormattedString: "JoinedStr",
    cst.ImportAlias: "alias",
    # import statements: where an added import or the probe goes (``facts/extract.py``'s layout)
    cst.Import: "Import",
    cst.ImportFrom: "ImportFrom",
}
_AST_FAMILIES = frozenset(_CST_FAMILIES.values()) | {"Name", "Constant", "ClassDef", "FunctionDef", "arg"}
# the name an import alias holds: ``a.b`` of ``import a.b as c`` (an Attribute), ``x`` of ``from m import x``


# Nodes whose inner nodes are placed by their text within the holder's range (see _found_in).
_TEXT_HOLDERS = (cst.FormattedString, cst.ConcatenatedString, cst.ImportAlias)

# Nodes paired only to place the names they hold (a def's name, a parameter's name): their own
# ranges differ between the trees (LibCST's def ends after trailing comments, its parameter
# includes the default).
_HOLDERS: Dict[type, str] = {cst.FunctionDef: "FunctionDef", cst.ClassDef: "ClassDef", cst.Param: "arg"}


def _collect_cst(module: cst.Module) -> Tuple[Dict[str, List[cst.CSTNode]], Dict[int, cst.CSTNode]]:
    """The module's nodes of each family in source order, and the node that holds each
    argument (its call) and each name that is no expression in ``ast`` (an attribute's name,
    a keyword, a def's, a class's or a parameter's name, an import's name); every node inside
    an f-string is held by that f-string (CPython 3.11 places an f-string's parts unreliably)."""
    found: Dict[str, List[cst.CSTNode]] = {}
    holder: Dict[int, cst.CSTNode] = {}
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        cls = type(node)
        if cls is cst.FormattedString:
            found.setdefault("JoinedStr", []).append(node)
            _hold_inside(node, node, holder)
            continue
        if cls is cst.ImportAlias:
            found.setdefault("alias", []).append(node)
            for part in _dotted_parts(node.name):
                holder[id(part)] = node
            continue
        if cls is cst.ConcatenatedString:
            # one constant (or one f-string) in ``ast``: paired whole, never its parts
            parts = list(_string_parts(node))
            formatted = any(isinstance(part, cst.FormattedString) for part in parts)
            found.setdefault("JoinedStr" if formatted else "Constant", []).append(node)
            for part in parts:
                if isinstance(part, cst.FormattedString):
                    holder[id(part)] = node
                    _hold_inside(node, part, holder)
            continue
        if cls is cst.Del and type(node.target) is cst.Tuple and not node.target.lpar:
            # `del a, b`: a list of targets in ``ast``, no tuple
            stack.extend(reversed([e.value for e in node.target.elements]))
            continue
        family = _cst_family(node)
        if family is not None:
            found.setdefault(family, []).append(node)
        if cls is cst.Call:
            for arg in node.args:
                holder[id(arg)] = node
                if arg.keyword is not None:
                    holder[id(arg.keyword)] = arg
        elif cls is cst.Attribute:
            holder[id(node.attr)] = node
        elif cls in _HOLDERS:
            found.setdefault(_HOLDERS[cls], []).append(node)
            holder[id(node.name)] = node
        children = []
        for attr in _fields(cls):
            value = getattr(node, attr)
            if isinstance(value, cst.CSTNode):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children.extend(c for c in value if isinstance(c, cst.CSTNode))
        stack.extend(reversed(children))
    return found, holder


def _hold_inside(fstring: cst.CSTNode, node: cst.CSTNode, holder: Dict[int, cst.CSTNode]) -> None:
    stack = [node]
    while stack:
        for child in stack.pop().children:
            holder[id(child)] = fstring
            stack.append(child)


def _held_in_order(outer: cst.CSTNode) -> List[cst.CSTNode]:
    """Every node inside ``outer``, in source order."""
    out: List[cst.CSTNode] = []
    stack = list(reversed(outer.children))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _dotted_parts(node: cst.BaseExpression) -> List[cst.CSTNode]:
    """``a.b.c`` and every Name and Attribute inside it."""
    out: List[cst.CSTNode] = []
    while isinstance(node, cst.Attribute):
        out += [node, node.attr]
        node = node.value
    return out + [node]


def _string_parts(node: cst.ConcatenatedString):
    for side in (node.left, node.right):
        if isinstance(side, cst.ConcatenatedString):
            yield from _string_parts(side)
        else:
            yield side


def _collect_ast(tree: ast.AST) -> Dict[str, List[ast.AST]]:
    found: Dict[str, List[ast.AST]] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        name = type(node).__name__
        if name == "AsyncFunctionDef":
            name = "FunctionDef"
        if name == "JoinedStr":
            found.setdefault(name, []).append(node)
            continue  # an f-string's parts are placed by LibCST's pass
        if name in _AST_FAMILIES:
            found.setdefault(name, []).append(node)
        if name == "Subscript" and type(node.slice) is ast.Tuple and node.slice.elts:
            # ``x[a, b]``: no tuple in LibCST's tree (a list of subscript elements) unless written ``x[(a, b)]``
            first = node.slice.elts[0]
            if (first.lineno, first.col_offset) == (node.slice.lineno, node.slice.col_offset):
                stack.append(node.value)
                stack.extend(node.slice.elts)
                continue
        stack.extend(ast.iter_child_nodes(node))
    for nodes in found.values():
        # source order; of two nodes that start together the outer one first
        nodes.sort(key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))
    return found


class Positions:
    """``span(node)`` for the nodes of one parsed module."""

    def __init__(self, source: str, module: cst.Module, line_starts: List[int], tree: Optional[ast.AST] = None) -> None:
        self._source = source
        self._tree = tree  # CPython's tree of ``source`` when the caller parsed it already
        self._module = module
        self._line_starts = line_starts
        # lines as the tokenizer counts them (``index.line_starts``: at "\n", "\r\n" and a lone
        # "\r"; str.splitlines also splits at form feeds, "\x1c"-"\x1e", "\x85", "\u2028"...,
        # which a comment may hold)
        ends = [*line_starts[1:], len(source)]
        self._lines = [source[start:end] for start, end in zip(line_starts, ends)]
        self._spans: Dict[int, Span] = {}
        self._holder: Dict[int, cst.CSTNode] = {}  # id(argument or name) → its call, attribute, def...
        self._paired: Dict[int, Tuple[str, ast.AST]] = {}  # id(CST node) → (family, ast node)
        self._families: Dict[str, Tuple[list, list]] = {}
        self._checked: Dict[str, bool] = {}
        self._libcst = None
        self._same_text_nodes: Dict[tuple, List[cst.CSTNode]] = {}
        self._ready = False
        self.unpaired: List[tuple] = []  # (family, why): placed by LibCST's pass in this module

    # --- public ------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> Span:
        if not self._ready:
            self._pair()
        key = id(node)
        found = self._spans.get(key)
        if found is None:
            found = self._placed(node)
            if found is None:
                found = self._from_libcst(node)
            self._spans[key] = found
        return found

    def statement_span(self, line: cst.SimpleStatementLine) -> Span:
        """The range of a line holding one expression statement or assignment (``x = f(a)``,
        ``clip(...)``, ``n += 1``), from its first target and its value: LibCST's range of the
        statement without running its positions pass, which a statement (never paired) would
        otherwise start for the whole module. A statement of another kind, or one whose first
        or last expression is parenthesized (its parentheses may reach other lines), is placed
        by :meth:`span`."""
        body = line.body
        small = body[0] if len(body) == 1 else None
        first = last = None
        if isinstance(small, cst.Expr):
            first = last = small.value
        elif isinstance(small, cst.Assign):
            first, last = small.targets[0].target, small.value
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            first, last = small.target, small.value
        if first is None or last is None or first.lpar or last.rpar:
            return self.span(line)
        head, tail = self.span(first), self.span(last)
        return self._offsets_span(head.start, tail.end)

    def _placed(self, node: cst.CSTNode) -> Optional[Span]:
        """The span from the paired ``ast`` node, or None (not paired in this module)."""
        cls = type(node)
        held = self._holder.get(id(node))
        if held is not None and type(held) in _TEXT_HOLDERS:
            return self._found_in(node, held)
        if cls is cst.Arg:
            return self._arg_span(node)
        if cls is cst.Name and id(node) in self._holder:
            return self._name_span(node, self._holder[id(node)])
        if cls in _HOLDERS:
            return None
        if cls is cst.BooleanOperation:
            # its own parentheses are left out of its range, its operands' are not
            return self._between(node.left, node.right)
        paired = self._partner(node)
        if paired is None:
            return None
        span = self._ast_span(paired)
        if cls is cst.Tuple and node.lpar:
            # CPython's tuple includes its parentheses, LibCST's leaves them out
            return self._shrunk(span, node)
        return span

    # --- pairing -----------------------------------------------------------------
    def _pair(self) -> None:
        self._ready = True
        tree, self._tree = self._tree, None
        if tree is None:
            try:
                tree = ast.parse(self._source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return  # LibCST accepts what CPython 3.11 does not (3.12 syntax): its pass places all
        cst_nodes, self._holder = _collect_cst(self._module)
        ast_nodes = _collect_ast(tree)
        for family, nodes in cst_nodes.items():
            others = ast_nodes.get(family, [])
            if len(others) != len(nodes):
                self.unpaired.append((family, len(nodes), len(others)))
                continue
            self._families[family] = (nodes, others)
            for c, a in zip(nodes, others):
                self._paired[id(c)] = (family, a)

    def _partner(self, node: cst.CSTNode) -> Optional[ast.AST]:
        """The ``ast`` node paired with ``node``, once every pair of its family is checked
        (checked on first need: most families of a module are never asked for)."""
        found = self._paired.get(id(node))
        if found is None:
            return None
        family, partner = found
        ok = self._checked.get(family)
        if ok is None:
            check = _CHECKS.get(family, _same_text)
            ok = self._checked[family] = all(check(self, c, a) for c, a in zip(*self._families[family]))
            if not ok:
                self.unpaired.append((family, "check"))
        return partner if ok else None

    def _ast_span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno
        col = self._column(line, node.col_offset)
        end_col = self._column(end_line, node.end_col_offset)
        start = self._line_starts[line - 1] + col
        end = self._line_starts[end_line - 1] + end_col
        return Span(line, col, end_line, end_col, start, end)

    def _shrunk(self, span: Span, node: cst.Tuple) -> Optional[Span]:
        if len(node.lpar) != 1 or len(node.rpar) != 1:
            return None
        if self._module.code_for_node(node.lpar[0]) != "(" or self._module.code_for_node(node.rpar[0]) != ")":
            return None  # LibCST's range of a tuple laid out over lines: left to its own pass
        return self._offsets_span(span.start + 1, span.end - 1)  # "(" and ")", checked above

    def _column(self, line: int, byte_col: int) -> int:
        text = self._lines[line - 1] if line - 1 < len(self._lines) else ""
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def _arg_span(self, arg: cst.Arg) -> Optional[Span]:
        """An argument runs from its star or keyword (or its value's first parenthesis) to its
        value's last parenthesis."""
        value = self._placed(arg.value)
        call = self._holder.get(id(arg))
        if value is None or call is None:
            return None
        end = self._closing(value.end, len(arg.value.rpar))
        opening = self._opening(arg.value)
        if end is None or opening is None:
            return None
        start = self._head_of(arg, call) if arg.star or arg.keyword is not None else value.start - opening
        return None if start is None else self._offsets_span(start, end)

    def _name_span(self, name: cst.Name, holder: cst.CSTNode) -> Optional[Span]:
        """A name that ``ast`` keeps as a string, placed from the node that holds it."""
        width = len(name.value)
        if type(holder) is cst.Attribute:
            outer = self._placed(holder)
            start = None if outer is None else outer.end - width
        elif type(holder) is cst.Arg:
            call = self._holder.get(id(holder))
            start = None if call is None else self._head_of(holder, call)
        else:
            paired = self._partner(holder)
            if paired is None:
                return None
            start = self._ast_span(paired).start
            if type(holder) is not cst.Param:
                match = _DEF_HEAD.match(self._source, start)
                start = None if match is None else match.end()
        if start is None or self._source[start : start + width] != name.value:
            return None
        return self._offsets_span(start, start + width)

    def _found_in(self, node: cst.CSTNode, outer: cst.CSTNode) -> Optional[Span]:
        """A node inside an f-string or an import alias, placed by its text within the outer
        node's range: the k-th node of that text is the k-th occurrence of the text, where the
        text occurs there exactly as often as nodes of it do (else LibCST's pass decides)."""
        where = self._placed(outer)
        if where is None:
            return None
        code = self._module.code_for_node
        text = code(node) if type(node) is cst.Name else code(node).strip()
        if not text:
            return None
        pattern = re.escape(text)
        if text[0].isidentifier():
            pattern = r"(?<!\w)" + pattern
        if text[-1].isalnum() or text[-1] == "_":
            pattern += r"(?!\w)"
        found = [m.start() for m in re.finditer(pattern, self._source[where.start : where.end])]
        same = self._same_text_nodes.get((id(outer), text))
        if same is None:
            same = [n for n in _held_in_order(outer) if type(n) is type(node) and
                    (code(n) if type(n) is cst.Name else code(n).strip()) == text]
            self._same_text_nodes[(id(outer), text)] = same
        if len(found) != len(same) or not any(n is node for n in same):
            return None
        start = where.start + found[next(i for i, n in enumerate(same) if n is node)]
        return self._offsets_span(start, start + len(text))

    def _between(self, first: cst.BaseExpression, last: cst.BaseExpression) -> Optional[Span]:
        """From ``first``'s opening parenthesis to ``last``'s closing one (``a and b``: CPython has
        one node for ``a and b and c``, LibCST two)."""
        left, right = self._placed(first), self._placed(last)
        if left is None or right is None:
            return None
        opening = self._opening(first)
        end = self._closing(right.end, len(last.rpar))
        if opening is None or end is None:
            return None
        return self._offsets_span(left.start - opening, end)

    def _opening(self, node: cst.BaseExpression) -> Optional[int]:
        """How many characters ``node``'s opening parentheses take (None: laid out over lines,
        where only LibCST's pass knows)."""
        width = 0
        for paren in node.lpar:
            if not isinstance(paren.whitespace_after, cst.SimpleWhitespace):
                return None
            width += 1 + len(paren.whitespace_after.value)
        return width

    def _closing(self, end: int, count: int) -> Optional[int]:
        """Where the ``count`` closing parentheses after offset ``end`` end: only whitespace,
        line continuations and comments can stand between an expression and its ``)``."""
        text = self._source
        for _ in range(count):
            while end < len(text):
                ch = text[end]
                if ch in " \t\f\r\n\\":
                    end += 1
                elif ch == "#":
                    newline = text.find("\n", end)
                    end = len(text) if newline < 0 else newline
                else:
                    break
            if end >= len(text) or text[end] != ")":
                return None
            end += 1
        return end

    def _offsets_span(self, start: int, end: int) -> Span:
        line, end_line = self.offset_line(start), self.offset_line(end)
        return Span(line, start - self._line_starts[line - 1], end_line, end - self._line_starts[end_line - 1], start, end)

    def _head_of(self, arg: cst.Arg, call: cst.Call) -> Optional[int]:
        """Where (the offset) a starred or keyword argument begins, from ``ast``'s
        ``Starred``/``keyword``."""
        paired = self._partner(call)
        if paired is None:
            return None
        named = [a for a in call.args if a.keyword is not None or a.star == "**"]
        positional = [a for a in call.args if a.keyword is None and a.star != "**"]
        if len(named) != len(paired.keywords) or len(positional) != len(paired.args):
            return None
        if arg in named:
            node = paired.keywords[named.index(arg)]
        else:
            node = paired.args[positional.index(arg)]
        return self._ast_span(node).start

    def offset_line(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def _from_libcst(self, node: cst.CSTNode) -> Span:
        if self._libcst is None:
            self._libcst = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        rng = self._libcst[node]
        start = self._line_starts[rng.start.line - 1] + rng.start.column
        end = self._line_starts[rng.end.line - 1] + rng.end.column
        return Span(rng.start.line, rng.start.column, rng.end.line, rng.end.column, start, end)

    # --- checks: does this ``ast`` node stand for that CST node? ------------------
    def _text(self, node: ast.AST) -> str:
        span = self._ast_span(node)
        return self._source[span.start : span.end]


def _same_name(pos: Positions, c: cst.Name, a: ast.AST) -> bool:
    return a.id == c.value


def _same_constant(pos: Positions, c: cst.CSTNode, a: ast.AST) -> bool:
    if isinstance(c, cst.Name):
        return repr(a.value) == c.value and pos._text(a) == c.value
    if isinstance(c, (cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary)):
        return pos._text(a) == c.value
    if isinstance(c, cst.Ellipsis):
        return a.value is Ellipsis
    return _same_text(pos, c, a)


def _same_call(pos: Positions, c: cst.Call, a: ast.AST) -> bool:
    return _same_head(c.func, a.func) and pos._source[_end(pos, a) - 1] == ")"


def _same_attribute(pos: Positions, c: cst.Attribute, a: ast.AST) -> bool:
    return a.attr == c.attr.value and _same_head(c.value, a.value)


def _same_subscript(pos: Positions, c: cst.Subscript, a: ast.AST) -> bool:
    return _same_head(c.value, a.value) and pos._source[_end(pos, a) - 1] == "]"


def _same_head(c: cst.BaseExpression, a: ast.AST) -> bool:
    """The called (or subscripted) expression is the same kind of thing with the same name."""
    if isinstance(c, cst.Name):
        return isinstance(a, ast.Name) and a.id == c.value or isinstance(a, ast.Constant)
    if isinstance(c, cst.Attribute):
        return isinstance(a, ast.Attribute) and a.attr == c.attr.value
    return type(a).__name__ == _cst_family(c) or not isinstance(a, (ast.Name, ast.Attribute))


def _same_text(pos: Positions, c: cst.CSTNode, a: ast.AST) -> bool:
    """The less common families: the same text but for whitespace (LibCST generates a nested
    node's code at its own indentation), parentheses left out as LibCST leaves them."""
    if type(c) is cst.Tuple:
        # CPython's range holds one pair of the tuple's parentheses, LibCST's code all of them
        return _squeezed(pos._text(a)).strip("()") == _squeezed(pos._module.code_for_node(c)).strip("()")
    bare = c.with_changes(lpar=(), rpar=()) if getattr(c, "lpar", None) else c
    return _squeezed(pos._text(a)) == _squeezed(pos._module.code_for_node(bare))


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _end(pos: Positions, a: ast.AST) -> int:
    return pos._line_starts[a.end_lineno - 1] + pos._column(a.end_lineno, a.end_col_offset)


def _same_holder(pos: Positions, c: cst.CSTNode, a: ast.AST) -> bool:
    return (a.arg if isinstance(a, ast.arg) else a.name) == c.name.value


def _same_alias(pos: Positions, c: cst.ImportAlias, a: ast.AST) -> bool:
    asname = c.asname.name.value if c.asname is not None and isinstance(c.asname.name, cst.Name) else None
    return a.name == pos._module.code_for_node(c.name) and a.asname == asname


def _same_import(pos: Positions, c: cst.CSTNode, a: ast.AST) -> bool:
    """An import statement: the same text but for whitespace (its parentheses are its own)."""
    return _squeezed(pos._text(a)) == _squeezed(pos._module.code_for_node(c)).rstrip(";")


_CHECKS: Dict[str, Callable[[Positions, cst.CSTNode, ast.AST], bool]] = {
    "alias": _same_alias,
    "Import": _same_import,
    "ImportFrom": _same_import,
    "FunctionDef": _same_holder,
    "ClassDef": _same_holder,
    "arg": _same_holder,
    "Name": _same_name,
    "Constant": _same_constant,
    "Call": _same_call,
    "Attribute": _same_attribute,
    "Subscript": _same_subscript,
}
