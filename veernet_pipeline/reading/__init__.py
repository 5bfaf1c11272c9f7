"""Reading one scan strip into curves, the step evaluation and inference share.

`predict` (tiled class probabilities at native resolution) -> `extract` (a joint path that keeps
each curve's identity) -> `values` (pixel rows -> calibrated values, backup scales unwrapped);
`picture` draws what was read over the scan. Evaluation scores these readings and inference
writes them as LAS; both import this package, and it imports neither.
"""
