"""A named registry over bw_registry_t: get-or-create by name per kind, and
Prometheus text for everything in it (docs/registry.md)."""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._clock import Clock, resolve
from ._deadline import deadline
from ._errors import ConfigError
from ._ffi import c_path, c_text, configure, error_from, ffi, lib
from ._guard import Classifier, check_classifier
from ._parking import ParkingLot
from ._pipeline import Pipeline, Timeout
from ._policies import (Breaker, Budget, Bulkhead, Limiter, RateLimiter,
                        SharedBreaker)
from ._retry import Retry
from ._throttle import Throttle
from .events import Sink, sink_ptr


def _same_fields(kind: str, name: str, ckind: int, given: Any, live: Any,
                 fields: Dict[str, Any]) -> None:
    """ConfigError (a ValueError) naming the first field of ``fields`` whose
    value (as configured into ``given``) differs from the live object's
    configuration ``live``; compared as bw_config_get's text, exactly."""
    err = ffi.new("bw_error_t *")
    a, b = ffi.new("char[]", 256), ffi.new("char[]", 256)
    for field, value in fields.items():
        if value is None:
            continue
        f = field.encode()
        if (lib.bw_config_get(ckind, given, f, a, 256, err) != lib.BW_OK or
                lib.bw_config_get(ckind, live, f, b, 256, err) != lib.BW_OK):
            continue  # not readable as text (a pointer field): nothing to compare
        want, have = ffi.string(a).decode(), ffi.string(b).decode()
        if want != have:
            raise ConfigError(f"{kind} '{name}' exists with {field} = {have}, not {want}: "
                              "an existing object keeps its settings (give no "
                              "fields, or the same)", field)


class _Owner:
    """Owns the C registry: frees it when the last of the Registry and the
    objects it created goes.

    The free touches nothing but the registry: ``bw_registry_free`` frees
    every object whatever its holds and reads no clock, so the breaker holds
    (``held``) are not put back first. That matters when the registry is
    garbage of a reference cycle (a test frame kept alive by a traceback):
    the collector then clears the wrappers in any order and may free the
    registry's ManualClock first, and ``bw_registry_put`` reads the clock.
    The clock and the sink are still kept until the free (their C objects
    too), since the registry borrows them."""

    __slots__ = ("ptr", "held", "keep", "__weakref__")

    def __init__(self, ptr: Any, clock: Clock, sink: Optional[Sink]) -> None:
        self.held: list = []  # the breaker holds this wrapper took (see above)
        # What the C registry borrows: the budgets of the retry policies it
        # owns, and the objects added with Registry.add. They live as long
        # as the registry, so as long as any wrapper or pipeline view of it.
        self.keep: list = []
        pins = (clock, sink, clock._ptr, sink_ptr(sink))

        def free(p: Any, keep: Tuple[Any, ...] = pins) -> None:
            lib.bw_registry_free(p)
        self.ptr = ffi.gc(ptr, free)


class Registry:
    """Policies by name, created on first use: ``registry.breaker("payments",
    failure_threshold=5)`` returns the breaker named "payments", creating it
    with those fields the first time; later calls return the same object
    (their fields are ignored, as the C registry does). One namespace per
    kind: a bulkhead and a limiter may share a name.

    Objects created elsewhere (a :class:`SharedBreaker`, a
    :class:`Pipeline`, or any other policy) join with :meth:`add`.
    :meth:`prometheus` returns the Prometheus text exposition (format
    0.0.4) of every object. ``clock`` and ``sink`` are the defaults of what
    the registry creates. Thread-safe."""

    def __init__(self, *, clock: Optional[Clock] = None, sink: Optional[Sink] = None,
                 max_objects: int = 0, idle_evict_ms: Any = None) -> None:
        self._clock = resolve(clock)
        self._sink = sink
        if isinstance(max_objects, bool) or not isinstance(max_objects, int):
            raise TypeError("max_objects must be an int")
        if max_objects < 0:
            raise ValueError("max_objects must be >= 0 (0: unbounded)")
        cfg = ffi.new("bw_registry_config_t *")
        lib.bw_registry_config_init(cfg)
        cfg.max_objects = max_objects
        if idle_evict_ms is not None:
            if isinstance(idle_evict_ms, bool) or not isinstance(idle_evict_ms, int):
                raise TypeError("idle_evict_ms must be an int (milliseconds)")
            cfg.idle_evict_ms = idle_evict_ms
        cfg.clock = self._clock._ptr
        cfg.sink = sink_ptr(sink)
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_registry_new(cfg, err)
        if ptr == ffi.NULL:
            raise error_from(err, "registry")
        self._owner = _Owner(ptr, self._clock, sink)
        self._ptr = self._owner.ptr
        self._lock = threading.Lock()
        self._objects: "weakref.WeakValueDictionary[Tuple[str, str], Any]" = \
            weakref.WeakValueDictionary()
        self._made: Dict[Tuple[str, str], Any] = {}  # C objects by (kind, name)

    # ---- get-or-create ------------------------------------------------------
    def _get(self, kind: str, name: Any, create: Callable[[bytes], Any],
             wrap: Callable[[Any], Any]) -> Any:
        """The live wrapper of (kind, name), or a new one around the C
        object, created on first use. Wrappers point at the registry (which
        owns the C object); the registry holds them weakly, so there is no
        reference cycle (a cycle could let the collector free the clock
        before the registry)."""
        key = (kind, name)
        cname = c_text("name", name)
        with self._lock:
            obj = self._objects.get(key)
            if obj is None:
                ptr = self._made.get(key)
                if ptr is None:
                    ptr = create(cname)
                    self._made[key] = ptr
                obj = wrap(ptr)
                obj._registry = self._owner  # keeps the C object's owner alive
                self._objects[key] = obj
            return obj

    def _config(self, kind: int, ctype: str, init: Any, fields: Dict[str, Any],
                keep: list) -> Any:
        cfg = ffi.new(ctype)
        init(cfg)
        configure(kind, cfg, fields, keep)
        return cfg

    def breaker(self, name: str, *, ignore: Classifier = None, **fields: Any) -> Breaker:
        """The in-process breaker named ``name`` (created on first use)."""
        ignore = check_classifier("ignore", ignore)

        def create(cname: bytes) -> Any:
            keep: list = []
            cfg = self._config(lib.BW_CONFIG_BREAKER, "bw_breaker_config_t *",
                               lib.bw_breaker_config_init, fields, keep)
            found = lib.bw_registry_find_breaker(self._ptr, cname)
            if found != ffi.NULL:  # made in C (a configuration file): as it is
                self._owner.held.append(found)
                return found
            err = ffi.new("bw_error_t *")
            if lib.bw_registry_set_breaker_config(self._ptr, cname, cfg, err) != lib.BW_OK:
                raise error_from(err, "breaker")
            ptr = lib.bw_registry_breaker(self._ptr, cname, err)
            if ptr == ffi.NULL:
                raise error_from(err, "breaker")
            self._owner.held.append(ptr)  # one hold, put back when the registry goes
            return ptr

        def wrap(ptr: Any) -> Breaker:
            b = Breaker.__new__(Breaker)
            b._clock, b._ignore, b._ptr = self._clock, ignore, ptr
            b._sink = self._sink  # the registry's sink is the breaker's
            b._bind()
            return b
        return self._get("breaker", name, create, wrap)

    def _simple(self, kind: str, cls: Any, ckind: int, ctype: str, init: Any,
                create_c: Any, cname_of: Any, name: str, fields: Dict[str, Any],
                extra: Callable[[Any, Any], None],
                config_of: Any = None) -> Any:
        """The object of ``kind`` named ``name``, made on first use from
        ``fields``. With ``config_of`` (the kind's ``*_config_of``), the
        fields are checked up front and an object that exists keeps its
        settings: a field given that differs from the object's raises
        :class:`ConfigError` naming it (:func:`_same_fields`)."""
        probe = None
        if config_of is not None:
            probe = ffi.new(ctype)
            init(probe)
            configure(ckind, probe, fields, [])

        def create(cname: bytes) -> Any:
            keep: list = []
            cfg = self._config(ckind, ctype, init, fields, keep)
            err = ffi.new("bw_error_t *")
            ptr = create_c(self._ptr, cname, cfg, err)
            if ptr == ffi.NULL:
                raise error_from(err, kind)
            return ptr

        def wrap(ptr: Any) -> Any:
            obj = cls.__new__(cls)
            obj._clock, obj._ptr = self._clock, ptr
            obj.name = ffi.string(cname_of(ptr)).decode()
            extra(obj, ptr)
            return obj
        obj = self._get(kind, name, create, wrap)
        if config_of is not None:
            live = ffi.new(ctype)
            config_of(obj._ptr, live)
            _same_fields(kind, name, ckind, probe, live, fields)
        return obj

    def bulkhead(self, name: str, **fields: Any) -> Bulkhead:
        """The bulkhead named ``name`` (created on first use with
        ``fields``). A bulkhead that exists (made by a configuration file or
        an earlier call) keeps its settings: its ``max_wait_ms`` (a
        pipeline's wait for a slot) is the object's own, and a field given
        here that differs from the object's raises :class:`ConfigError` (a
        ValueError) naming the field, rather than being silently ignored."""
        def extra(o: Any, ptr: Any) -> None:
            live = ffi.new("bw_bulkhead_config_t *")
            lib.bw_bulkhead_config_of(ptr, live)
            o.max_wait_ms = live.max_wait_ms
        return self._simple("bulkhead", Bulkhead, lib.BW_CONFIG_BULKHEAD,
                            "bw_bulkhead_config_t *", lib.bw_bulkhead_config_init,
                            lib.bw_registry_bulkhead, lib.bw_bulkhead_name, name,
                            fields, extra, lib.bw_bulkhead_config_of)

    def limiter(self, name: str, *, ignore: Classifier = None, **fields: Any) -> Limiter:
        """The adaptive concurrency limiter named ``name``. As for
        :meth:`bulkhead`, a limiter that exists keeps its settings, and a
        field given here that differs from the object's raises
        :class:`ConfigError` naming the field."""
        ignore = check_classifier("ignore", ignore)

        def extra(o: Any, ptr: Any) -> None:
            o._ignore = ignore
        return self._simple("limiter", Limiter, lib.BW_CONFIG_LIMITER,
                            "bw_limiter_config_t *", lib.bw_limiter_config_init,
                            lib.bw_registry_limiter, lib.bw_limiter_name, name,
                            fields, extra, lib.bw_limiter_config_of)

    def throttle(self, name: str, *, ignore: Classifier = None, **fields: Any) -> Throttle:
        """The client-side throttle named ``name`` (created on first use
        with ``fields``: ``k``, ``window_ms``, ``buckets``, ``seed``; the
        registry's clock and sink). As for :meth:`bulkhead`, a throttle that
        exists (made by a configuration file's ``[throttle.NAME]`` or an
        earlier call) keeps its settings, and a field given here that
        differs from the object's raises :class:`ConfigError` (a ValueError)
        naming the field. ``ignore`` is this wrapper's (an exception that
        is an accept: a 4xx), as for :class:`Throttle`."""
        ignore = check_classifier("ignore", ignore)

        def extra(o: Any, ptr: Any) -> None:
            o._ignore = ignore
            o._bind()
        return self._simple("throttle", Throttle, lib.BW_CONFIG_THROTTLE,
                            "bw_throttle_config_t *", lib.bw_throttle_config_init,
                            lib.bw_registry_throttle, lib.bw_throttle_name, name,
                            fields, extra, lib.bw_throttle_config_of)

    def rate_limiter(self, name: str, **fields: Any) -> RateLimiter:
        """The GCRA rate limiter named ``name``; an existing one keeps its
        settings, and a differing field raises :class:`ConfigError`, as
        for :meth:`bulkhead`."""
        return self._simple("ratelimit", RateLimiter, lib.BW_CONFIG_RATELIMIT,
                            "bw_ratelimit_config_t *", lib.bw_ratelimit_config_init,
                            lib.bw_registry_ratelimit, lib.bw_ratelimit_name, name,
                            fields, lambda o, c: None, lib.bw_ratelimit_config_of)

    def budget(self, name: str, **fields: Any) -> Budget:
        """The retry budget named ``name``; an existing one keeps its
        settings, and a differing field raises :class:`ConfigError`, as
        for :meth:`bulkhead`."""
        return self._simple("budget", Budget, lib.BW_CONFIG_BUDGET,
                            "bw_budget_config_t *", lib.bw_budget_config_init,
                            lib.bw_registry_budget, lib.bw_budget_name, name,
                            fields, lambda o, c: None, lib.bw_budget_config_of)

    def retry(self, name: str, *, retry_on: Classifier = Exception,
              budget: Optional[Budget] = None,
              sleep: Optional[Callable[[float], Any]] = None, **fields: Any) -> Retry:
        """The retry policy named ``name``. Its ``budget`` (a Budget from
        this registry, or one that outlives it) is given to the C policy."""
        retry_on = check_classifier("retry_on", retry_on)
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a breakwater Budget, not {type(budget).__name__}")
        if sleep is not None and not callable(sleep):
            raise TypeError("sleep must be callable")

        def create(cname: bytes) -> Any:
            keep: list = []
            cfg = self._config(lib.BW_CONFIG_RETRY, "bw_retry_config_t *",
                               lib.bw_retry_config_init, fields, keep)
            if budget is not None:
                cfg.budget = budget._ptr
                if getattr(budget, "_registry", None) is not self._owner:
                    self._owner.keep.append(budget)  # borrowed by the C policy
            err = ffi.new("bw_error_t *")
            ptr = lib.bw_registry_retry(self._ptr, cname, cfg, err)
            if ptr == ffi.NULL:
                raise error_from(err, "retry")
            return ptr

        def wrap(ptr: Any) -> Retry:
            r = Retry.__new__(Retry)
            r.retry_on, r.clock, r.budget, r._sleep = retry_on, self._clock, budget, sleep
            r._policy = ptr
            r.name = ffi.string(lib.bw_retry_policy_name(ptr)).decode()
            return r
        return self._get("retry", name, create, wrap)

    def pipeline(self, name: str, *, retry_on: Classifier = None, ignore: Classifier = None,
                 fallback: Optional[Callable[[BaseException], Any]] = None,
                 sleep: Optional[Callable[[float], Any]] = None) -> Pipeline:
        """The registry's pipeline named ``name`` — one a configuration file
        made (:meth:`load_file`, :meth:`reload`: a ``[pipeline.NAME]`` or
        the standard HTTP pipeline of an ``[http.NAME]``) — as a
        :class:`Pipeline`: ``call``, the decorator, ``for attempt in
        pipeline`` and the async forms behave as
        for a Pipeline built in Python over the file's objects (the same
        refusal exceptions: :class:`BreakerOpen` naming the file's breaker,
        :class:`BulkheadFull`, :class:`BudgetExhausted`,
        :class:`DeadlineExceeded`, ...). The C pipeline is borrowed from the
        registry, which the returned object keeps alive.

        The file says nothing about Python exceptions: ``retry_on`` is the
        retry's (the exceptions retried; default Exception, every other one
        is permanent: not retried, not a breaker failure) and ``ignore``
        the pipeline's (permanent), as for :class:`Retry` and
        :class:`Pipeline`; ``fallback`` and ``sleep`` as for Pipeline. Each
        call returns a new Pipeline object with its own arguments, over the
        same C pipeline (one set of counters). A breaker of the pipeline
        reached with :meth:`breaker` first lends its ``ignore`` too.

        The strategies are read from the C pipeline itself
        (``bw_pipeline_strategy_at``), outermost first; each object is
        matched by its name to this registry's object of that kind, and must
        be that very object.

        KeyError naming ``name`` when the registry has no such pipeline
        (this never creates one); ValueError naming the pipeline and the
        strategy when a strategy is not one of this registry's in-process
        breakers, bulkheads, limiters, rate limiters, throttles or retry
        policies (a pipeline made in C or added with :meth:`add` over other
        objects, a shared breaker, a custom strategy), and when
        ``retry_on`` is given for a pipeline with no retry. A file's
        ``throttle.NAME`` strategy is the registry's :meth:`throttle`
        ``NAME`` (the wrapper that call returns, its ``ignore`` included)."""
        cname = c_text("name", name)
        ptr = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_PIPELINE, cname)
        if ptr == ffi.NULL:
            raise KeyError(f"no pipeline named {name!r} in the registry "
                           "(pipelines come from a configuration file: load_file)")
        pl = ffi.cast("bw_pipeline_t *", ptr)
        retry_on_given = retry_on is not None
        retry_on = check_classifier("retry_on", Exception if retry_on is None else retry_on)
        s = ffi.new("bw_strategy_t *")
        members: List[Any] = []
        for i in range(lib.bw_pipeline_strategy_count(pl)):
            if lib.bw_pipeline_strategy_at(pl, i, s) != lib.BW_OK:  # pragma: no cover
                raise RuntimeError(f"pipeline {name!r}: strategies[{i}] unreadable")
            members.append(self._member(name, i, s, retry_on, sleep))
        if retry_on_given and not any(isinstance(m, Retry) for m in members):
            raise ValueError(f"retry_on: pipeline {name!r} has no retry")
        return Pipeline._borrow(pl, self._owner, self._clock,
                                members, ignore=ignore, fallback=fallback, sleep=sleep)

    @staticmethod
    def _addr(p: Any) -> int:
        return int(ffi.cast("uintptr_t", p))

    def _member(self, pipeline: str, i: int, s: Any, retry_on: Classifier,
                sleep: Optional[Callable[[float], Any]]) -> Any:
        """The Python wrapper of one strategy of a registry's pipeline
        (``s``, a bw_strategy_t): a deadline or Timeout from its ms, else
        the wrapper of the registry's object of that kind whose name is the
        strategy object's and whose pointer is the strategy's object."""
        kind, obj = s.kind, s.object
        if kind == lib.BW_STRATEGY_DEADLINE:
            return deadline(s.ms / 1000.0, clock=self._clock)
        if kind == lib.BW_STRATEGY_TIMEOUT:
            return Timeout(s.ms / 1000.0)
        want = self._addr(obj)
        ref = ""
        if kind == lib.BW_STRATEGY_BREAKER:
            ref = ffi.string(lib.bw_breaker_if_name(ffi.cast("bw_breaker_if_t *", obj))).decode()
            found = lib.bw_registry_find_breaker(self._ptr, c_text("name", ref))
            if found != ffi.NULL:  # held by find: compared, then put back
                same = self._addr(lib.bw_breaker_iface(found)) == want
                lib.bw_registry_put(self._ptr, found)
                if same:
                    return self.breaker(ref)
        elif kind == lib.BW_STRATEGY_LIMIT:
            # a bulkhead or an adaptive limiter: the one whose limit it is
            ref = ffi.string(lib.bw_limit_name(ffi.cast("bw_limit_t *", obj))).decode()
            bh = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_BULKHEAD, c_text("name", ref))
            if bh != ffi.NULL and self._addr(lib.bw_bulkhead_as_limit(
                    ffi.cast("bw_bulkhead_t *", bh))) == want:
                return self.bulkhead(ref)
            lim = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_LIMITER, c_text("name", ref))
            if lim != ffi.NULL and self._addr(lib.bw_limiter_as_limit(
                    ffi.cast("bw_limiter_t *", lim))) == want:
                return self.limiter(ref)
        elif kind == lib.BW_STRATEGY_RATELIMIT:
            ref = ffi.string(lib.bw_ratelimit_name(ffi.cast("bw_ratelimit_t *", obj))).decode()
            rl = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_RATELIMIT, c_text("name", ref))
            if rl != ffi.NULL and self._addr(rl) == want:
                return self.rate_limiter(ref)
        elif kind == lib.BW_STRATEGY_CUSTOM:
            # a strategy of the interface (strategy.h): a throttle's is
            # its kind "throttle", named as the throttle
            sif = ffi.cast("bw_strategy_if_t *", obj)
            ref = ffi.string(lib.bw_strategy_if_name(sif)).decode()
            if ffi.string(lib.bw_strategy_if_kind(sif)).decode() == "throttle":
                t = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_THROTTLE, c_text("name", ref))
                if t != ffi.NULL and self._addr(lib.bw_throttle_strategy(
                        ffi.cast("bw_throttle_t *", t))) == want:
                    return self.throttle(ref)
        elif kind == lib.BW_STRATEGY_RETRY:
            policy = ffi.cast("bw_retry_policy_t *", obj)
            ref = ffi.string(lib.bw_retry_policy_name(policy)).decode()
            r = lib.bw_registry_find(self._ptr, lib.BW_REGISTRY_RETRY, c_text("name", ref))
            if r != ffi.NULL and self._addr(r) == want:
                return self._retry_of(policy, retry_on, sleep)
        what = ffi.string(lib.bw_strategy_kind_name(kind)).decode()
        raise ValueError(f"pipeline {pipeline!r}: strategies[{i}] ({what}"
                         f"{' ' + repr(ref) if ref else ''}) is not one of this registry's "
                         "in-process breakers, bulkheads, limiters, rate limiters, "
                         "throttles or retry policies: the only objects "
                         "Registry.pipeline wraps")

    def _retry_of(self, policy: Any, retry_on: Classifier,
                  sleep: Optional[Callable[[float], Any]]) -> Retry:
        """A Retry over the registry's retry policy ``policy`` with this
        ``retry_on`` (not the wrapper :meth:`retry` caches: each pipeline
        wrapper classifies with its own)."""
        r = Retry.__new__(Retry)
        r.retry_on, r.clock, r.budget, r._sleep = retry_on, self._clock, None, sleep
        r._policy = policy
        r.name = ffi.string(lib.bw_retry_policy_name(policy)).decode()
        r._registry = self._owner  # type: ignore[attr-defined]
        return r

    # ---- objects made elsewhere ---------------------------------------------
    _KINDS = ((SharedBreaker, "breaker_if"), (Bulkhead, "bulkhead"), (Limiter, "limiter"),
              (RateLimiter, "ratelimit"), (Budget, "budget"), (Retry, "retry"),
              (Pipeline, "pipeline"), (ParkingLot, "queue_store"), (Throttle, "throttle"))

    def add(self, obj: Any, name: Optional[str] = None) -> Any:
        """Puts a policy created elsewhere into the registry (its metrics
        then appear in :meth:`prometheus`) under its own name or ``name``;
        the registry keeps it alive. A :class:`SharedBreaker` joins as a
        breaker; an in-process :class:`Breaker` cannot be added (create it
        with :meth:`breaker`). A :class:`ParkingLot` joins as a queue
        store: its backlog and dead letters are then on the dashboard
        (``breakwater_queue_store_*``). Returns obj. ValueError (field
        "name") when the name is taken in that kind."""
        if isinstance(obj, Breaker):
            raise TypeError("an in-process Breaker cannot be added: use registry.breaker(name, ...)")
        for cls, kind in self._KINDS:
            if isinstance(obj, cls):
                break
        else:
            raise TypeError(f"not a breakwater policy: {type(obj).__name__}")
        if getattr(obj, "_registry", None) is self._owner:
            return obj
        cname = c_text("name", obj.name if name is None else name)
        cptr = {"breaker_if": lambda: obj._iface, "retry": lambda: obj._policy}.get(
            kind, lambda: obj._ptr)()
        ckind = {"breaker_if": lib.BW_REGISTRY_BREAKER_IF, "bulkhead": lib.BW_REGISTRY_BULKHEAD,
                 "limiter": lib.BW_REGISTRY_LIMITER, "ratelimit": lib.BW_REGISTRY_RATELIMIT,
                 "budget": lib.BW_REGISTRY_BUDGET, "retry": lib.BW_REGISTRY_RETRY,
                 "pipeline": lib.BW_REGISTRY_PIPELINE,
                 "queue_store": lib.BW_REGISTRY_QUEUE_STORE,
                 "throttle": lib.BW_REGISTRY_THROTTLE}[kind]
        err = ffi.new("bw_error_t *")
        with self._lock:
            if lib.bw_registry_put_object(self._ptr, ckind, cname, cptr, err) != lib.BW_OK:
                raise error_from(err, "add")
            self._owner.keep.append(obj)  # borrowed by the C registry
        return obj

    # ---- configuration files ------------------------------------------------
    def _config_lib(self) -> Tuple[Any, Any, Any]:
        """The config component's extension and this registry's pointer in it."""
        try:
            from ._config_c import ffi as cffi_, lib as clib
        except ImportError:
            raise RuntimeError("breakwater was built without the config component "
                               "(pkg-config module breakwater-config)") from None
        reg = cffi_.cast("bw_registry_t *", int(ffi.cast("uintptr_t", self._ptr)))
        return cffi_, clib, reg

    @staticmethod
    def _options(cffi_: Any, clib: Any, env_prefix: Optional[str], keep: list) -> Any:
        opt = cffi_.new("bw_config_file_options_t *")
        clib.bw_config_file_options_init(opt)
        if env_prefix is None:
            opt.env_prefix = cffi_.NULL
        elif env_prefix != "BREAKWATER":
            keep.append(cffi_.new("char[]", c_text("name", env_prefix)))
            opt.env_prefix = keep[-1]
        return opt

    @staticmethod
    def _diag_error(cffi_: Any, clib: Any, diag: Any, path: str) -> BaseException:
        message = cffi_.string(diag.message).decode("utf-8", "replace")
        if diag.code == clib.BW_E_NOMEM:
            return MemoryError(message or f"loading {path}")
        return ConfigError(message or f"{path}: refused ({diag.code})",
                           cffi_.string(diag.key).decode("utf-8", "replace"),
                           path=path, line=diag.line or None,
                           rule=cffi_.string(diag.rule).decode("utf-8", "replace"))

    def load_file(self, path: Any, *, env_prefix: Optional[str] = "BREAKWATER"
                  ) -> List[Tuple[str, str]]:
        """Makes every object of a configuration file (docs/configuration.md:
        ``[breaker.payment_api]`` sections, ``[KIND.default]`` defaults,
        pipelines) in this registry, with its clock and sink; returns the
        (kind, name) of each, in file order. Then ``registry.breaker(name)``
        returns a breaker of the file, as the file configured it.

        Environment variables ``PREFIX_NAME_KIND_FIELD`` override the file
        (``env_prefix``; None: the environment is not read). The whole file
        is validated first: any error raises :class:`ConfigError` whose
        message is ``FILE:LINE: KEY: RULE`` (``path``, ``line``, ``field``,
        ``rule``), and nothing is made; so does a name the registry already
        has. Needs the config component (``breakwater-config``)."""
        path = c_path(path)
        cffi_, clib, reg = self._config_lib()
        keep: list = []
        opt = self._options(cffi_, clib, env_prefix, keep)
        diag = cffi_.new("bw_config_diag_t *")
        f = clib.bw_config_file_read(path.encode(), opt, diag)
        if f == cffi_.NULL:
            raise self._diag_error(cffi_, clib, diag, path)
        try:
            kind, name = cffi_.new("char **"), cffi_.new("char **")
            made = []
            for i in range(clib.bw_config_file_count(f)):
                clib.bw_config_file_object(f, i, kind, name)
                made.append((cffi_.string(kind[0]).decode(), cffi_.string(name[0]).decode()))
            with self._lock:
                if clib.bw_config_file_apply(f, reg, diag) != clib.BW_OK:
                    raise self._diag_error(cffi_, clib, diag, path)
            return made
        finally:
            clib.bw_config_file_free(f)

    def reload(self, path: Any, *, env_prefix: Optional[str] = "BREAKWATER"
               ) -> Dict[str, Any]:
        """Reads the file again and brings the registry to it, all or
        nothing (an error raises :class:`ConfigError` and changes nothing):
        new objects are made, live breakers take the changed thresholds
        (fields fixed at creation are reported, not applied), live objects
        of other kinds are kept as made. Returns ``created``, ``applied``,
        ``not_applied``, ``kept`` and ``report`` (one line per event, e.g.
        ``breaker.payment_api.failure_threshold: 3 -> 5: applied``). A
        pipeline it creates is then reachable with :meth:`pipeline`."""
        path = c_path(path)
        cffi_, clib, reg = self._config_lib()
        keep: list = []
        opt = self._options(cffi_, clib, env_prefix, keep)
        diag = cffi_.new("bw_config_diag_t *")
        report = cffi_.new("bw_config_reload_t *")
        try:
            with self._lock:
                rc = clib.bw_registry_reload_ex(reg, path.encode(), opt, report, diag)
            if rc != clib.BW_OK:
                raise self._diag_error(cffi_, clib, diag, path)
            text = (cffi_.string(report.report).decode("utf-8", "replace")
                    if report.report != cffi_.NULL else "")
            return {"created": report.created, "applied": report.applied,
                    "not_applied": report.not_applied, "kept": report.kept,
                    "report": text.splitlines()}
        finally:
            clib.bw_config_reload_clear(report)

    # ---- reading ------------------------------------------------------------
    def prometheus(self) -> str:
        """The Prometheus text exposition (format 0.0.4) of every object."""
        n = ffi.new("size_t *")
        text = lib.bw_registry_prometheus(self._ptr, n)
        if text == ffi.NULL:
            raise MemoryError("prometheus text")
        try:
            return ffi.unpack(text, n[0]).decode("utf-8", "replace")
        finally:
            lib.bw_free(text)

    def count(self, kind: str = "breaker") -> int:
        """Live objects of a kind: "breaker", "breaker_if", "bulkhead",
        "limiter", "ratelimit", "retry", "budget", "pipeline",
        "queue_store" or "throttle"."""
        kinds = {"breaker": lib.BW_REGISTRY_BREAKER, "breaker_if": lib.BW_REGISTRY_BREAKER_IF,
                 "bulkhead": lib.BW_REGISTRY_BULKHEAD, "limiter": lib.BW_REGISTRY_LIMITER,
                 "ratelimit": lib.BW_REGISTRY_RATELIMIT, "retry": lib.BW_REGISTRY_RETRY,
                 "budget": lib.BW_REGISTRY_BUDGET, "pipeline": lib.BW_REGISTRY_PIPELINE,
                 "queue_store": lib.BW_REGISTRY_QUEUE_STORE,
                 "throttle": lib.BW_REGISTRY_THROTTLE}
        if kind not in kinds:
            raise ValueError(f"kind must be one of {', '.join(kinds)} (got {kind!r})")
        return lib.bw_registry_count(self._ptr, kinds[kind])

    def __repr__(self) -> str:
        return f"<Registry {len(self._objects)} created>"


_default: Optional[Registry] = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide default registry (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Registry()
        return _default
