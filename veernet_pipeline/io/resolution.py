"""Which scans are read resampled to the net's resolution, and the size they have there.

The net learnt its strokes at one scale, the generator's 200 dpi (`reading.resolution` reads a scan
on that grid). A scan is resampled when its TIFF states a resolution (`io.tiff.TiffHeader.dpi`)
unlike the net's, `infer.net_dpi`. It is read as it is when it states none, one within `TOLERANCE`
of the net's, or one below `MIN_SCANNER_DPI` on either axis other than a fax page's 98 lines per
inch: image software writes 72, 96 or 100 dpi (matplotlib's figure dpi, a renderer's 64) where it
knows none, and no scanner of logs works there. An archive known to be scanned at one resolution
whose files do not say so takes it from `infer.untagged_dpi` instead (`Resampling`), so its files
need not be re-tagged in place.

Ingest holds a scan's size to the `validate:` bounds on this grid too (`net_size`): a 300-dpi scan
of a 996-px track is 1,494 px tall as stored, and the net reads it at 996.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Resolutions within this share of the net's are read as they are (a 204 x 196 dpi fax page at 200).
TOLERANCE = 0.1
# Below this a stated resolution is image software's default, not a scanner's (logs are scanned at 150-600).
MIN_SCANNER_DPI = 150.0
# A fax page in normal mode: 98 lines per inch, 204 dots per inch along each line (either may be a landscape
# image's rows, as the page was turned).
FAX_NORMAL = (98.0, 204.0)


@dataclass(frozen=True)
class Resampling:
    """How scans are put on the net's grid: params.yaml's ``infer.net_dpi`` and ``infer.untagged_dpi``.

    The default resamples nothing: every scan is read, and held to the size bounds, at its own pixels.
    """

    net_dpi: float | None = None
    untagged_dpi: float | None = None

    @classmethod
    def from_params(cls, infer: Any) -> Resampling:
        """From the ``infer:`` section (`config.InferParams`)."""
        return cls(infer.net_dpi, infer.untagged_dpi)

    def scale(self, dpi: tuple[float, float] | None) -> tuple[float, float]:
        """`net_scale` of a scan whose tags give `dpi` along (rows, columns)."""
        return net_scale(dpi, self.net_dpi, self.untagged_dpi)

    def notes(self, dpi: tuple[float, float] | None) -> list[str]:
        """The LAS header's note for a scan read at the assumed `untagged_dpi`; none for any other scan."""
        if scanner_dpi(dpi) is None and self.scale(dpi) != (1.0, 1.0):
            return [f"the scan states no resolution: read as {self.untagged_dpi:g} dpi (infer.untagged_dpi)"]
        return []


# No resampling: every scan read, and held to the size bounds, at its own pixels.
AS_STORED = Resampling()


def net_scale(dpi: tuple[float, float] | None, net_dpi: float | None,
              untagged_dpi: float | None = None) -> tuple[float, float]:
    """Net pixels per scan pixel along (rows, columns): 1 where the resolution is unknown or close to the net's.

    Args:
        dpi: the scan's resolution along (rows, columns) of the landscape image (`TiffHeader.landscape_dpi`).
        net_dpi: the resolution the net was trained at (params.yaml `infer.net_dpi`); None = never resample.
        untagged_dpi: the resolution taken for a scan that states none, or only image software's
            (params.yaml `infer.untagged_dpi`); None = such a scan is read as it is.
    """
    dpi = scanner_dpi(dpi)
    if dpi is None and untagged_dpi is not None:
        dpi = (untagged_dpi, untagged_dpi)
    if dpi is None or net_dpi is None:
        return 1.0, 1.0
    rows, columns = (net_dpi / d for d in dpi)
    return (1.0 if abs(rows - 1.0) <= TOLERANCE else rows, 1.0 if abs(columns - 1.0) <= TOLERANCE else columns)


def scanner_dpi(dpi: tuple[float, float] | None) -> tuple[float, float] | None:
    """`dpi` if a scanner's (at least `MIN_SCANNER_DPI` on both axes, or a fax page's), else None: image
    software's 72-100 dpi state no resolution."""
    return dpi if dpi is not None and (min(dpi) >= MIN_SCANNER_DPI or _is_fax_normal(dpi)) else None


def _is_fax_normal(dpi: tuple[float, float]) -> bool:
    """98 x 204 dpi either way round (a portrait fax page is turned to landscape), within `TOLERANCE`."""
    return any(all(abs(d / f - 1.0) <= TOLERANCE for d, f in zip(pair, FAX_NORMAL, strict=True))
               for pair in (dpi, dpi[::-1]))


def net_size(height: int, width: int, scale: tuple[float, float]) -> tuple[int, int]:
    """(height, width) of a landscape image of `height` x `width` px resampled by `scale` (`net_scale`):
    each side rounded to whole pixels, at least 1."""
    return max(1, round(height * scale[0])), max(1, round(width * scale[1]))
