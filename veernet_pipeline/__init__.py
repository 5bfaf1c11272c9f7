"""veernet-pipeline: scanned raster well logs to LAS curves with VeerNet."""

__version__ = "0.1.0"
