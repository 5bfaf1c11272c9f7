"""Which scans are read resampled to the net's resolution, and the size they have there.

The net learnt its strokes at one scale, the generator's 200 dpi (`reading.resolution` reads a scan
on that grid). A scan is resampled when its TIFF states a resolution (`io.tiff.TiffHeader.dpi`)
unlike the net's, `infer.net_dpi`. It is read as it is when it states none, one within `TOLERANCE`
of the net's, or one below `MIN_SCANNER_DPI` on either axis other than a fax page's 98 lines per
inch: image software writes 72, 96 or 100 dpi (matplotlib's figure dpi, a renderer's 64) where it
knows none, and no scanner of logs works there.

Ingest holds a scan's size to the `validate:` bounds on this grid too (`net_size`): a 300-dpi scan
of a 996-px track is 1,494 px tall as stored, and the net reads it at 996.
"""

from __future__ import annotations

# Resolutions within this share of the net's are read as they are (a 204 x 196 dpi fax page at 200).
TOLERANCE = 0.1
# Below this a stated resolution is image software's default, not a scanner's (logs are scanned at 150-600).
MIN_SCANNER_DPI = 150.0
# A fax page in normal mode: 98 lines per inch, 204 dots per inch along each line (either may be a landscape
# image's rows, as the page was turned).
FAX_NORMAL = (98.0, 204.0)


def net_scale(dpi: tuple[float, float] | None, net_dpi: float | None) -> tuple[float, float]:
    """Net pixels per scan pixel along (rows, columns): 1 where the resolution is unknown or close to the net's.

    Args:
        dpi: the scan's resolution along (rows, columns) of the landscape image (`TiffHeader.landscape_dpi`).
        net_dpi: the resolution the net was trained at (params.yaml `infer.net_dpi`); None = never resample.
    """
    if dpi is None or net_dpi is None or not (min(dpi) >= MIN_SCANNER_DPI or _is_fax_normal(dpi)):
        return 1.0, 1.0
    rows, columns = (net_dpi / d for d in dpi)
    return (1.0 if abs(rows - 1.0) <= TOLERANCE else rows, 1.0 if abs(columns - 1.0) <= TOLERANCE else columns)


def _is_fax_normal(dpi: tuple[float, float]) -> bool:
    """98 x 204 dpi either way round (a portrait fax page is turned to landscape), within `TOLERANCE`."""
    return any(all(abs(d / f - 1.0) <= TOLERANCE for d, f in zip(pair, FAX_NORMAL, strict=True))
               for pair in (dpi, dpi[::-1]))


def net_size(height: int, width: int, scale: tuple[float, float]) -> tuple[int, int]:
    """(height, width) of a landscape image of `height` x `width` px resampled by `scale` (`net_scale`):
    each side rounded to whole pixels, at least 1."""
    return max(1, round(height * scale[0])), max(1, round(width * scale[1]))
