"""Array arguments given as objects with __dlpack__ (read through numpy.from_dlpack)."""
import ctypes

import numpy as np
import pytest

import numpy_kernels as nk
import pagecheck


class DLPackOnly:
    """An array-like that numpy can only read through the DLPack protocol (like a CPU torch
    tensor): no __array__, no buffer protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_arguments_give_the_numpy_result():
    args = nk.attention_problem(np.random.default_rng(2), "float16", [20, 33], 4, 2, 64, 16)
    assert not hasattr(DLPackOnly(args["query"]), "__array__")
    wrapped = dict(args, **{k: DLPackOnly(args[k]) for k in
                            ("query", "key_cache", "value_cache", "block_table", "context_lens")})
    direct = pagecheck.reference.paged_attention(**args)
    through = pagecheck.reference.paged_attention(**wrapped)
    assert np.array_equal(direct.out, through.out)
    actual = DLPackOnly(nk.numpy_paged_attention(**args))
    assert pagecheck.compare_attention(**wrapped, actual=actual).passed


def test_dlpack_copies_and_storage_helpers():
    args = nk.copy_problem(np.random.default_rng(4), "float32", 12, 2, 64, 8, 3, 2)
    direct = pagecheck.reference.reshape_and_cache(**args)
    wrapped = {k: DLPackOnly(v) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    through = pagecheck.reference.reshape_and_cache(**wrapped)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(direct, through))
    values = np.linspace(-2, 2, 7)
    assert np.array_equal(pagecheck.reference.to_storage(DLPackOnly(values), "float16"),
                          values.astype(np.float16))


class CudaDLPack:
    """A DLPack producer whose tensor says it lives on CUDA device 0, as a GPU torch tensor's
    would (a DLManagedTensor built with ctypes; its data pointer is never read)."""

    class Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class Tensor(ctypes.Structure):
        pass

    Tensor._fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32),
                       ("dtype", DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                       ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
                       ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    def __init__(self, shape):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._tensor = self.Tensor(None, self.Device(2, 0), len(shape), self.DataType(2, 16, 1),
                                   self._shape, None, 0, None, None)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._tensor), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)


def test_a_device_tensor_is_refused_naming_the_argument():
    args = nk.attention_problem(np.random.default_rng(2), "float16", [20], 2, 2, 64, 16)
    on_gpu = CudaDLPack(args["key_cache"].shape)
    with pytest.raises(TypeError, match="key_cache: cannot read it as a CPU array through "
                                        "__dlpack__ .*Unsupported device"):
        pagecheck.reference.paged_attention(**dict(args, key_cache=on_gpu))
