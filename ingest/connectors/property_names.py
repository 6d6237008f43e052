"""The first check of every connector's properties: the names. One ConfigError lists every unknown name (with
the closest known one: properties copied from another connector's example usually differ by a word) and
every missing required one, so that a user fixes them in one pass instead of one run per mistake."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ingest.errors import ConfigError


def check_property_names(connector: str, props: Mapping[str, Any], known: Collection[str],
                         required: Iterable[str] | Mapping[str, str] = (), *, ignored_prefixes: tuple[str, ...] = (),
                         unsupported_prefixes: tuple[str, ...] = ()) -> None:
    """Raise one ConfigError naming every problem with the property names of a `connector` source: names
    neither known nor under an ignored prefix, names under a prefix lakecdc does not support, required
    names missing or empty (`required` as a mapping: name -> what to put there)."""
    problems = []
    for key in props:
        if unsupported_prefixes and key.startswith(unsupported_prefixes):
            problems.append(f"{key!r} is a Debezium property that is not supported by this connector")
        elif key not in known and not (ignored_prefixes and key.startswith(ignored_prefixes)):
            close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
            problems.append(f"unknown property {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    hints = required if isinstance(required, Mapping) else dict.fromkeys(required, "")
    problems += [f"required property {key!r} is missing" + (f" ({hint})" if hint else "")
                 for key, hint in hints.items() if props.get(key) in (None, "")]
    if problems:
        raise ConfigError(f"{connector}: " + "; ".join(problems))
