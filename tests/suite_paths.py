"""Where things are, for tests that read the repository or another folder's fixtures (imported by
name: tests/conftest.py puts every test folder on sys.path)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DOCS = ROOT / "docs"
SAMPLE_PLUGINS = TESTS / "plugins" / "samples"  # real plugin files loaded with -e PATH
VENDOR_FIXTURES = TESTS / "conformance" / "vendor" / "fixtures"  # the project's own SSE fixtures
