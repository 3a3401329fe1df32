"""The run's stop rules besides the scorer's own (kept free of numba: configs import them)."""

from __future__ import annotations

import attrs


def _not_bool(_inst, attribute, value):
    if isinstance(value, bool):  # TOML true is an int to Python; a count it is not
        raise TypeError(f"'{attribute.name}' must be an integer, got {value!r}")


@attrs.frozen(kw_only=True)
class Limits:
    """A dictionary-size cap and a minimum pair count (pairs seen fewer times never merge)."""

    max_rules: int | None = attrs.field(
        default=None,
        validator=attrs.validators.optional([_not_bool, attrs.validators.instance_of(int), attrs.validators.ge(0)]),
    )
    min_count: int = attrs.field(
        default=1, validator=[_not_bool, attrs.validators.instance_of(int), attrs.validators.ge(1)]
    )
