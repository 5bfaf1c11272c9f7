"""Data files shipped with the package: `las/` holds the reduced wells the synthetic generator draws from."""
