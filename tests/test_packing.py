"""Lossless compact storage of float arrays (mvkernels._packing): the rebuilt array is the
original bit for bit, and each form is chosen only where it is smaller."""

import pickle

import numpy as np
import pytest

from mvkernels._packing import PackedArray, pack, unpack


def _same_bits(a, b):
    assert b.dtype == a.dtype and b.shape == a.shape
    order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    assert b.tobytes(order=order) == a.tobytes(order=order)
    if order == "F":
        assert b.flags.f_contiguous
    else:
        assert b.flags.c_contiguous


def _cases():
    rng = np.random.RandomState(0)
    pixels = rng.randint(0, 17, size=(50, 32)).astype(float)  # digits-like: exact in float16
    sparse = np.zeros((300, 10))
    sparse[rng.choice(300, 20, replace=False), rng.randint(10, size=20)] = rng.randn(20)
    B = rng.randn(4, 30, 30)
    sym_stack = B + np.swapaxes(B, 1, 2)
    signed = pixels.copy()
    signed[0, :3] = [-0.0, np.nan, np.inf]
    large = pixels * 1e5  # integers beyond float16's range: float32
    return {
        "pixels": (pixels, "float16", None),
        "pixels_fortran": (np.asfortranarray(pixels), "float16", None),
        "pixels_float32": (pixels.astype(np.float32), "float16", None),
        "column_view": (pixels[:, 3], "float16", None),
        "signed_zero_nan_inf": (signed, "float16", None),
        "large_integers": (large, "float32", None),
        "sparse": (sparse, "float64", "index"),
        "symmetric_stack": (sym_stack, "float64", "triangle"),
        "symmetric_fortran": (np.asfortranarray(sym_stack), "float64", "triangle"),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_packed_arrays_rebuild_bit_for_bit_and_are_smaller(name):
    a, value_dtype, form = _cases()[name]
    packed = pack(a)
    assert isinstance(packed, PackedArray)
    assert packed.values.dtype == value_dtype
    assert (packed.index is not None) == (form == "index")
    assert packed.triangle == (form == "triangle")
    assert 4 * packed.nbytes <= 3 * a.nbytes
    _same_bits(a, unpack(packed))
    _same_bits(a, unpack(pickle.loads(pickle.dumps(packed))))


@pytest.mark.parametrize(
    "a, narrow",
    [
        (np.arange(1347), np.int16),
        (np.array([[0, 5], [9, 200]], dtype=np.int64), np.uint8),
        (np.array([-3, 100]), np.int8),
        (np.arange(40000, dtype=np.uint64), np.uint16),
        (np.asfortranarray(np.arange(12).reshape(3, 4)), np.int8),
    ],
)
def test_integers_are_stored_in_the_narrowest_integer_type(a, narrow):
    packed = pack(a)
    assert packed.values.dtype == narrow
    _same_bits(a, unpack(pickle.loads(pickle.dumps(packed))))


def test_symmetric_stack_keeps_one_triangle():
    rng = np.random.RandomState(1)
    B = rng.randn(3, 40, 40)
    packed = pack(B + np.swapaxes(B, 1, 2))
    assert packed.values.size == 3 * 40 * 41 // 2


def test_arrays_that_do_not_shrink_and_other_objects_are_returned_unchanged():
    rng = np.random.RandomState(2)
    dense = rng.randn(40, 6)  # full-precision values, no zeros
    almost = dense.copy()
    almost[0, 0] = 0.0
    nearly_symmetric = dense[:6] @ dense[:6].T
    nearly_symmetric[0, 1] = np.nextafter(nearly_symmetric[0, 1], np.inf)
    wide = np.array([0, 2**40])  # needs int64
    for obj in (dense, almost, nearly_symmetric, wide, None, [1.0, 2.0], np.zeros(0), "x"):
        assert pack(obj) is obj
        assert unpack(obj) is obj


def test_a_signed_zero_off_the_nonzeros_stays_signed():
    """-0.0 counts as a stored entry: the sparse form keeps its sign."""
    a = np.zeros((100, 4))
    a[3, 1] = -0.0
    a[7, 2] = 0.123456789
    back = unpack(pack(a))
    assert np.signbit(back[3, 1]) and back.tobytes() == a.tobytes()
