"""Small real nets the reading and inference tests run: no mocks, just tiny modules with known outputs."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.model.veernet import build_model


class InkIsCurve(nn.Module):
    """A real per-pixel net (1x1 conv): dark ink -> curve logit +10, paper -> -10.

    Its output at a pixel depends on that pixel only, so any stitching error (a shifted or
    missing column) changes the result; and it digitises a drawn line exactly.
    """

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Conv2d(1, 1, kernel_size=1)
        with torch.no_grad():
            self.head.weight.fill_(-20.0)
            self.head.bias.fill_(10.0)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(x)


def untrained_veernet(settings: Settings, num_classes: int) -> nn.Module:
    torch.manual_seed(settings.seed)
    return build_model(settings.model, num_classes).eval()


class InkIsStyle(nn.Module):
    """A real per-pixel net (1x1 conv) on the style classes: dark ink -> one style class, paper -> background.

    Seven logit maps (io.classes): background +10 on paper and -10 on ink, `style_class` the other
    way round, every other class -10. It reads drawn lines of that style exactly, whatever their count.
    """

    def __init__(self, style_class: int) -> None:
        super().__init__()
        self.head = nn.Conv2d(1, NUM_CLASSES, kernel_size=1)
        with torch.no_grad():
            self.head.weight.zero_()
            self.head.bias.fill_(-10.0)
            for cls, sign in ((0, 1.0), (style_class, -1.0)):
                self.head.weight[cls].fill_(20.0 * sign)
                self.head.bias[cls] = -10.0 * sign

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(x)


class DashIsLong(nn.Module):
    """A real net that names ink by its run length along depth, as VeerNet partly does: runs of at least
    `min_dash` columns are dashed, shorter ones dotted, paper background (logits +-10)."""

    def __init__(self, min_dash: int) -> None:
        super().__init__()
        self.min_dash = min_dash

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        length = self.min_dash
        ink = (x < 0.5).float()
        # Window j of the padded row covers columns j - length + 1 .. j: full where every one is ink.
        full = (F.avg_pool2d(F.pad(ink, (length - 1, length - 1)), (1, length), stride=1) > 1 - 1e-6).float()
        long = F.max_pool2d(full, (1, length), stride=1)  # a column inside any full window
        logits = torch.full((x.shape[0], NUM_CLASSES, *x.shape[2:]), -10.0, dtype=x.dtype, device=x.device)
        logits[:, 0] = 10.0 - 20.0 * ink[:, 0]
        logits[:, style_class("dashed")] = -10.0 + 20.0 * (ink * long)[:, 0]
        logits[:, style_class("dotted")] = -10.0 + 20.0 * (ink * (1.0 - long))[:, 0]
        return logits
