"""Type stub of breakwater._hot, the C hot path of breaker decorators
(python/csrc/hot.c). Internal: Breaker.__call__ builds these."""
from typing import Any, Callable

PERMIT_SIZE: int

class Guarded:
    """A function protected by a breaker: acquire, call, release in C."""
    __wrapped__: Callable[..., Any]
    def __init__(self, fn: Callable[..., Any], outcome: Callable[[BaseException], int],
                 refused: Callable[[], BaseException], owner: object,
                 acquire: int, release: int, obj: int) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, obj: object, type: Any = ...) -> Any: ...
