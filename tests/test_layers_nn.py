"""What the op database cannot see for ``mscompat.layers``: attention dropout's statistics and
seeding, query blocks, a float attention mask's gradient, running statistics updated in place,
PyTorch's parameter names, and the documented difference of ``embedding_bag``'s
``scale_grad_by_freq`` from PyTorch 2.13's CPU."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from mscompat.layers import (
    Embedding,
    EmbeddingBag,
    InstanceNorm2d,
    RMSNorm,
    attention,
    embedding_bag,
    instance_norm,
    scaled_dot_product_attention,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _dropped_weights(p: float, source: int = 4000) -> np.ndarray:
    """One query attending ``source`` keys with equal scores, value = identity: the output row
    is the dropped attention weights."""
    q = ms.Tensor(np.zeros((1, 1, 4), np.float32))
    k = ms.Tensor(np.zeros((1, source, 4), np.float32))
    v = ms.Tensor(np.eye(source, dtype=np.float32)[None])
    return scaled_dot_product_attention(q, k, v, dropout_p=p).asnumpy()[0, 0]


def test_sdpa_dropout_statistics_and_seed():
    p, source = 0.3, 4000
    ms.set_seed(7)
    first = _dropped_weights(p, source)
    kept = first[first != 0]
    assert abs((first == 0).mean() - p) < 0.03  # 4000 draws: 4 standard deviations
    np.testing.assert_allclose(kept, 1.0 / source / (1 - p), rtol=1e-5)
    ms.set_seed(7)
    np.testing.assert_array_equal(_dropped_weights(p, source), first)
    exact = _dropped_weights(0.0, source)
    np.testing.assert_array_equal(exact, np.full(source, 1.0 / source, np.float32))


def test_sdpa_query_blocks_match_one_block(monkeypatch):
    """Past SCORE_BLOCK scores the query rows run in blocks: same result, forward and
    gradient, with a mask that varies along the query."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 37, 8)) for _ in range(3))
    mask = rng.random((37, 37)) > 0.2
    mask[5] = False
    monkeypatch.setattr(attention, "SCORE_BLOCK", 2 * 2 * 37 * 6)  # blocks of 6 rows

    def loss(a, b, c):
        out = scaled_dot_product_attention(a, b, c, attn_mask=ms.Tensor(mask))
        return out, (out * out).sum()

    tq, tk, tv = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    t_out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(mask))
    (t_out * t_out).sum().backward()
    grad = ms.value_and_grad(lambda a, b, c: loss(a, b, c)[1], grad_position=(0, 1, 2))
    _, grads = grad(*(ms.Tensor(x) for x in (q, k, v)))
    out, _ = loss(*(ms.Tensor(x) for x in (q, k, v)))
    np.testing.assert_allclose(out.asnumpy(), t_out.detach().numpy(), atol=1e-12)
    for g, t in zip(grads, (tq, tk, tv)):
        np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("backend", ["aot", "composite"])
def test_sdpa_float_mask_gradient(backend):
    """A float mask's gradient (a learned bias: T5's, ALiBi's), broadcast over the heads, with
    -inf entries and a fully masked row (zeros there), on each backend, as PyTorch's."""
    from mscompat.custom_ops.registry import available, use_backend

    if not available("layers.scaled_dot_product_attention", backend)[0]:
        pytest.skip(f"backend {backend} unavailable here")
    rng = np.random.default_rng(2)
    shapes = ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4))
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    mask = rng.standard_normal((2, 1, 5, 7)).astype(np.float32)
    mask[0, 0, 1, 2] = -np.inf
    mask[1, 0, 3] = -np.inf
    dy = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    t = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (q, k, v, mask)]
    (F.scaled_dot_product_attention(*t[:3], attn_mask=t[3]) * torch.tensor(dy)).sum().backward()

    def loss(a, b, c, m):
        return (scaled_dot_product_attention(a, b, c, attn_mask=m) * ms.Tensor(dy)).sum()

    with use_backend(backend, "layers.scaled_dot_product_attention"):
        grads = ms.grad(loss, grad_position=(0, 1, 2, 3))(*(ms.Tensor(x) for x in (q, k, v, mask)))
    for g, want in zip(grads, t):
        np.testing.assert_allclose(g.asnumpy(), want.grad.numpy(), rtol=1e-5, atol=2e-6)


def test_instance_norm_updates_running_statistics_as_pytorch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5, 6)).astype(np.float32)
    mean, var = (
        ms.Parameter(ms.Tensor(np.zeros(3, np.float32))),
        ms.Parameter(ms.Tensor(np.ones(3, np.float32))),
    )
    t_mean, t_var = torch.zeros(3), torch.ones(3)
    for _ in range(2):
        instance_norm(ms.Tensor(x), mean, var, momentum=0.2)
        F.instance_norm(torch.tensor(x), t_mean, t_var, momentum=0.2)
    np.testing.assert_allclose(mean.asnumpy(), t_mean.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var.asnumpy(), t_var.numpy(), rtol=1e-6, atol=1e-7)


def test_instance_norm_cell_tracks_then_uses_running_statistics():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    ours = InstanceNorm2d(3, affine=True, track_running_stats=True)
    theirs = torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    ours(ms.Tensor(x))
    theirs(torch.tensor(x))
    ours.set_train(False)
    theirs.eval()
    y = ours(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(y, theirs(torch.tensor(x)).detach().numpy(), atol=1e-5)
    names = {p.name for p in ours.get_parameters()}
    assert names == {"weight", "bias", "running_mean", "running_var"}


def test_parameter_names_match_pytorch_state_dicts():
    assert [p.name for p in Embedding(5, 2).get_parameters()] == ["weight"]
    assert [p.name for p in EmbeddingBag(5, 2).get_parameters()] == ["weight"]
    assert [p.name for p in RMSNorm(4).get_parameters()] == ["weight"]
    frozen = Embedding.from_pretrained(ms.Tensor(np.eye(3, dtype=np.float32)))
    assert not frozen.weight.requires_grad
    table = Embedding(6, 3, padding_idx=2).weight.asnumpy()
    assert (table[2] == 0).all() and (table[0] != 0).any()


def test_embedding_bag_scale_grad_by_freq_divides_by_each_rows_count():
    """PyTorch 2.13's CPU kernel divides some rows by another row's count
    (pytorch/pytorch#190063); ours divides each row's gradient by its own count, as
    ``F.embedding`` and PyTorch's CUDA kernel: the reference is a bag sum of ``F.embedding``."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 3))
    x = np.array([[1, 0, 0], [2, 2, 3]])
    t_w = torch.tensor(w, requires_grad=True)
    F.embedding(torch.tensor(x), t_w, scale_grad_by_freq=True).sum(1).sum().backward()
    grad = ms.grad(
        lambda table: embedding_bag(ms.Tensor(x), table, mode="sum", scale_grad_by_freq=True).sum()
    )(ms.Tensor(w))
    np.testing.assert_allclose(grad.asnumpy(), t_w.grad.numpy(), atol=1e-12)
