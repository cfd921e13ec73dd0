"""``read_config_text`` (models.json, auth.json) reads what ``read_text("utf-8-sig")`` reads, without
importing that codec: a leading BOM dropped, universal newlines, and for bytes that are no UTF-8
the very same error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from atomic_host.core.models.auth_store import read_config_text

SAMPLES = [
    b"",
    b'{"providers": {}}',
    b'\xef\xbb\xbf{"a": 1}\r\n',
    b'\xef\xbb\xbf\xef\xbb\xbf{"twice": true}',  # only the first BOM is dropped
    b'{\r\n  "crlf": "\xc3\xa9"\r\n}\r',
    b'{\r"mac": 1\r}\n\n',
    b'  "\xe2\x80\xa8 text after \xef\xbb\xbf a BOM inside"  ',
]


@pytest.mark.parametrize("data", SAMPLES)
def test_reads_what_read_text_utf8_sig_reads(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "models.json"
    path.write_bytes(data)
    assert read_config_text(path) == path.read_text("utf-8-sig")


def test_bytes_that_are_no_utf8_raise_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_bytes(b'\xef\xbb\xbf{"key": "\xff"}')
    with pytest.raises(UnicodeDecodeError) as ours:
        read_config_text(path)
    with pytest.raises(UnicodeDecodeError) as theirs:
        path.read_text("utf-8-sig")
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(FileNotFoundError):
        read_config_text(tmp_path / "missing.json")


def test_the_codec_module_is_not_imported(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_bytes(b'\xef\xbb\xbf{"providers": {}}')
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from atomic_host.core.models.auth_store import read_config_text\n"
        f"print(read_config_text(Path({str(path)!r})), 'encodings.utf_8_sig' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ['{"providers":', "{}}", "False"]
