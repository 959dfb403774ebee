"""Golden fixtures (fixtures/golden/*.h5, docs/fixtures.md) as numpy arrays and attributes,
read and validated by pagecheck's own loader (schema version, every attribute and dataset,
shapes, element types and SHA-256 checksums)."""
import os

import numpy as np

from ._pagecheck import golden as _ext


class Golden:
    """One loaded golden case.

    Attributes: ``path``, ``name``, ``description``, ``family`` ("paged_attention",
    "gather_cached_kv" or "reshape_and_cache"), ``dtype`` (storage dtype name), ``seed``,
    ``reference_version``, ``attrs`` (every root attribute: str, int, float or int64 array),
    ``stored`` (dataset path -> array as stored in the file, h5py's ``ds[()]``),
    ``dataset_attrs`` (dataset path -> its attributes) and ``arrays`` (dataset path -> the
    tensor in its logical shape and strides: a strided view into ``stored`` for padded
    layouts). bfloat16 datasets are their uint16 bits, as h5py reads them.
    """

    def __init__(self, loaded):
        self.path = loaded["path"]
        self.name = loaded["name"]
        self.description = loaded["description"]
        self.dtype = loaded["dtype"]
        self.seed = loaded["seed"]
        self.reference_version = loaded["reference_version"]
        self.attrs = loaded["attrs"]
        self.family = self.attrs["family"]
        self.stored = {p: d["data"] for p, d in loaded["datasets"].items()}
        self.dataset_attrs = {p: d["attrs"] for p, d in loaded["datasets"].items()}
        self.arrays = {p: _logical_view(self.stored[p], self.dataset_attrs[p])
                       for p in self.stored}

    def __getitem__(self, path):
        """The logical tensor of dataset ``path`` (e.g. "inputs/query")."""
        return self.arrays[path]

    def __contains__(self, path):
        return path in self.arrays

    def inputs(self):
        """The inputs as keyword arguments of the family's function in pagecheck.reference
        (``paged_attention``, ``gather_cached_kv`` or ``reshape_and_cache``): the tensors, the
        cache kind and dtype, fp8 scales, and for attention the scale and the features."""
        a, attrs = self.arrays, self.attrs
        common = {"key_cache": a["inputs/key_cache"], "value_cache": a["inputs/value_cache"],
                  "dtype": self.dtype, "kind": attrs.get("cache_kind"),
                  "kv_dtype": attrs.get("cache_dtype"), "k_scale": a.get("inputs/k_scale"),
                  "v_scale": a.get("inputs/v_scale")}
        if self.family == "paged_attention":
            window = int(attrs.get("feature_window", 0))
            soft_cap = float(attrs.get("feature_soft_cap", 0.0))
            return dict(common, query=a["inputs/query"], block_table=a["inputs/block_table"],
                        context_lens=a["inputs/context_lens"], scale=float(attrs["scale"]),
                        alibi_slopes=a.get("inputs/alibi_slopes"),
                        query_start=a.get("inputs/query_start"), sinks=a.get("inputs/sinks"),
                        window=window or None, soft_cap=soft_cap or None,
                        causal=bool(attrs.get("feature_causal", 1)))
        extra = {"dequantize": bool(attrs.get("dequantize", 0))}
        if self.family != "gather_cached_kv":
            extra = {}
        return dict(common, key=a["inputs/key"], value=a["inputs/value"],
                    slot_mapping=a["inputs/slot_mapping"], **extra)

    def __repr__(self):
        return f"<pagecheck.golden.Golden {self.name} ({self.family}, {self.dtype})>"


def _logical_view(stored, attrs):
    """``stored`` seen through its ``logical_shape`` and ``strides`` attributes (tensors)."""
    if "logical_shape" not in attrs:
        return stored
    shape = [int(v) for v in attrs["logical_shape"]]
    if list(stored.shape) == shape:
        return stored
    flat = stored.reshape(-1)
    strides = [int(v) * flat.itemsize for v in attrs["strides"]]
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=strides)


def load(path):
    """The golden at ``path`` as a :class:`Golden`. Raises FileNotFoundError when there is no
    such file and ValueError naming the file and dataset or attribute when it is not a valid
    golden (truncated, wrong schema, shape, dtype or checksum)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such golden file", path)
    return Golden(_ext.load(path))


__all__ = ["Golden", "load"]
