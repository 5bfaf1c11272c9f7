"""Reading one scan strip into curves, the step evaluation and inference share.

`predict` (tiled class probabilities at native resolution) -> `styles` (which curves to read: the
sidecar's by line style, or as many as the map supports) -> `extract` (paths over the `candidates`
runs of ink, searched by `paths`, that keep each curve's identity and follow steep strokes) ->
`values` (pixel rows -> calibrated values, backup scales unwrapped); `picture` draws what was read
over the scan. Evaluation scores these readings and inference writes them as LAS; both import
this package, and it imports neither. Design: docs/reading.md.
"""
