"""What each config field takes, declared beside it and checked when a config is built.

Every field of every config component (:class:`~seed.config.run.Config`,
:class:`~seed.config.transport.TransportConfig`, the agents' settings) is annotated with
its type and, where it has them, its bounds, in pydantic's terms::

    discounting: Annotated[float, Field(ge=0, le=1)] = 0.99

or one of the names below (``Count``: an integer at least 1, ...). A component derives
:class:`Checked`, whose ``__post_init__`` checks every field against its declaration
(pydantic's :class:`~pydantic.TypeAdapter`, lax: ``"1e-3"`` is a number, ``2.0`` an
integer, ``"true"`` a boolean) and keeps the value it reads (``2.0`` becomes ``2``). A value
it does not take is refused in one line that names the key, the value and what is allowed
(:func:`allowed`), so a config built from a file, flags, ``--set``, a resume or a saved
``config.json`` holds only values of their declared type and bounds. Rules between fields
(a queue smaller than a batch) stay in each component's ``validate(run)``.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Collection
from typing import Annotated, Any, Literal

import annotated_types
import pydantic
from pydantic import Field, TypeAdapter
from pydantic_core import core_schema

from seed.config.errors import ConfigError

Count = Annotated[int, Field(ge=1)]  # at least one
CountOrZero = Annotated[int, Field(ge=0)]  # 0 where the field says what 0 means
Positive = Annotated[float, Field(gt=0)]  # rates, epsilons, intervals, timeouts
NonNegative = Annotated[float, Field(ge=0)]  # costs, budgets, limits where 0 means none
UnitInterval = Annotated[float, Field(ge=0, le=1)]  # probabilities, discounts, exponents
BelowOne = Annotated[float, Field(ge=0, lt=1)]  # decays and momenta: 1 would never forget
Kwargs = dict[str, Any]  # keyword arguments passed on (env_kwargs, network_kwargs)

# Lax reading (a YAML ``1e-3`` is a string, a port given to --set a number), no NaN or
# infinity anywhere.
_READING = pydantic.ConfigDict(allow_inf_nan=False, coerce_numbers_to_str=True)


class OneOf:
    """A name that must be in a registry, as it is when the value is checked (one a
    network registered later included): ``Annotated[str, OneOf(networks.REGISTRY)]``."""

    def __init__(self, registry: Collection[str]):
        self.registry = registry

    def __get_pydantic_core_schema__(self, source, handler):
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def _check(self, value: str) -> str:
        if value not in self.registry:
            raise ValueError("not a known name")
        return value


class Checked:
    """Base of a config component (a dataclass): checks its fields when it is built.

    A subclass (a registered agent's settings, say) gets its fields checked as declared;
    a field annotated ``float`` takes any finite number, ``int`` any integer.
    """

    def __post_init__(self):
        for name in _adapters(type(self)):
            setattr(self, name, self.read(name, getattr(self, name)))

    @classmethod
    def read(cls, name: str, value, key: str | None = None):
        """``value`` as field ``name`` declares it (``"2"`` for an integer: 2); a ConfigError
        naming the key (``key``, else :meth:`key`), the value and what is allowed if it is
        not one."""
        hint = _hints(cls)[name]
        try:
            if isinstance(value, bool) and _base_type(hint) in (int, float):
                raise ValueError("a boolean for a number")  # lax pydantic takes True as 1
            return _adapters(cls)[name].validate_python(value)
        except ValueError:  # pydantic's ValidationError among them
            raise ConfigError(refusal(key or cls.key(name), value, hint)) from None

    @classmethod
    def key(cls, name: str) -> str:
        """How a user writes field ``name`` of this component (``transport.server``)."""
        return name


def refusal(key: str, value, hint) -> str:
    """The one line that refuses ``value`` for ``key``, declared as ``hint``."""
    shown = value if isinstance(value, (int, float)) and not isinstance(value, bool) else (
        repr(value))
    return f"bad value for {key}: {shown} (allowed: {allowed(hint)})"


@functools.cache
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


@functools.cache
def _adapters(cls) -> dict[str, TypeAdapter]:
    """Field name -> the adapter that reads it, for every declared field of ``cls`` that is
    not a component of its own (``Config.transport`` checks itself)."""
    hints = _hints(cls)
    return {f.name: TypeAdapter(hints[f.name], config=_READING)
            for f in dataclasses.fields(cls) if not is_component(hints[f.name])}


def is_component(hint) -> bool:
    """Whether a field holds a config component (a Checked dataclass, or None)."""
    return any(isinstance(t, type) and issubclass(t, Checked)
               for t in (hint, *typing.get_args(hint)))


def declared(cls) -> dict[str, Any]:
    """Field name -> declared type of every field of ``cls`` that is not a component."""
    hints = _hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)
            if not is_component(hints[f.name])}


def _base_type(hint):
    return typing.get_args(hint)[0] if typing.get_origin(hint) is Annotated else hint


def _markers(hint) -> list:
    """The metadata of an ``Annotated`` declaration: bounds (annotated_types) and OneOf."""
    if typing.get_origin(hint) is not Annotated:
        return []
    out = []
    for m in typing.get_args(hint)[1:]:
        out.extend(m.metadata if isinstance(m, pydantic.fields.FieldInfo) else [m])
    return out


def bounds(hint) -> tuple[tuple[Any, bool] | None, tuple[Any, bool] | None]:
    """``(low, high)`` of a declaration, each ``(value, inclusive)`` or None."""
    low = high = None
    for m in _markers(hint):
        if isinstance(m, annotated_types.Ge):
            low = (m.ge, True)
        elif isinstance(m, annotated_types.Gt):
            low = (m.gt, False)
        elif isinstance(m, annotated_types.Le):
            high = (m.le, True)
        elif isinstance(m, annotated_types.Lt):
            high = (m.lt, False)
    return low, high


def choices(hint) -> list[str] | None:
    """The names a declaration allows (a Literal, or a OneOf's registry), else None."""
    base = _base_type(hint)
    if typing.get_origin(base) is Literal:
        return [str(c) for c in typing.get_args(base)]
    for m in _markers(hint):
        if isinstance(m, OneOf):
            return list(m.registry)
    return None


def _number(x) -> str:
    return f"2^{x.bit_length() - 1}" if isinstance(x, int) and x > 2**20 and (
        x & (x - 1)) == 0 else f"{x:g}" if isinstance(x, float) else str(x)


def type_name(hint) -> str:
    """The declared type in a word: integer, number, boolean, name, text, mapping."""
    if choices(hint) is not None:
        return "name"
    base = _base_type(hint)
    return {int: "integer", float: "number", bool: "boolean", str: "text"}.get(
        base, "mapping" if typing.get_origin(base) is dict or base is dict else str(base))


def bounds_text(hint) -> str:
    """The bounds of a declaration as written in the docs: ``>= 1``, ``in [0, 1)``,
    ``one of adam, rmsprop``, ``true or false``; ``""`` for none."""
    names = choices(hint)
    if names is not None:
        return "one of " + ", ".join(names)
    if type_name(hint) == "boolean":
        return "true or false"
    low, high = bounds(hint)
    if low and high:
        return (f"in {'[' if low[1] else '('}{_number(low[0])}, "
                f"{_number(high[0])}{']' if high[1] else ')'}")
    if low:
        return f"{'>=' if low[1] else '>'} {_number(low[0])}"
    if high:
        return f"{'<=' if high[1] else '<'} {_number(high[0])}"
    return ""


def allowed(hint) -> str:
    """What a declaration allows, in words: ``an integer >= 1``, ``true or false``."""
    names = choices(hint)
    if names is not None:
        return "one of " + ", ".join(names)
    kind = type_name(hint)
    if kind == "boolean":
        return "true or false"
    what = {"integer": "an integer", "number": "a number", "text": "text",
            "mapping": "a mapping of names to values"}.get(kind, kind)
    return f"{what} {bounds_text(hint)}".rstrip()
