"""The Dagster code location for veernet-pipeline: thin assets over `veernet_pipeline.stages`."""
