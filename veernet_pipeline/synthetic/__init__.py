"""Synthetic training data: track strips rendered from real or procedural curves, with exact masks."""
