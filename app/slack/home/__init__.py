"""The Home tab: what Orion keeps about the person looking at it, and its memory
controls (Forget one thing, Forget everything, Download), the same in both experiences."""
