"""Top-p (nucleus) masking without sorting the vocabulary, for vLLM's CPU sampler.

vLLM's CPU build applies top-p by sorting every row of the logits over the whole vocabulary at every decode
step (`apply_top_k_top_p_pytorch`): for SmolLM2's 49,152 tokens and a rollout batch of 208 rows that sort
alone took about a second per step on a 2-core AVX2 machine, longer than the model's forward pass. A
nucleus is small in practice (at temperature 0.7 and p = 0.95 the embedded model's largest seen was 31
tokens), so the same mask comes from the `candidates` largest logits of a row and its log-sum-exp: a row
whose nucleus ends inside its candidates is masked from them, every other row by vLLM's own sort. The kept
set is the same as the sort's (up to float rounding at the boundary and the order of equal logits, which the
sort leaves arbitrary too): a token is kept when the probability mass strictly above it is below p.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

SortedTopKTopP = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor | None], torch.Tensor]


def top_p_from_candidates(
    logits: torch.Tensor,
    k: torch.Tensor | None,
    p: torch.Tensor | None,
    *,
    fallback: SortedTopKTopP,
    candidates: int = 64,
) -> torch.Tensor:
    """Mask `logits` (rows x vocabulary, in place, like vLLM's) to each row's top-p nucleus.

    `fallback` is vLLM's sort-based `apply_top_k_top_p`: it takes the calls this shortcut does not cover
    (a top-k, no top-p) and the rows whose nucleus reaches past the candidates. Rows with p >= 1 are left
    whole: vLLM's sort would mask only tokens whose probability underflows to 0, which are never drawn.

    >>> logits = torch.tensor([[4.0, 3.0, 0.0, -1.0]])
    >>> out = top_p_from_candidates(logits, None, torch.tensor([0.5]), fallback=None, candidates=2)
    >>> out.isinf().tolist()
    [[False, True, True, True]]
    """
    if p is None or k is not None:
        return fallback(logits, k, p)
    width = min(candidates, logits.shape[-1])
    values, _ = logits.topk(width, dim=-1)  # descending
    log_total = logits.logsumexp(dim=-1, keepdim=True)
    probs = (values - log_total).exp()
    mass_above = probs.cumsum(dim=-1) - probs
    keep = mass_above < p.unsqueeze(dim=1).to(probs.dtype)
    whole = p >= 1.0
    inside = ~keep[:, -1] & ~whole  # the nucleus ends before the last candidate
    kept = keep.sum(dim=-1).clamp(min=1)
    threshold = values.gather(1, (kept - 1).unsqueeze(dim=1))
    rest = (~inside & ~whole).nonzero().flatten()
    # one in-place pass over the batch (copying the rows out and back cost as much as the mask): rows
    # masked elsewhere or left whole get a threshold of -inf, below which nothing lies
    floor = threshold.masked_fill(~inside.unsqueeze(dim=1), -float("inf"))
    logits.masked_fill_(logits < floor, -float("inf"))
    if rest.numel():
        logits[rest] = fallback(logits[rest], None, p[rest])
    return logits
