"""Validation of the ingest manifest: pandera row checks, a Great Expectations report, quarantine.

`validate.validate_manifest` is the stage entry point. It is not imported here because it pulls in
Great Expectations, which takes seconds to import; `quarantine` and `schema` stay light.
"""

import logging

# Great Expectations logs dozens of INFO lines while it imports and sets up a context. This package
# is imported before its `expectations` module, so raising the level here quiets the import too.
logging.getLogger("great_expectations").setLevel(logging.WARNING)
