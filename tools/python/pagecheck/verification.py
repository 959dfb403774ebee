"""pagecheck.verify: a Python kernel against the reference on the generators' cases, through
the same verifier as ``pagecheck verify`` (comparison under the derived tolerance, the same
report text, the first failure shrunk with RapidCheck's shrink tree and the spec shrinks)."""
import numpy as np

from ._pagecheck import verify_runner as _verify_runner

#: What a kernel returns when it writes in place (returns None): the inputs it wrote.
_IN_PLACE = {"paged_attention": ("out",), "gather_cached_kv": ("key", "value"),
             "reshape_and_cache": ("key_cache", "value_cache")}


class VerificationFailure(AssertionError):
    """The shrunk counterexample of :func:`verify`.

    Attributes: ``spec`` (the shrunk layout as a dict), ``spec_text`` (its printed form),
    ``reproduce`` (the spec JSON: ``pagecheck.verify(fn, family, caps, spec=reproduce)``
    replays it, as ``pagecheck verify --reproduce-spec`` does for a built-in variant),
    ``shrunk_size`` (total context tokens x heads, or tokens x kv heads for copies),
    ``original_summary`` (the failing case before shrinking), ``outcome``, ``message``,
    ``counterexample`` (the CLI's counterexample block), ``case_index``, ``shrink_steps``
    and ``result`` (everything, with the JSON report)."""

    def __init__(self, result, reproduce_call):
        f = result["failure"]
        self.result = result
        for key in ("spec", "spec_text", "reproduce", "shrunk_size", "original_summary",
                    "outcome", "message", "counterexample", "case_index", "shrink_steps"):
            setattr(self, key, f[key])
        super().__init__(f"{f['counterexample'].rstrip()}\n"
                         f"reproduce in Python: {reproduce_call}, spec={f['reproduce']!r})")


class VerifyResult:
    """A passing run: ``run`` and ``passed`` case counts and ``summary`` (the CLI's table)."""

    def __init__(self, result):
        for key in ("run", "passed", "summary", "report"):
            setattr(self, key, result[key])

    def __repr__(self):
        return f"<pagecheck.VerifyResult {self.passed}/{self.run} passed>"


def _host(x):
    """A kernel's output as something numpy reads: numpy arrays as they are; tensors with
    __dlpack__ moved to the host (``.cpu()`` / ``.get()``) when on a device; bfloat16 and
    fp8 tensors viewed as their integer bits, the form pagecheck reads them in."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
        return x
    if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] != 1:  # not kDLCPU
        if hasattr(x, "cpu"):
            x = x.cpu()
        elif hasattr(x, "get"):
            x = x.get()
    dtype = str(getattr(x, "dtype", ""))
    if hasattr(x, "view") and ("bfloat16" in dtype or "float8" in dtype):
        module = __import__(type(x).__module__.split(".")[0])
        x = x.view(getattr(module, "int16" if "bfloat16" in dtype else "uint8"))
    return np.from_dlpack(x)


class _Runner:
    """Calls the kernel on one case: inputs converted by ``to``, outputs (returned, or the
    inputs written in place when it returns None) converted back by ``back``."""

    def __init__(self, fn, to, back):
        self.fn, self.to, self.back = fn, to, back

    def __call__(self, family, inputs):
        given = {k: self.to(v) if self.to is not None and isinstance(v, np.ndarray) else v
                 for k, v in inputs.items()}
        out = self.fn(**given)
        if out is None:
            out = tuple(given[k] for k in _IN_PLACE[family])
        elif family == "paged_attention":
            out = (out,)
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"the kernel returned {type(out).__name__}; expected "
                            f"{len(_IN_PLACE[family])} arrays or None (written in place)")
        host = [(self.back(o) if self.back is not None else _host(o))
                for o in out]
        return host[0] if family == "paged_attention" else tuple(host)


def verify(fn, family, caps, *, cases=100, seed=1, to=None, back=None, spec=None,
           shrink_seconds=60.0, determinism_share=1.0, name=None):
    """Verifies kernel ``fn`` of ``family`` ("paged_attention", "gather_cached_kv",
    "reshape_and_cache"), which declares ``caps`` (as for :func:`pagecheck.cases`), on
    ``cases`` generated cases of run seed ``seed``, like ``pagecheck verify`` does a
    built-in variant: each case's output is compared with the reference (attention within
    the derived tolerance of the precision ``caps`` declares, copies bit for bit, unwritten
    output left as poison checked), each case runs twice and must agree bit for bit (a share
    ``determinism_share`` of the cases; shrink steps always), and the first failing case is
    shrunk (at most ``shrink_seconds``) to a locally smallest layout.

    ``fn`` is called with keyword arguments, numpy arrays unless ``to`` converts each array
    (e.g. ``torch.from_numpy``, or ``lambda a: torch.from_dlpack(a).cuda()``): paged
    attention gets query, key_cache, value_cache (in the layout of ``kind``), block_table,
    context_lens, max_context_len, scale, alibi_slopes, sinks, query_start, window,
    soft_cap, causal, dtype, kind, kv_dtype, k_scale, v_scale and out (the output buffer,
    output poison); gather gets key, value (output buffers), key_cache, value_cache,
    slot_mapping, dtype, kind, kv_dtype, k_scale, v_scale, dequantize; reshape_and_cache the
    same without dequantize (key_cache, value_cache are its outputs). bfloat16 tensors are
    uint16 arrays of bits, fp8 caches uint8 codes. It returns its output(s) -- attention one
    array [num_query_tokens, num_heads, head_size], copies two -- or None after writing
    in place into the arrays it was given. Outputs may be numpy arrays or tensors with
    ``__dlpack__`` (on the CPU or a GPU: moved with ``.cpu()``); ``back`` converts them
    when that is not enough.

    ``spec`` (a failure's ``reproduce`` or ``spec`` dict) runs that one case instead. Returns
    a :class:`VerifyResult`; raises :class:`VerificationFailure` (an AssertionError) with the
    shrunk layout, chained to the first exception ``fn`` raised if any, AssertionError on
    harness errors, TypeError / ValueError naming a bad argument."""
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {fn!r}")
    for arg, value in (("to", to), ("back", back)):
        if value is not None and not callable(value):
            raise TypeError(f"{arg}: expected None or a callable, got {value!r}")
    for arg, value in (("shrink_seconds", shrink_seconds),
                       ("determinism_share", determinism_share)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{arg}: expected a number, got {value!r}")
    if name is None:
        name = getattr(fn, "__name__", "python") or "python"
    elif not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {name!r}")
    result = _verify_runner(_Runner(fn, to, back), family, caps, cases=cases, seed=seed,
                            spec=spec, shrink_seconds=float(shrink_seconds),
                            determinism_share=float(determinism_share), name=name)
    if result["failure"] is not None:
        raise VerificationFailure(result, f"pagecheck.verify({name}, {family!r}, caps") \
            from result["error"]
    if not result["ok"]:
        raise AssertionError(result["summary"] + "\n".join(result["errors"]))
    return VerifyResult(result)


__all__ = ["VerificationFailure", "VerifyResult", "verify"]
