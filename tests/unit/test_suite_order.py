"""The suite's own scheduling: the files `make test` starts first exist under the names it gives."""

from __future__ import annotations

from tests.conftest import REPO, SLOWEST_FIRST


def test_every_slowest_first_name_is_a_test_file() -> None:
    # A renamed file would silently drop back to its alphabetical place and could again start last.
    files = {path.name for path in (REPO / "tests").rglob("test_*.py")}
    assert [name for name in SLOWEST_FIRST if name not in files] == []
