"""Train a small process reward model from the storage feed, then score it on a held-out split.

The model: a frozen SmolLM2 (the factory's embedded default, or any local causal LM) reads the problem and the
chain up to step k; a linear head on the last token's hidden state predicts the step's label (hard label by
default). Because the language model is frozen, each step prefix is encoded once and cached; training then
streams steps from `training.feed.StepFeed` for `--steps` optimiser steps, looking the features up by step id.

The held-out split is by problem (a stable hash of problem_id), so no problem is seen in training. Reported on
it, next to two trivial baselines (always "correct", and the training split's majority label):

- step accuracy over labelled steps;
- first-error F1 as ProcessBench computes it: the harmonic mean of the accuracy on chains with an error
  (the predicted first error, the first step scored below 0.5, must be exactly the labelled one) and the
  accuracy on chains without one (no step may be predicted wrong).

    python examples/train_prm.py --dataset prm-datasets/default --steps 300
    python examples/train_prm.py --dataset prm-datasets/default --model /path/to/checkpoint --label verifier

A dataset of a few hundred steps (the default demo run) makes these numbers noisy: the script prints the split
sizes so they can be read for what they are.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from prm_factory.storage.dataset import Dataset  # noqa: E402
from prm_factory.storage.sql import query  # noqa: E402
from prm_factory.training.feed import StepFeed  # noqa: E402

LABEL_COLUMNS = {"hard": "hard_label", "verifier": "verdict", "consensus": "consensus"}


def is_held_out(problem_id: str, fraction: float) -> bool:
    return int(hashlib.sha256(problem_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < fraction


def load_steps(dataset: Dataset, version: int | None, label: str) -> list[dict]:
    """Steps with their problem text and label (True / False / None), ordered by chain and step index."""
    label_sql = {
        "hard": "s.hard_label",
        "verifier": "CASE s.verdict WHEN 'correct' THEN true WHEN 'incorrect' THEN false END",
        "consensus": "CASE s.consensus WHEN 'positive' THEN true WHEN 'negative' THEN false END",
    }[label]
    sql = f"""
        SELECT s.step_id, s.chain_id, s.problem_id, s.step_index, s.text, p.text AS problem,
               {label_sql} AS label
        FROM steps AS s JOIN problems AS p USING (problem_id)
        ORDER BY s.chain_id, s.step_index
    """
    return query(dataset, sql, version).to_pylist()


@torch.no_grad()
def encode_prefixes(steps: list[dict], model_path: Path, max_tokens: int) -> dict[str, torch.Tensor]:
    """Last-token hidden state of "problem + steps[0..k]" for every step, with the frozen language model."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
    features: dict[str, torch.Tensor] = {}
    prefix: list[str] = []
    current_chain = None
    for step in steps:
        if step["chain_id"] != current_chain:
            current_chain, prefix = step["chain_id"], []
        prefix.append(step["text"])
        text = step["problem"] + "\n" + "\n".join(prefix)
        ids = tokenizer(text, return_tensors="pt", truncation=False)["input_ids"][:, -max_tokens:]
        hidden = model(input_ids=ids, output_hidden_states=True).hidden_states[-1]
        features[step["step_id"]] = hidden[0, -1].clone()
    return features


def first_error(labels: list[bool]) -> int | None:
    return next((index for index, positive in enumerate(labels) if not positive), None)


def evaluate(chains: dict[str, list[tuple[bool, bool]]]) -> dict[str, float]:
    """Step accuracy and ProcessBench first-error F1 from per-chain (gold, predicted) step labels."""
    pairs = [pair for chain in chains.values() for pair in chain]
    accuracy = sum(gold == predicted for gold, predicted in pairs) / max(1, len(pairs))
    erroneous = [c for c in chains.values() if first_error([g for g, _ in c]) is not None]
    clean = [c for c in chains.values() if first_error([g for g, _ in c]) is None]
    err_acc = sum(first_error([g for g, _ in c]) == first_error([p for _, p in c]) for c in erroneous)
    clean_acc = sum(first_error([p for _, p in c]) is None for c in clean)
    err_rate = err_acc / len(erroneous) if erroneous else 0.0
    clean_rate = clean_acc / len(clean) if clean else 0.0
    f1 = 2 * err_rate * clean_rate / (err_rate + clean_rate) if err_rate + clean_rate else 0.0
    return {
        "step_accuracy": accuracy,
        "first_error_f1": f1,
        "erroneous_chains": len(erroneous),
        "clean_chains": len(clean),
    }


def labelled_prefix(steps: list[dict]) -> dict[str, list[dict]]:
    """Per chain, its steps up to the first unlabelled one (labels after a gap would be misaligned)."""
    chains: dict[str, list[dict]] = {}
    stopped: set[str] = set()
    for step in steps:
        chain = step["chain_id"]
        if chain in stopped:
            continue
        if step["label"] is None:
            stopped.add(chain)
            continue
        chains.setdefault(chain, []).append(step)
    return chains


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--version", type=int)
    parser.add_argument(
        "--model", type=Path, help="Local causal LM checkpoint (default: the embedded SmolLM2)."
    )
    parser.add_argument("--label", choices=sorted(LABEL_COLUMNS), default="hard")
    parser.add_argument("--steps", type=int, default=300, help="Optimiser steps.")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--held-out", type=float, default=0.3)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)

    dataset = Dataset(str(args.dataset))
    version = dataset.resolve_version(args.version)
    chains = labelled_prefix(load_steps(dataset, version, args.label))
    steps = [step for chain in chains.values() for step in chain]
    train_ids = {s["step_id"] for s in steps if not is_held_out(s["problem_id"], args.held_out)}
    label_of = {s["step_id"]: bool(s["label"]) for s in steps}
    print(
        f"dataset {args.dataset} version {version}: {len(chains)} chains, {len(steps)} labelled steps, "
        f"{len(train_ids)} for training, {len(steps) - len(train_ids)} held out ({args.label} labels)"
    )
    if not train_ids or len(train_ids) == len(steps):
        raise SystemExit(
            "need labelled steps on both sides of the split: adjust --held-out or grow the dataset"
        )

    if args.model is None:
        from prm_factory.sampling.model_prep import prepare_default_model

        args.model = prepare_default_model()
    started = time.perf_counter()
    features = encode_prefixes(steps, args.model, args.max_tokens)
    print(
        f"encoded {len(features)} step prefixes with the frozen model in "
        f"{time.perf_counter() - started:.1f} s"
    )

    dim = next(iter(features.values())).shape[0]
    train_matrix = torch.stack([features[i] for i in train_ids])
    mean, std = train_matrix.mean(0), train_matrix.std(0) + 1e-6
    head = torch.nn.Linear(dim, 1)
    optimiser = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=1e-2)
    positives = sum(label_of[i] for i in train_ids)
    pos_weight = torch.tensor((len(train_ids) - positives) / max(1, positives))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)

    feed = StepFeed(
        dataset, version=version, columns=["step_id"], batch_size=args.batch_size, shuffle_seed=args.seed
    )
    loader = DataLoader(feed, batch_size=None)
    done, epoch, losses = 0, 0, []
    while done < args.steps:
        feed.set_epoch(epoch)
        for batch in loader:
            ids = [i for i in batch["step_id"] if i in train_ids]
            if not ids:
                continue
            x = (torch.stack([features[i] for i in ids]) - mean) / std
            y = torch.tensor([float(label_of[i]) for i in ids])
            loss = loss_fn(head(x).squeeze(-1), y)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
            done += 1
            if done >= args.steps:
                break
        epoch += 1
    print(f"trained the head for {done} steps over {epoch} passes of the feed; last loss {losses[-1]:.3f}")

    majority = positives * 2 >= len(train_ids)
    results: dict[str, dict[str, list[tuple[bool, bool]]]] = {"prm": {}, "always correct": {}, "majority": {}}
    with torch.no_grad():
        for chain_id, chain in chains.items():
            held = [s for s in chain if s["step_id"] not in train_ids]
            if not held:
                continue
            x = (torch.stack([features[s["step_id"]] for s in held]) - mean) / std
            scores = torch.sigmoid(head(x).squeeze(-1)).tolist()
            gold = [label_of[s["step_id"]] for s in held]
            results["prm"][chain_id] = [(g, p >= 0.5) for g, p in zip(gold, scores, strict=True)]
            results["always correct"][chain_id] = [(g, True) for g in gold]
            results["majority"][chain_id] = [(g, majority) for g in gold]
    for name, per_chain in results.items():
        metrics = evaluate(per_chain)
        print(
            f"{name:>15}: step accuracy {metrics['step_accuracy']:.3f}, "
            f"first-error F1 {metrics['first_error_f1']:.3f} "
            f"({metrics['erroneous_chains']} chains with an error, {metrics['clean_chains']} without)"
        )


if __name__ == "__main__":
    main()
