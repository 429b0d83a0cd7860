"""Einstein summation, as :func:`torch.einsum`.

MindSpore 2.10 has no CPU kernel for ``ops.einsum`` / ``mint.einsum`` ("Unsupported op
[Einsum] on CPU"). This composite plans the equation in Python (at compile time under
``ms.jit``) and runs it as MindSpore ops:

1. per operand, repeated labels (``"ii->i"``) become a diagonal (multiply by an identity mask,
   sum one of the two axes) and labels used nowhere else are summed out;
2. operands are contracted left to right, pairwise, as PyTorch does without ``opt_einsum``:
   labels in both operands and still needed later are batch dims, labels in both and not needed
   are contracted, and the pair becomes one ``BatchMatMul`` of ``(batch, M, K) @ (batch, K, N)``
   (a transposed layout is passed to the matmul as a flag, not copied);
3. the result is permuted to the output's label order.

Sizes broadcast as PyTorch's: a label of size 1 in one operand takes the size of the other.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_tensor, is_float_dtype
from mscompat.custom_ops.registry import call, register

__all__ = ["einsum"]

_BMM = {
    (False, False): ops.BatchMatMul(False, False),
    (True, False): ops.BatchMatMul(True, False),
    (False, True): ops.BatchMatMul(False, True),
    (True, True): ops.BatchMatMul(True, True),
}

_DTYPES = (ms.float16, ms.float32, ms.float64, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)

Labels = List[int]


def _prod(sizes: Sequence[int]) -> int:
    out = 1
    for s in sizes:
        out *= s
    return out


def _parse_term(term: str, ndim: int, where: str) -> Tuple[Labels, int]:
    """Labels of one term (letters as their code, ellipsis dims as -k counted from the right)
    and the number of ellipsis dims."""
    parts = term.split("...")
    if len(parts) > 2:
        raise ValueError(f"einsum(): equation has more than one ellipsis ('...') in {where}")
    for part in parts:
        for ch in part:
            if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
                raise ValueError(
                    f"einsum(): equation has an invalid subscript {ch!r} in {where}; "
                    "subscripts must be letters [a-zA-Z]"
                )
    letters = len(parts[0]) + (len(parts[1]) if len(parts) == 2 else 0)
    if len(parts) == 1:
        if ndim >= 0 and letters != ndim:
            raise ValueError(
                f"einsum(): the number of subscripts in the equation ({letters}) does not match "
                f"the number of dimensions ({ndim}) for {where} and no ellipsis was given"
            )
        return [ord(c) for c in parts[0]], 0
    n_ell = ndim - letters if ndim >= 0 else -1
    if ndim >= 0 and n_ell < 0:
        raise ValueError(
            f"einsum(): the number of subscripts in the equation ({letters}) is more than the "
            f"number of dimensions ({ndim}) for {where}"
        )
    ell = list(range(-n_ell, 0)) if n_ell > 0 else []
    return [ord(c) for c in parts[0]] + ell + [ord(c) for c in parts[1]], n_ell


@constexpr
def _plan(equation: str, shapes: Tuple[Tuple[int, ...], ...]) -> Tuple[Any, ...]:
    """The whole computation as constants: per-operand steps, pair steps, final permutation."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if arrow and "->" in rhs:
        raise ValueError("einsum(): equation has more than one '->'")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum(): the equation has {len(terms)} operand term(s) but {len(shapes)} "
            "operand(s) were given"
        )
    labels: List[Labels] = []
    n_ell = 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        lab, k = _parse_term(term, len(shape), f"operand {i}")
        labels.append(lab)
        n_ell = max(n_ell, k)
    # sizes of every label, broadcasting 1 against n
    size: Dict[int, int] = {}
    for i, (lab, shape) in enumerate(zip(labels, shapes)):
        seen: Dict[int, int] = {}
        for lb, s in zip(lab, shape):
            if lb in seen and seen[lb] != s:
                raise ValueError(
                    f"einsum(): subscript {chr(lb)} is repeated for operand {i} but the sizes "
                    f"don't match, {seen[lb]} != {s}"
                )
            seen[lb] = s
            old = size.get(lb, 1)
            if s != old and 1 not in (s, old):
                name = chr(lb) if lb > 0 else "..."
                raise ValueError(
                    f"einsum(): operands do not broadcast: subscript {name} has size {old} and "
                    f"size {s} (operand {i})"
                )
            size[lb] = s if old == 1 else old
    if arrow:
        out, _ = _parse_term(rhs, -1, "the output")
        if "..." in rhs:
            pos = rhs.index("...")
            head = [ord(c) for c in rhs[:pos]]
            out = head + list(range(-n_ell, 0)) + [ord(c) for c in rhs[pos + 3 :]]
        for lb in out:
            if out.count(lb) > 1:
                raise ValueError(f"einsum(): output subscript {chr(lb)} appears more than once")
            if lb > 0 and lb not in size:
                raise ValueError(
                    f"einsum(): output subscript {chr(lb)} does not appear in the equation "
                    "for any input operand"
                )
    else:
        counts: Dict[int, int] = {}
        for lab in labels:
            for lb in lab:
                if lb > 0:
                    counts[lb] = counts.get(lb, 0) + 1
        out = list(range(-n_ell, 0)) + sorted(lb for lb, c in counts.items() if c == 1)
    out_shape = tuple(size[lb] for lb in out)
    if any(0 in shape for shape in shapes):
        return ("empty", out_shape)

    preps = []
    states: List[Tuple[Labels, List[int]]] = []
    for i, (lab, shape) in enumerate(zip(labels, shapes)):
        lab, shp = list(lab), list(shape)
        diags = []
        while len(set(lab)) < len(lab):
            p = next(j for j, lb in enumerate(lab) if lab.count(lb) > 1)
            q = lab.index(lab[p], p + 1)
            diags.append((p, q, shp[p], len(lab)))
            del lab[q], shp[q]
        elsewhere = set(out)
        for j, other in enumerate(labels):
            if j != i:
                elsewhere.update(other)
        axes = tuple(j for j, lb in enumerate(lab) if lb not in elsewhere)
        shp = [s for lb, s in zip(lab, shp) if lb in elsewhere]
        lab = [lb for lb in lab if lb in elsewhere]
        preps.append((tuple(diags), axes))
        states.append((lab, shp))

    pairs = []
    a_lab, a_shp = states[0]
    for i in range(1, len(states)):
        b_lab, b_shp = states[i]
        keep = set(out)
        for later in states[i + 1 :]:
            keep.update(later[0])
        sum_a = tuple(j for j, lb in enumerate(a_lab) if lb not in keep and lb not in b_lab)
        a_shp = [s for lb, s in zip(a_lab, a_shp) if lb in keep or lb in b_lab]
        a_lab = [lb for lb in a_lab if lb in keep or lb in b_lab]
        batch = [lb for lb in a_lab if lb in b_lab and lb in keep]
        contr = [lb for lb in a_lab if lb in b_lab and lb not in keep]
        a_only = [lb for lb in a_lab if lb not in b_lab]
        b_only = [lb for lb in b_lab if lb not in a_lab]
        full = {lb: size[lb] for lb in a_lab + b_lab}
        # broadcast a size-1 label against the other operand's size
        a_target = tuple(full[lb] if lb in b_lab else s for lb, s in zip(a_lab, a_shp))
        b_target = tuple(full[lb] if lb in a_lab else s for lb, s in zip(b_lab, b_shp))
        nb = _prod([full[lb] for lb in batch])
        m = _prod([full[lb] for lb in a_only])
        k = _prod([full[lb] for lb in contr])
        n = _prod([full[lb] for lb in b_only])
        if a_lab == batch + contr + a_only and contr and a_only:
            perm_a, ta = tuple(range(len(a_lab))), True
            a3 = (nb, k, m)
        else:
            perm_a, ta = tuple(a_lab.index(lb) for lb in batch + a_only + contr), False
            a3 = (nb, m, k)
        if b_lab == batch + b_only + contr and contr and b_only:
            perm_b, tb = tuple(range(len(b_lab))), True
            b3 = (nb, n, k)
        else:
            perm_b, tb = tuple(b_lab.index(lb) for lb in batch + contr + b_only), False
            b3 = (nb, k, n)
        a_lab = batch + a_only + b_only
        a_shp = [full[lb] for lb in a_lab]
        pairs.append(
            (sum_a, a_target, perm_a, ta, a3, b_target, perm_b, tb, b3, bool(contr), tuple(a_shp))
        )
    final_sum = tuple(j for j, lb in enumerate(a_lab) if lb not in out)
    a_lab = [lb for lb in a_lab if lb in out]
    perm = tuple(a_lab.index(lb) for lb in out)
    # PyTorch sums an integer operand's lone labels with at::sum, which widens to int64
    sums = bool(final_sum) or any(p[1] for p in preps) or any(p[0] for p in pairs)
    return ("plan", tuple(preps), tuple(pairs), final_sum, perm, out_shape, sums)


def _identity(x: Tuple[int, ...]) -> bool:
    return x == tuple(range(len(x)))


def _prepare(x: Tensor, diags: Tuple[Any, ...], axes: Tuple[int, ...]) -> Tensor:
    for p, q, n, ndim in diags:
        shape = [1] * ndim
        shape[p] = n
        shape[q] = n
        x = (x * ops.eye(n, n, x.dtype).reshape(tuple(shape))).sum(q)
    if axes:
        x = x.sum(axes)
    return x


def _contract(a: Tensor, b: Tensor, step: Tuple[Any, ...]) -> Tensor:
    sum_a, a_target, perm_a, ta, a3, b_target, perm_b, tb, b3, has_k, out_shape = step
    if sum_a:
        a = a.sum(sum_a)
    if tuple(a.shape) != a_target:
        a = ops.broadcast_to(a, a_target)
    if tuple(b.shape) != b_target:
        b = ops.broadcast_to(b, b_target)
    if not _identity(perm_a):
        a = ops.transpose(a, perm_a)
    if not _identity(perm_b):
        b = ops.transpose(b, perm_b)
    a = a.reshape(a3)
    b = b.reshape(b3)
    if has_k:  # noqa: SIM108 - ms.jit parses a statement more reliably
        c = _BMM[(ta, tb)](a, b)
    else:  # an outer product (K = 1): a broadcast multiply, no matmul
        c = a * b
    return c.reshape(out_shape)


@register("math.einsum", "composite", note="pairwise BatchMatMul contractions")
def _einsum_composite(plan: Tuple[Any, ...], *operands: Tensor) -> Tensor:
    _, preps, pairs, final_sum, perm, out_shape, _ = plan
    x = _prepare(operands[0], preps[0][0], preps[0][1])
    for i, step in enumerate(pairs):
        y = _prepare(operands[i + 1], preps[i + 1][0], preps[i + 1][1])
        x = _contract(x, y, step)
    if final_sum:
        x = x.sum(final_sum)
    if not _identity(perm):
        x = ops.transpose(x, perm)
    return x.reshape(out_shape)


def _shapes(operands: Tuple[Tensor, ...]) -> Tuple[Tuple[int, ...], ...]:
    return tuple(tuple(t.shape) for t in operands)


def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products of ``operands`` over the subscripts of ``equation``, as
    :func:`torch.einsum`.

    .. math::
        \\text{out}[o] = \\sum_{s \\notin o} \\prod_i \\text{operands}_i[\\ldots]

    ``equation`` names each operand's dims with letters (``"bhqd,bhkd->bhqk"``); a letter in
    two operands is multiplied along, one missing from the output is summed. ``...`` stands for
    the dims not named (broadcast across operands, right aligned); a letter repeated within one
    operand takes its diagonal (``"ii->i"``). Without ``->`` the output is the ellipsis dims
    followed by the letters used once, in alphabetical order (upper case first). Operands are
    contracted left to right, each pair as one batched matmul.

    Args:
        equation (str): the subscripts, e.g. ``"ij,jk->ik"``.
        *operands (Tensor): one Tensor per term of the equation, all of one dtype (float16,
            float32, float64, or an integer dtype, computed in float64: exact below
            :math:`2^{53}`); also accepted as a single list or tuple, as PyTorch does. PyTorch's
            sublist form (``einsum(a, [0, 1], b, [1, 2])``) is not supported.

    Returns:
        Tensor: the operands' dtype (for integer operands: int64 where a label is summed
        outside a contraction, as PyTorch), one dim per output subscript.

    Raises:
        TypeError: ``equation`` not a str, an operand not a Tensor, a bool/complex or mixed dtype.
        ValueError: a bad equation, the operand count or a rank that does not match it, sizes
            that do not broadcast.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import einsum
        >>> a = ms.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> einsum("ij,jk->ik", a, a).asnumpy().tolist()
        [[7.0, 10.0], [15.0, 22.0]]
        >>> einsum("ii", a).asnumpy().tolist()
        5.0
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): equation must be a str, but got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): operands must contain at least one Tensor")
    for i, t in enumerate(operands):
        check_tensor(t, f"einsum(): operands[{i}]")
    dtype = operands[0].dtype
    for i, t in enumerate(operands):
        if t.dtype not in _DTYPES:
            raise TypeError(
                f"einsum(): operands[{i}] must be a float or integer Tensor, "
                f"but got dtype {t.dtype}"
            )
        if t.dtype != dtype:
            raise TypeError(
                f"einsum(): operands must have one dtype, but operands[0] is {dtype} and "
                f"operands[{i}] is {t.dtype}"
            )
    plan = _plan(equation, _shapes(operands))
    if plan[0] == "empty":  # answered here: no kernel sees an empty tensor
        return ops.zeros(plan[1], dtype if is_float_dtype(dtype) else ms.int64)
    if not is_float_dtype(dtype):  # integers: exact in float64 below 2**53 (no int matmul on CPU)
        wide = tuple(t.astype(ms.float64) for t in operands)
        out_dtype = ms.int64 if plan[6] else dtype  # as PyTorch: a summed label widens
        return call("math.einsum", plan, *wide).astype(out_dtype)
    return call("math.einsum", plan, *operands)
