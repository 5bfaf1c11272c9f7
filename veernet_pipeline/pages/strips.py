"""Ingest's worker step for a whole-log page: decode it once, cut its track strips, write each as a scan.

`io.ingest` hands a file to `page_step` instead of the ordinary header and decode steps when a
layout applies to it (`pages.layout.find_layout`). It runs in the same worker processes, under the
same time and memory limits. The page's header is held to the pixel budget and the decodable
formats like any scan's, but not to the size bounds (a page is taller and longer than any strip);
each strip is. Each (section, track) strip (`pages.cut.cut_page`, rotate + slice, never resampled)
becomes one manifest row of its own:

- ``path`` ``<page>#<section>/<track>``; ``page_file`` the page's relative path; ``section``,
  ``track``; ``page_bounds`` its rows and columns on the stored page; ``page_strips`` how many
  strips the page gave;
- ``sha256`` a hash of the page's path and bytes, the strip's bounds and its calibration: a
  strip is identified by where it comes from (and the layout's skew), so a copy of a page under another name (another
  well, as `pages.assemble` names LAS files after the page) is not a duplicate, and an edited
  layout is a new strip;
- width, height from the strip (landscape, depth left to right); bits, compression and the
  other header fields from the page, so validation holds a strip to the same rules as a scan;
- ``decoded`` ``scans/<sha256[:16]>.tif`` (RGB when the page is a colour print, as `io.scanfile.decode_step`
  keeps a colour scan, gray otherwise) and ``calibration`` ``scans/<sha256[:16]>.calib.json``
  beside it (relative to the ingested folder, not the archive: `io.manifest.sidecar_path`),
  written only for a strip within the size bounds on the net's grid (``net_width``, ``net_height``:
  `ReadRules.net_fields`, from the page's resolution tags) of a page within the
  bit depth and page count bounds (`ReadRules.declines_format`); any other strip keeps its row
  and validation quarantines it with the bound it missed.

A layout that cannot be used (malformed, placeholders left, does not fit the page) gives one row
for the page, ``bad_layout``, naming the field.

This module is imported by every worker: it must not import torch or pandas.
"""
# (`io.manifest` imports pandas: the scans folder's name comes in as an argument.)

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from veernet_pipeline.io.calibration import CalibrationError
from veernet_pipeline.io.scan_errors import BAD_LAYOUT, UNSUPPORTED, ScanReadError
from veernet_pipeline.io.scanfile import ReadRules, failure_fields, header_fields, image_statistics, write_decoded
from veernet_pipeline.io.tiff import TiffHeader, check_budget, decode_colour, read_header, unsupported_reason
from veernet_pipeline.pages.cut import Strip, cut_page
from veernet_pipeline.pages.layout import LayoutError, Skew, load_layout
from veernet_pipeline.provenance import file_sha256

CALIBRATION_SUFFIX = ".calib.json"


def strip_path(page: str, strip: Strip) -> str:
    """A strip's manifest ``path``: the page's relative path, ``#``, section and track."""
    return f"{page}#{strip.section.name}/{strip.track.name}"


def strip_sha256(page: str, page_sha256: str, strip: Strip, skew: Skew | None) -> str:
    """The strip's identity (module docstring; the layout's skew moves its pixels too), as 64 hex digits."""
    identity = {"page": page, "sha256": page_sha256, "section": strip.section.model_dump(),
                "track": strip.track.model_dump(), "calibration": strip.calibration.to_dict(),
                "skew": skew.model_dump() if skew else None}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def strip_dpi(page: TiffHeader) -> tuple[float, float] | None:
    """The resolution tags (across, down) of a page's strips: a strip turns the stored page's rows into its columns
    (`pages.cut.cut_strip`), so its across is the page's down."""
    return None if page.dpi is None else (page.dpi[1], page.dpi[0])


def _strip_fields(rel: str, page_sha256: str, strip: Strip, skew: Skew | None, count: int, out_dir: Path,
                  scans: str, rules: ReadRules, declined: bool, dpi: tuple[float, float] | None) -> dict[str, Any]:
    sha = strip_sha256(rel, page_sha256, strip, skew)
    height, width = strip.image.shape
    # The strip is written with the tags `dpi` (across, down): it reads at (down, across) along (rows, columns).
    net = rules.net_fields(height, width, None if dpi is None else (dpi[1], dpi[0]))
    fields: dict[str, Any] = {
        "path": strip_path(rel, strip), "sha256": sha, "bytes": int(strip.image.nbytes), "width": width,
        "height": height, **net, "rotated": True, "page_file": rel, "section": strip.section.name,
        "track": strip.track.name, "page_strips": count,
        "page_bounds": f"rows {strip.section.top_row}-{strip.section.bottom_row}, "
                       f"columns {strip.track.left}-{strip.track.right}"}
    if declined or rules.declines_size(net["net_width"], net["net_height"]):
        return fields
    decoded = f"{scans}/{sha[:16]}.tif"
    calibration = f"{scans}/{sha[:16]}{CALIBRATION_SUFFIX}"
    # Named by identity, which covers the pixels' source and the sidecar: an existing file holds these bytes.
    if not (out_dir / decoded).is_file():
        write_decoded(out_dir / decoded, strip.image, strip.rgb, dpi)  # the page's resolution (inference resamples)
    if not (out_dir / calibration).is_file():
        strip.calibration.write(out_dir / calibration)
    fields.update(decoded=decoded, calibration=calibration,
                  calibration_sha256=file_sha256(out_dir / calibration)[0], **image_statistics(strip.image))
    return fields


def page_step(path: str, rel: str, out_dir: str, scans: str, rules: ReadRules) -> dict[str, Any]:
    """Hash, check, decode and cut one page; write its strips and their sidecars into `out_dir/scans`.

    Returns:
        ``{"strips": [manifest fields per strip]}`` (the page's header fields in each), or the
        error columns for the page (``bad_layout`` for a layout that cannot be used).
    """
    try:
        sha, size = file_sha256(path)
        header = read_header(path)
        check_budget(header, path, rules.max_pixels)
        reason = unsupported_reason(header)
        if reason:
            raise ScanReadError(path, UNSUPPORTED, reason)
        layout = load_layout(Path(path))
        if layout is None:
            raise LayoutError(f"{path}: its layout file is gone; run ingest again")
        image, rgb = decode_colour(path, rules.max_pixels)
        # decode_colour turns a portrait page by np.rot90(k=1); the layout speaks of the page as stored.
        strips = cut_page(image, layout, "decoded" if header.rotated else "stored", rel, rgb)
        declined = rules.declines_format(header)  # the page's bits or pages: validation rejects every strip
        rows = [{**header_fields(header), **_strip_fields(rel, sha, s, layout.skew, len(strips), Path(out_dir), scans,
                                                          rules, declined, strip_dpi(header))} for s in strips]
        return {"strips": rows, "sha256": sha, "bytes": size}
    except (LayoutError, CalibrationError) as exc:
        # A strip's sidecar comes from the layout, so its calibration error is the layout's too.
        # The layout's message names its files by absolute path; the manifest names them inside the archive.
        where = str(exc).replace(str(Path(path).parent), Path(rel).parent.as_posix())
        return {"error_code": BAD_LAYOUT, "error_message": f"{rel}: {where}"}
    except Exception as exc:  # noqa: BLE001 - every failure of a page is a row, whatever raised it
        return failure_fields(rel, exc)
