"""How the memory tool renders a file and a directory for the model: the SDK reference
implementation's formats, restated (they are private to the SDK) and held to it by
tests/memory/tool/test_reference_parity.py; a directory is a key prefix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.memory.tool.errors import MemoryToolError
from app.storage.store import ObjectInfo

# The reference lists a directory's children and grandchildren, no deeper.
LISTING_DEPTH = 2
# The reference's limit on a viewed file, and the width of its line numbers.
MAX_LINES = 999_999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
_SIZE_UNITS = ("B", "K", "M", "G")


def split_lines(content: str) -> list[str]:
    """Lines split on LF only (a CR stays in its line), without the empty tail a final
    newline leaves — as the reference splits a file it edits."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def file_size(size: int) -> str:
    """`du -h`-like size as the reference prints it: 0B, 512B, 1K, 1.5K, 2.0M..."""
    if size == 0:
        return "0B"
    unit = min((size.bit_length() - 1) // 10, len(_SIZE_UNITS) - 1)
    scaled = size / 1024**unit
    shown = f"{int(scaled)}" if scaled == int(scaled) else f"{scaled:.1f}"
    return f"{shown}{_SIZE_UNITS[unit]}"


def numbered_line(number: int, line: str) -> str:
    return f"{str(number).rjust(LINE_NUMBER_WIDTH)}\t{line}"


def render_file(path: str, content: str, view_range: Sequence[int] | None) -> str:
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise MemoryToolError(f"File {path} exceeds maximum line limit of {MAX_LINES:,} lines.")
    first = 1
    if view_range and len(view_range) == 2:
        # Same slicing as the reference: 1-based start clamped to 1, end inclusive,
        # -1 meaning "to the end"; an empty range shows no lines rather than failing.
        first = max(1, view_range[0])
        end = len(lines) if view_range[1] == -1 else view_range[1]
        lines = lines[first - 1 : end]
    numbered = [numbered_line(first + offset, line) for offset, line in enumerate(lines)]
    return f"Here's the content of {path} with line numbers:\n" + "\n".join(numbered)


def render_directory(path: str, directory_key: str, objects: Iterable[ObjectInfo]) -> str:
    """List `objects` (all under `directory_key`) as the reference lists a directory, on `path`
    without its trailing '/' (the reference's `/memories//x` is a path `to_key` rightly refuses)."""
    prefix = f"{directory_key}/" if directory_key else ""
    total = 0
    sizes: dict[tuple[str, ...], int] = {}  # entry components (+ "/" marker for dirs)
    for obj in objects:
        parts = obj.key[len(prefix) :].split("/")
        if any(part.startswith(".") for part in parts):
            continue  # hidden items are excluded, as in the reference
        total += obj.size
        for depth in range(1, min(len(parts), LISTING_DEPTH) + 1):
            is_dir = depth < len(parts)
            entry = (*parts[:depth], "/") if is_dir else tuple(parts[:depth])
            sizes[entry] = sizes.get(entry, 0) + obj.size
    base = path.rstrip("/") or path
    lines = [f"{file_size(total)}\t{path}"]
    # Sorting by components puts each directory right before its own children, and
    # siblings in name order: the reference's depth-first walk.
    for entry in sorted(sizes, key=lambda entry: tuple(part for part in entry if part != "/")):
        relative = "/".join(part for part in entry if part != "/")
        suffix = "/" if entry[-1] == "/" else ""
        lines.append(f"{file_size(sizes[entry])}\t{base}/{relative}{suffix}")
    header = (
        f"Here're the files and directories up to {LISTING_DEPTH} levels deep in {path}, "
        "excluding hidden items:"
    )
    return f"{header}\n" + "\n".join(lines)
