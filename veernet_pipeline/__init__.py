"""veernet-pipeline."""
