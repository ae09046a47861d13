"""Answering a message, the same in both experiences: the retry claim, the memory kept with a
thread, the streamed reply, how Orion shows it is working, the greeting and the feedback buttons."""
