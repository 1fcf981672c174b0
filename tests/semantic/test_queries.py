"""The named questions of ``semantic/queries.py``: what extractors ask about a name instead of
looking it up by hand. Each answers with reaching definitions at the use; these tests pin the
values each returns on small programs (a name reassigned after the use, bound in one branch
only, a shadowed import, a binding carried round a loop)."""
import ast

from conftest import dedent

from precision_lint.semantic import queries
from precision_lint.semantic.index import build_index, nodes_of


def _index(src):
    return build_index(dedent(src), "m")


def _names(ix, name):
    """Every ``ast.Name`` node spelled ``name``, in source order (targets included)."""
    return [node for node in nodes_of(ix.module) if isinstance(node, ast.Name) and node.id == name]


def _call(ix, func):
    """The first call of ``func`` (a dotted text) in the module."""
    return next(site for site in ix.calls if ix.text(site.node.func) == func)


def _texts(ix, values):
    return [ix.text(v) for v in values]


def test_a_name_reassigned_after_the_use_holds_the_earlier_value():
    ix = _index(
        """
        import torch
        dtype = torch.float32
        model = load(dtype=dtype)
        dtype = torch.float16
        """
    )
    use = _call(ix, "load").node.keywords[0].value
    assert _texts(ix, queries.reaching_values(ix, use, ix.scope_of(use))) == ["torch.float32"]
    assert ix.text(queries.sole_binding(ix, use, ix.scope_of(use)).value) == "torch.float32"
    # an importer (the end of the module) sees the last one
    end = queries.reaching_at(ix, "dtype", ix.root, None)
    assert end.owner is ix.root
    assert _texts(ix, [b.value for b in end.bindings]) == ["torch.float16"]


def test_a_name_bound_in_one_branch_only_may_hold_either_value():
    ix = _index(
        """
        import torch
        dtype = torch.float32
        if args.fp16:
            dtype = torch.float16
        model = load(dtype=dtype)
        """
    )
    use = _call(ix, "load").node.keywords[0].value
    reach = queries.reaching(ix, use, ix.scope_of(use))
    assert reach.owner is ix.root
    assert _texts(ix, [b.value for b in reach.bindings]) == ["torch.float16", "torch.float32"]
    assert [ix.text(g[0]) for g in reach.bindings[0].guards] == ["args.fp16"]
    assert reach.bindings[1].guards == ()
    assert queries.sole_binding(ix, use, ix.scope_of(use)) is None


def test_a_name_bound_only_inside_a_branch_is_all_the_use_can_see():
    ix = _index(
        """
        if args.fp16:
            scaler = GradScaler()
        scaler.step(opt)
        """
    )
    use = _call(ix, "scaler.step").receiver
    assert _texts(ix, queries.reaching_values(ix, use, ix.scope_of(use))) == ["GradScaler()"]
    binding = queries.sole_binding(ix, use, ix.scope_of(use))
    assert [ix.text(t) for t, _ in binding.guards] == ["args.fp16"]


def test_a_shadowed_import_resolves_to_the_binding_that_reaches_the_use():
    ix = _index(
        """
        from transformers import Trainer
        first = Trainer()
        Trainer = MyTrainer
        second = Trainer()
        def build():
            return Trainer()
        """
    )
    first, second, in_function = (site for site in ix.calls if ix.text(site.node.func) == "Trainer")
    at = queries.position(ix, first.node)
    assert queries.qualified_name(ix, "Trainer", ix.root, at) == "transformers.Trainer"
    # rebound to a name no scope binds: not the import any more
    assert queries.qualified_name(ix, "Trainer", ix.root, queries.position(ix, second.node)) is None
    # a function runs after the module: it sees the rebinding
    assert queries.qualified_name(ix, "Trainer", in_function.scope, queries.position(ix, in_function.node)) is None
    assert first.qualname == "transformers.Trainer" and second.qualname is None
    # an alias of an import resolves through it
    alias = _index("import transformers\nT = transformers.Trainer\nT()\n")
    assert queries.qualified_name(alias, "T", alias.root) == "transformers.Trainer"


def test_an_import_shadowed_by_a_parameter_is_no_import():
    ix = _index(
        """
        import torch
        def f(torch):
            return torch.float16
        x = torch.float16
        """
    )
    function = ix.functions["m.f"]
    assert queries.qualified_name(ix, "torch", function) is None
    assert queries.is_parameter("torch", function)
    assert queries.only_parameter("torch", function)
    assert queries.qualified_name(ix, "torch", ix.root) == "torch"
    assert not queries.is_parameter("torch", ix.root)


def test_a_rebound_parameter_is_a_parameter_but_not_only_one():
    ix = _index(
        """
        def f(dtype):
            dtype = dtype or torch.float32
            return dtype
        """
    )
    function = ix.functions["m.f"]
    assert queries.is_parameter("dtype", function)
    assert not queries.only_parameter("dtype", function)


def test_a_shadowed_builtin_is_no_builtin():
    ix = _index(
        """
        def uses_builtin():
            return hasattr(torch, "amp")

        def shadowed():
            hasattr = lambda *a: True
            return hasattr(torch, "amp")
        """
    )
    builtin, local = (site for site in ix.calls if ix.text(site.node.func) == "hasattr")
    assert queries.is_builtin(ix, builtin.node.func, builtin.scope)
    assert not queries.is_builtin(ix, local.node.func, local.scope)
    assert queries.binding_scope("hasattr", local.scope) is ix.functions["m.shadowed"]
    assert queries.binding_scope("hasattr", builtin.scope) is None


def test_at_module_level_the_builtin_is_seen_until_a_binding_reaches_the_use():
    ix = _index(
        """
        ok = hasattr(torch, "amp")
        for _ in range(2):
            again = hasattr(torch, "amp")
            hasattr = my_hasattr
        def hasattr(obj, name):
            return False
        late = hasattr(torch, "amp")
        def f():
            return hasattr(torch, "amp")
        """
    )
    before, in_loop, after, in_function = (site for site in ix.calls if ix.text(site.node.func) == "hasattr")
    assert queries.is_builtin(ix, before.node.func, before.scope)
    assert not queries.is_builtin(ix, in_loop.node.func, in_loop.scope)  # the second iteration sees the alias
    assert not queries.is_builtin(ix, after.node.func, after.scope)
    assert not queries.is_builtin(ix, in_function.node.func, in_function.scope)


def test_a_binding_later_in_the_loop_reaches_the_use_on_the_next_iteration():
    ix = _index(
        """
        x = torch.zeros(4)
        for batch in loader:
            y = x.sum()
            x = batch.half()
        """
    )
    use = _call(ix, "x.sum").receiver
    assert _texts(ix, queries.reaching_values(ix, use, ix.scope_of(use))) == ["torch.zeros(4)", "batch.half()"]
    # the loop target: bound, its value not written
    target = _names(ix, "batch")[0]
    use_batch = _call(ix, "batch.half").receiver
    assert queries.reaching_values(ix, use_batch, ix.scope_of(use_batch)) == []
    assert [b.statement for b in queries.reaching(ix, use_batch, ix.scope_of(use_batch)).bindings] == [
        next(s for s in ix.module.body if isinstance(s, ast.For))
    ]
    assert queries.position(ix, target) < queries.position(ix, use_batch)


def test_unpacked_values_give_the_element_the_name_takes():
    ix = _index(
        """
        s, t = log_softmax(a), softmax(b)
        kl(s, t)
        """
    )
    call = _call(ix, "kl").node
    s_use, t_use = call.args
    assert _texts(ix, queries.reaching_values(ix, t_use, ix.root, unpack=True)) == ["softmax(b)"]
    assert _texts(ix, queries.reaching_values(ix, s_use, ix.root)) == ["log_softmax(a), softmax(b)"]


def test_bound_before_asks_whether_an_earlier_binding_reaches_the_place():
    ix = _index(
        """
        def validate():
            te = load_text_encoder()
            train(te)
            te = load_text_encoder()
            te.to(torch.float16)
        """
    )
    function = ix.functions["m.validate"]
    cast = _call(ix, "te.to")
    reach = queries.reaching(ix, cast.receiver, function)
    assert len(reach.bindings) == 1
    remade = queries.binding_position(ix, reach.bindings[0])
    assert queries.bound_before(ix, cast.receiver, function, remade)
    first = queries.binding_position(ix, queries.every_binding(ix, "te", function)[0])
    assert first < remade
    assert not queries.bound_before(ix, cast.receiver, function, first)
    assert len(queries.every_binding(ix, "te", function)) == 2


def test_a_node_outside_the_tree_has_no_position():
    ix = _index("x = 1\n")
    assert queries.position(ix, ast.Name("x")) is None
    assert queries.position(ix, ix.module.body[0]) is not None


def test_no_module_outside_semantic_looks_a_name_up_by_hand():
    """Issue #23: extractors, the project join and the rules ask ``semantic.queries``; the
    binder's own look-ups (and its node numbering) stay inside ``semantic/``."""
    import ast
    import pathlib

    import precision_lint

    # `imports.aliases`: the module-level import table, flow-insensitive (queries.name_for
    # answers "which name spells this module here")
    by_hand = {"bindings_of", "bindings_at", "bindings_anywhere", "resolve_name", "order_of", "lookup_scope", "aliases"}
    root = pathlib.Path(precision_lint.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "semantic":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in by_hand:
                found.append(f"{path.relative_to(root)}:{node.lineno}: .{node.attr}")
    assert found == []


def test_the_name_a_fix_may_spell_a_module_with_is_the_import_that_reaches_it():
    ix = _index(
        """
        import torch
        def early():
            return softmax(x)
        y = softmax(x)
        import torch.nn.functional as F
        z = softmax(x)
        def shadowed(F):
            return softmax(x)
        def local():
            F = make()
            return softmax(x)
        """
    )
    calls = [n for n in nodes_of(ix.module) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "softmax"]
    early, y, z, shadowed, local = [(ix.call_of(c).scope, queries.position(ix, c)) for c in calls]
    fn = "torch.nn.functional"
    assert queries.name_for(ix, fn, *y) == "torch.nn.functional"  # `F` is imported below it
    assert queries.name_for(ix, fn, *z) == "F"
    assert queries.name_for(ix, fn, *early) == "F"  # a function runs once the module has
    assert queries.name_for(ix, fn, *shadowed) == "torch.nn.functional"  # a parameter `F`
    assert queries.name_for(ix, fn, *local) == "torch.nn.functional"  # a local `F`
    assert queries.name_for(ix, "torch", *y) == "torch"
    assert queries.name_for(ix, "numpy", *z) is None
    maybe = _index("import torch.nn.functional as F\nif cpu:\n    F = make()\nsoftmax(x)\n")
    call = next(n for n in nodes_of(maybe.module) if isinstance(n, ast.Call) and n.func.id == "softmax")
    assert queries.name_for(maybe, "torch.nn.functional", maybe.root, queries.position(maybe, call)) is None  # `F` may be another object there
    optional = _index("try:\n    import torch\nexcept ImportError:\n    torch = None\nsoftmax(x)\n")
    call = next(n for n in nodes_of(optional.module) if isinstance(n, ast.Call))
    assert queries.name_for(optional, "torch", optional.root, queries.position(optional, call)) == "torch"
