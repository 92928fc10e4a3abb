"""The base of the small typed records Keeper reads each of its JSON files into, once, at the boundary.

Each record lives in the module that owns its file, with one lenient ``parse`` from the JSON as
read and one ``dump``. This base gives them equality and a readable repr from their ``__slots__``:
not ``dataclasses``, because hooks read some of these records and that import costs a hook a few ms.
"""

from __future__ import annotations


class Record:
    """Equality and repr by the fields a subclass lists in ``__slots__``."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


def texts(data: object, *names: str) -> list[str]:
    """The strings under ``names`` in a JSON object as read: "" for one missing or of another type,
    and for every name when ``data`` is no object."""
    found = data if isinstance(data, dict) else {}
    return [value if isinstance(value := found.get(name), str) else "" for name in names]
