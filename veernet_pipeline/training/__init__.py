"""Training: synthetic-set loading, masked Tversky loss, the epoch loop, checkpoints and stage recipes."""

from veernet_pipeline.training.recipes import train_stage

__all__ = ["train_stage"]
