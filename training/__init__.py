"""Train a PRM from a dataset version on transformers and accelerate, and score chains with it.

rows (which chains and labels) -> layout (tokens and label positions, with the alignment check) -> model
(head, loss) -> trainer (accelerate loop, checkpoints, evaluation) -> card; scorer reads a checkpoint back.
"""
