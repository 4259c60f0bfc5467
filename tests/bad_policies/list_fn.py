"""A list function trim(messages) that keeps the last two messages."""


def trim(messages):
    return messages[-2:]
