"""Edits a user makes to a clone, and the stages each must re-run: what the code-change tests share."""

from __future__ import annotations

from pathlib import Path

# Every stage in pipeline order, as dvc.yaml and the Dagster assets name them.
STAGES = ["ingest", "validate", "synthesize", "train_binary", "train_multiclass", "evaluate", "infer", "review_queue"]
# The renderer feeds synthesize; ingest and validate read the archive, not synthetic data.
DOWNSTREAM_OF_RENDERER = STAGES[2:]
# A new artefact random stream: every synthetic image comes out different, so everything after it must too.
RENDER_EDIT = ("STYLE_STREAM, LAYOUT_STREAM, SKEW_STREAM, ARTEFACT_STREAM = 1, 2, 3, 4",
               "STYLE_STREAM, LAYOUT_STREAM, SKEW_STREAM, ARTEFACT_STREAM = 1, 2, 3, 5")


def edit_docs(clone: Path) -> None:
    """Append a line to the README: no stage's code, params or inputs change."""
    with (clone / "README.md").open("a") as fh:
        fh.write("\nA line an operator added to the docs.\n")


def edit_renderer(clone: Path) -> None:
    """Change the renderer's artefact stream: every synthetic image, and so everything after it, changes."""
    render = clone / "veernet_pipeline" / "synthetic" / "render.py"
    text = render.read_text()
    assert RENDER_EDIT[0] in text, "the renderer's stream constants moved; update RENDER_EDIT in tests/edits.py"
    render.write_text(text.replace(*RENDER_EDIT))
