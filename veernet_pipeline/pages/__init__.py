"""Whole-log pages: the layout contract, lossless cutting into track strips, layout detection, per-well LAS."""
