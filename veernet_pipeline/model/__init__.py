"""VeerNet: the segmentation net, its normalisation rule and its on-disk format."""

from veernet_pipeline.model.norms import group_count, group_norm
from veernet_pipeline.model.veernet import VeerNet, build_model, load_model, pad_to_multiple, save_model

__all__ = ["VeerNet", "build_model", "group_count", "group_norm", "load_model", "pad_to_multiple", "save_model"]
