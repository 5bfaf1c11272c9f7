"""Small real nets the reading and inference tests run: no mocks, just tiny modules with known outputs."""

from __future__ import annotations

import torch
from torch import nn

from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import NUM_CLASSES
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
