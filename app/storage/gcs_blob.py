"""A google-cloud-storage `Blob` that remembers when the object it downloaded was modified.

A download response already carries the object's generation (which the library copies
onto the blob) and its `Last-Modified` time (which it drops). Keeping both makes a read
one request whose content, generation and time all describe the same object version; a
metadata request followed by a download could straddle a concurrent write, and a hot
object could starve such reads. Imported only by `gcs` once the library is loaded.

`_extract_headers_from_download` is the library's hook for the headers of a download; it
is private, and no public API keeps the time. tests/storage/test_gcs.py fails, naming
this class, when an upgrade stops calling it.
"""

from __future__ import annotations

from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from google.cloud.storage import Blob


class TimedBlob(Blob):
    last_modified: datetime | None = None

    def _extract_headers_from_download(self, response: Any) -> None:
        # The library's hook for "headers of a download worth keeping"; we keep one more.
        super()._extract_headers_from_download(response)
        header = response.headers.get("Last-Modified")
        try:
            self.last_modified = parsedate_to_datetime(header) if header else None
        except (TypeError, ValueError):
            self.last_modified = None
