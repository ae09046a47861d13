"""Claude's memory tool (`memory_20250818`), confined to one conversation's memory
(`scoped_tool` is its entry; docs/interface.md, "The memory tool")."""
