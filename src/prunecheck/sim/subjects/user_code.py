"""Finding user code by name: the one place a module or ``file.py`` is
imported and an attribute looked up in it.

Policies, list functions, runtimes under test and the objects a framework
adapter's settings name (``processor=my_trim.py:keep_last``) are all found
here, with the same rules and the same errors: a file is imported as
``python FILE`` would (its folder on ``sys.path``, so its siblings import),
once per process; a module is imported by name.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.cage_wire import where_raised
from prunecheck.sim.subjects.policy_spec import is_file_reference

__all__ = ["find_object", "import_where"]


def import_where(where: str, subject: str) -> object:
    """The module ``where`` names: a file path or a module name.

    Raises
    ------
    PolicyError
        about ``subject`` if the file is missing or the import fails.
    """
    if is_file_reference(where):
        return _import_file(where, subject)
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise PolicyError(
            subject,
            f"module {where!r} cannot be imported ({exc}).",
            "is it installed, or is the current directory on "
            "PYTHONPATH? A file path (my_policy.py:select) also works.",
        ) from None
    except Exception as exc:
        raise PolicyError(
            subject, f"importing {where} raised {type(exc).__name__}: {exc}{where_raised(exc)}."
        ) from None


def _import_file(where: str, subject: str) -> object:
    path = Path(where)
    if not path.is_file():
        raise PolicyError(
            subject,
            f"file {where} does not exist.",
            "give a path relative to the current directory.",
        )
    # keyed by path and content: a file changed since it was imported is imported anew
    try:
        content = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        content = "unread"
    name = f"prunecheck_user_{abs(hash(str(path.resolve())))}_{content}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise PolicyError(subject, f"{where} cannot be imported as Python.")
    module = importlib.util.module_from_spec(loader_spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # as 'python FILE' does: its siblings import
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PolicyError(
            subject,
            f"importing {where} raised {type(exc).__name__}: {exc}{where_raised(exc)}.",
            "fix the file so that 'python FILE' runs.",
        ) from None
    return module


def find_object(
    where: str, attr: str, subject: str, *, import_subject: str | None = None
) -> object:
    """The object ``attr`` (dotted) names in the module or file ``where``.

    Raises
    ------
    PolicyError
        about ``subject`` if the attribute is missing, about
        ``import_subject`` (default ``subject``) if the import fails.
    """
    obj = import_where(where, import_subject or subject)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PolicyError(
                subject, f"{where} has no attribute {attr!r}.", "check the name after the colon."
            )
        obj = getattr(obj, part)
    return obj
