"""A helper module imported by with_sibling.py."""


def oldest_first(view, need):
    out, freed = [], 0
    for m in view.messages:
        if freed >= need:
            break
        if m.role != "system":
            out.append(m.id)
            freed += m.tokens
    return out
