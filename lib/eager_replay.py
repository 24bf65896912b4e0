"""Replay one eager (un-jitted) call of a JAX function without its Python: the same primitives,
in the same order, on new inputs.

Called without `jax.jit`, JAX runs a function op by op: each primitive runs as its own
compiled program (a nested `jax.jit` as one program), so the float order is that of separate
ops, never of a fused program. The guide's ensemble step runs like that, and most of its cost
is the Python around the ops (JAX tracing `vmap` and `grad` anew each step, Flax's module
traversal). An `EagerTape` records the primitives one eager call hands to JAX's eager trace,
with their parameters and where each input came from, by standing in for that trace while the
call runs (`jax.extend.core.take_current_trace` / `set_current_trace`). Replaying calls, for
each recorded primitive, `jax.jit` of a function that binds that one primitive with its
recorded parameters, compiled once per primitive and parameters and called through jit's
compiled dispatch, without the transformations' Python or the eager trace's. For a single
operation that is the program eager dispatch compiles (it jits the same one-primitive
function); a nested `jax.jit` becomes a program that calls the nested one's.

Only for pure functions whose sequence of primitives does not depend on the values they see
(no Python branching on array contents); `record` refuses a function whose outputs it cannot
trace back to its inputs. The bits are checked, never assumed: `replay_steps` runs its first
replayed steps eagerly too and falls back to eager calls, with one warning, whenever
recording, replaying or that check fails. Public JAX API only (`jax`, `jax.extend`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
from jax.extend.core import Primitive, set_current_trace, take_current_trace

from .numerics import same_bits

# Pays for itself in scripts/bench.py TARGETS["audit.cold_s"] (the faithful ensemble's steps).
CHECKED_STEPS = 2
"""Replayed steps that `replay_steps` also runs eagerly, requiring the same bits."""


@dataclass(frozen=True)
class _Op:
    primitive: Primitive
    params: dict[str, Any]
    inputs: tuple[int | tuple[str, Any], ...]  # a slot, or ("const", value)
    outputs: tuple[int, ...]
    many: bool


@functools.cache  # eager dispatch hashes the parameters the same way to cache its own
def _program(primitive: Primitive, params: tuple[tuple[str, Any], ...]) -> Callable[..., Any]:
    """The primitive with these parameters (sorted items) as a jitted function of its
    operands, made once per process."""

    def bind(*operands: Any) -> Any:
        return primitive.bind(*operands, **dict(params))

    bind.__name__ = bind.__qualname__ = primitive.name
    return jax.jit(bind)


class _Recorder:
    """Stands in for JAX's eager trace during one call: hands every primitive on to it and
    notes the outermost ones (a primitive's own implementation may bind more)."""

    def __init__(self, eager: Any, note: Callable[[Primitive, Any, dict, Any], None]):
        self._eager, self._note, self._depth = eager, note, 0

    def process_primitive(self, primitive: Primitive, args: Any, params: dict) -> Any:
        self._depth += 1
        try:
            out = self._eager.process_primitive(primitive, args, params)
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._note(primitive, args, params, out)
        return out

    # Eagerly, a custom derivative's function runs as it is, its ops handed to this trace.
    def process_custom_jvp_call(self, primitive, fun, jvp, tracers, **params):
        with set_current_trace(self):
            return fun.call_wrapped(*tracers)

    def process_custom_vjp_call(self, primitive, fun, fwd, bwd, tracers, **params):
        with set_current_trace(self):
            return fun.call_wrapped(*tracers)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._eager, name)


class EagerTape:
    """The primitives of one eager call of `fn(*args)`, replayable on new `args`."""

    def __init__(self, ops: list[_Op], n_slots: int, n_inputs: int, out_slots, out_tree):
        self._ops = ops
        self._programs = [_program(op.primitive, tuple(sorted(op.params.items()))) for op in ops]
        self._n_slots = n_slots
        self._n_inputs = n_inputs
        self._out_slots = out_slots
        self._out_tree = out_tree

    @classmethod
    def record(cls, fn: Callable[..., Any], *args: Any) -> tuple[EagerTape, Any]:
        """Call `fn(*args)` eagerly once; returns the tape and that call's output."""
        inputs = jax.tree.leaves(args)
        slots = {id(a): i for i, a in enumerate(inputs)}  # id of an array -> its slot
        alive = list(inputs)  # keeps every recorded array alive, so no id() is reused
        ops: list[_Op] = []

        def note(primitive: Primitive, prim_args: Any, params: dict, out: Any) -> None:
            refs = tuple(slots.get(id(a), ("const", a)) for a in prim_args)
            outs = list(out) if primitive.multiple_results else [out]
            out_slots = tuple(range(len(slots), len(slots) + len(outs)))
            slots.update({id(array): slot for array, slot in zip(outs, out_slots, strict=True)})
            alive.extend([*prim_args, *outs])
            ops.append(_Op(primitive, params, refs, out_slots, primitive.multiple_results))

        with take_current_trace() as eager, set_current_trace(_Recorder(eager, note)):
            out = fn(*args)
        leaves, out_tree = jax.tree.flatten(out)
        untraced = [i for i, a in enumerate(leaves) if id(a) not in slots]
        if not ops or untraced:
            raise ValueError(
                f"cannot replay: outputs {untraced} of the recorded call come from no recorded "
                "op or input (computed outside JAX's eager ops?)"
            )
        tape = cls(ops, len(slots), len(inputs), [slots[id(a)] for a in leaves], out_tree)
        return tape, out

    def __call__(self, *args: Any) -> Any:
        """The recorded call's output for new `args` (same structure, shapes and dtypes)."""
        inputs = jax.tree.leaves(args)
        if len(inputs) != self._n_inputs:
            raise ValueError(f"expected {self._n_inputs} input arrays, got {len(inputs)}")
        values: list[Any] = [None] * self._n_slots
        values[: len(inputs)] = inputs
        for op, program in zip(self._ops, self._programs, strict=True):
            out = program(*[values[r] if isinstance(r, int) else r[1] for r in op.inputs])
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
    eagerly and required to give the same bits. Where a record, a replay or a check fails,
    the remaining steps are eager calls (one warning). `on_step(i, out)` sees each step's
    output (i from 1). Returns the last state and the outputs."""
    outputs: list[Any] = []
    tape = None
    try:
        tape, (state, out) = EagerTape.record(step, state, batch)
        outputs.append(out)
    except Exception as error:  # a JAX whose eager trace differs: the eager call still works
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
