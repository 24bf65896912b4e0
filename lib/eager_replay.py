"""Replay one eager (un-jitted) call of a JAX function without its Python: the same per-op
executables, in the same order, on new inputs.

Called without `jax.jit`, JAX runs a function op by op: each primitive is compiled on its
own (cached) and executed, so the float order is that of separate ops, never of a fused
program. The guide's ensemble step runs like that, and most of its cost is the Python
around the ops (Flax's module traversal, tracing `vmap` and `grad` anew each step). An
`EagerTape` records the primitives one eager call executes, with where each input came
from; replaying it calls the same primitives' implementations on the new inputs, so every
result is the eager call's bit for bit (tests/test_recipe.py checks 30 ensemble steps).

Only for functions whose sequence of primitives does not depend on the values they see
(no Python branching on array contents); `record` refuses a function whose outputs it
cannot trace back to its inputs. It calls JAX internals, so it runs only on the JAX
release it was checked on (`CHECKED_JAX`); `replay_steps` checks its first replayed steps
against eager calls and falls back to eager calls, with one warning, whenever recording or
replaying fails.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
from jax._src import core, dispatch, pjit, tree_util
from jax._src.interpreters import pxla
from jax._src.lib import _jax

from .numerics import same_bits

CHECKED_JAX = "0.10.2"
"""The JAX release whose internals the recorder and the replay were checked against."""
CHECKED_STEPS = 2
"""Replayed steps that `replay_steps` also runs eagerly, requiring the same bits."""


@dataclass(frozen=True)
class _Op:
    call: Callable[..., Any]
    inputs: tuple[int | tuple[str, Any], ...]  # a slot, or ("const", value)
    outputs: tuple[int, ...]
    many: bool


class EagerTape:
    """The primitives of one eager call of `fn(*args)`, replayable on new `args`."""

    def __init__(self, ops: list[_Op], n_slots: int, n_inputs: int, out_slots, out_tree):
        self._ops = ops
        self._n_slots = n_slots
        self._n_inputs = n_inputs
        self._out_slots = out_slots
        self._out_tree = out_tree

    @staticmethod
    def supported() -> bool:
        """Whether this JAX exposes the eager evaluation hook the recorder uses and the
        dispatch internals the replay calls (private APIs, checked on jax 0.10.2); callers
        fall back to plain eager calls otherwise."""
        if jax.__version__ != CHECKED_JAX:
            return False
        process = getattr(getattr(core, "EvalTrace", None), "process_primitive", None)
        needed = {
            dispatch: ("apply_primitive", "xla_primitive_callable"),
            pjit: (
                *("jit_p", "_pjit_call_impl", "_pjit_call_impl_python", "_get_fastpath_data"),
                *("_need_to_rebuild_with_fdo", "_get_jaxpr_as_fun", "_get_cpp_global_cache"),
            ),
            pxla: ("JitGlobalCppCacheKeys", "cc_shard_arg"),
            _jax: ("pjit",),
        }
        return callable(process) and all(
            hasattr(module, name) for module, names in needed.items() for name in names
        )

    @classmethod
    def record(cls, fn: Callable[..., Any], *args: Any) -> tuple[EagerTape, Any]:
        """Call `fn(*args)` eagerly once; returns the tape and that call's output."""
        inputs = jax.tree.leaves(args)
        slots = {id(a): i for i, a in enumerate(inputs)}  # id of an array -> its slot
        n_slots = len(inputs)
        alive = list(inputs)  # keeps every recorded array alive, so no id() is reused
        ops: list[_Op] = []
        thread = threading.get_ident()
        original = core.EvalTrace.process_primitive

        def process(trace, primitive, prim_args, params):
            nonlocal n_slots
            out = original(trace, primitive, prim_args, params)
            if threading.get_ident() != thread:  # another thread's eager work: not ours
                return out
            refs = tuple(slots.get(id(a), ("const", a)) for a in prim_args)
            outs = list(out) if primitive.multiple_results else [out]
            out_slots = tuple(range(n_slots, n_slots + len(outs)))
            n_slots += len(outs)
            slots.update({id(array): slot for array, slot in zip(outs, out_slots, strict=True)})
            alive.extend([*prim_args, *outs])
            call = _callable(primitive, params)
            ops.append(_Op(call, refs, out_slots, primitive.multiple_results))
            return out

        core.EvalTrace.process_primitive = process
        try:
            out = fn(*args)
        finally:
            core.EvalTrace.process_primitive = original
        leaves, out_tree = jax.tree.flatten(out)
        untraced = [i for i, a in enumerate(leaves) if id(a) not in slots]
        if untraced:
            raise ValueError(
                f"cannot replay: outputs {untraced} of the recorded call come from no recorded "
                "op or input (computed outside JAX's eager ops?)"
            )
        tape = cls(ops, n_slots, len(inputs), [slots[id(a)] for a in leaves], out_tree)
        return tape, out

    def __call__(self, *args: Any) -> Any:
        """The recorded call's output for new `args` (same structure, shapes and dtypes)."""
        inputs = jax.tree.leaves(args)
        if len(inputs) != self._n_inputs:
            raise ValueError(f"expected {self._n_inputs} input arrays, got {len(inputs)}")
        values: list[Any] = [None] * self._n_slots
        values[: len(inputs)] = inputs
        for op in self._ops:
            out = op.call(*[values[r] if isinstance(r, int) else r[1] for r in op.inputs])
            if op.many:
                for slot, array in zip(op.outputs, out, strict=True):
                    values[slot] = array
            else:
                values[op.outputs[0]] = out
        return jax.tree.unflatten(self._out_tree, [values[s] for s in self._out_slots])


def _fall_back(reason: str) -> None:
    warnings.warn(
        f"eager replay off ({reason}): running the eager calls themselves (same bits, slower)",
        UserWarning,
        stacklevel=3,
    )


def replay_steps(
    step: Callable[[Any, Any], tuple[Any, Any]],
    state: Any,
    batch: Any,
    steps: int,
    on_step: Callable[[int, Any], None] | None = None,
) -> tuple[Any, list[Any]]:
    """`steps` calls of the pure function `state, out = step(state, batch)`, eagerly: the first
    recorded, the rest replayed from the tape, the first `CHECKED_STEPS` of them also called
    eagerly and required to give the same bits. Where the recorder is unsupported, or a
    record, a replay or a check fails, the remaining steps are eager calls (one warning).
    `on_step(i, out)` sees each step's output (i from 1). Returns the last state and the
    outputs."""
    outputs: list[Any] = []
    tape = None
    if not EagerTape.supported():
        _fall_back(f"checked on jax {CHECKED_JAX}, this is jax {jax.__version__}")
    else:
        try:
            tape, (state, out) = EagerTape.record(step, state, batch)
            outputs.append(out)
        except Exception as error:  # JAX internals moved: the eager call still works
            _fall_back(f"recording failed: {type(error).__name__}: {error}")
    for i in range(len(outputs) + 1, steps + 1):
        if tape is not None:
            try:
                replayed = tape(state, batch)
                if i <= 1 + CHECKED_STEPS:
                    # On a copy: a step may update the objects its state holds in place.
                    eager = step(jax.tree.map(lambda leaf: leaf, state), batch)
                    if not same_bits(replayed, eager):
                        raise ValueError(f"replayed step {i} differs from the eager call")
                state, out = replayed
            except Exception as error:
                _fall_back(f"replay failed at step {i}: {type(error).__name__}: {error}")
                tape = None
        if tape is None:
            state, out = step(state, batch)
        outputs.append(out)
        if on_step is not None:
            on_step(i, out)
    return state, outputs


def _callable(primitive: core.Primitive, params: dict) -> Callable[..., Any]:
    """What eager evaluation runs for `primitive`, resolved once here instead of per call:
    - JAX's generic implementation (`apply_primitive`): the primitive's compiled single-op
      program, the callable `apply_primitive` looks up and calls;
    - a nested `jax.jit` (`jit_p`): the dispatcher `_pjit_call_impl` builds and calls, built
      once (`_nested_jit`);
    - anything else (e.g. `random_fold_in`): its own implementation, called as eager
      evaluation calls it.
    """
    impl = primitive.impl
    if _is_generic(primitive, impl):
        return dispatch.xla_primitive_callable(primitive, **params)
    if primitive is pjit.jit_p and impl is pjit._pjit_call_impl:
        return _nested_jit(**params)
    return lambda *args: impl(*args, **params)


def _is_generic(primitive: core.Primitive, impl: Any) -> bool:
    if impl is dispatch.apply_primitive:
        return True
    return (
        isinstance(impl, functools.partial)
        and impl.func is dispatch.apply_primitive
        and impl.args == (primitive,)
        and not impl.keywords
    )


def _nested_jit(
    *,
    jaxpr,
    in_shardings,
    out_shardings,
    in_layouts,
    out_layouts,
    donated_invars,
    ctx_mesh,
    name,
    keep_unused,
    inline,
    compiler_options_kvs,
) -> Callable[..., Any]:
    """The C++ dispatcher that `pjit._pjit_call_impl` (jax 0.10.2) builds on every call of a
    nested jit, built once: the same compiled program (JAX's own compile path on a miss,
    the C++ fast path after), without rebuilding the dispatcher per call."""
    params = dict(
        jaxpr=jaxpr,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
        in_layouts=in_layouts,
        out_layouts=out_layouts,
        donated_invars=donated_invars,
        ctx_mesh=ctx_mesh,
        name=name,
        keep_unused=keep_unused,
        inline=inline,
        compiler_options_kvs=compiler_options_kvs,
    )

    def cache_miss(*args, **_):
        out_flat, compiled, pgle_profiler, const_args = pjit._pjit_call_impl_python(*args, **params)
        fastpath = pjit._get_fastpath_data(
            compiled,
            jax.tree.structure(out_flat),
            args,
            out_flat,
            jaxpr.effects,
            jaxpr.consts,
            pgle_profiler,
            const_args,
        )
        return out_flat, fastpath, pjit._need_to_rebuild_with_fdo(pgle_profiler)

    fun = pjit._get_jaxpr_as_fun(*params.values())  # positional, as JAX calls it
    key = pxla.JitGlobalCppCacheKeys(
        donate_argnums=tuple(i for i, d in enumerate(donated_invars) if d),
        donate_argnames=None,
        device=None,
        backend=None,
        in_shardings_treedef=None,
        in_shardings_leaves=in_shardings,
        out_shardings_treedef=None,
        out_shardings_leaves=out_shardings,
        in_layouts_treedef=None,
        in_layouts_leaves=in_layouts,
        out_layouts_treedef=None,
        out_layouts_leaves=out_layouts,
    )
    return _jax.pjit(
        name,
        fun,
        cache_miss,
        [],
        [],
        key,
        tree_util.dispatch_registry,
        pxla.cc_shard_arg,
        pjit._get_cpp_global_cache(key.contains_explicit_attributes),
    )
