"""ir/arena: arrays made inside writing_into(path) live in that file at the offsets offset_of names,
aligned, also when they outgrow a chunk; release takes their pages out of this process and keeps the
bytes; outside an arena `empty` is plain memory."""
import numpy as np

from ftuner_mlir.ir import arena

from .helpers import resident_kb


def test_arrays_lie_in_the_file_where_offset_of_says(tmp_path, monkeypatch):
    monkeypatch.setattr(arena, "CHUNK", 1 << 16)           # small chunks: arrays cross into new ones
    rng = np.random.default_rng(7)
    path = tmp_path / "constants.bin"
    shapes = [(3, 5, 7), (1,), (257, 131), (13, 4099), (2, 3)]      # the fourth outgrows a chunk
    with arena.writing_into(path) as packed:
        made = []
        for shape in shapes:
            array = arena.empty(shape, np.float32)
            array[...] = rng.standard_normal(shape)
            made.append((array, array.copy()))
    data = path.read_bytes()
    assert len(data) == packed.end
    ends = []
    for array, want in made:
        offset = packed.offset_of(array)
        assert offset is not None and offset % arena.ALIGNMENT == 0
        np.testing.assert_array_equal(np.frombuffer(data, np.float32, want.size, offset).reshape(want.shape), want)
        np.testing.assert_array_equal(array, want)              # the mapping still reads after close
        ends.append((offset, offset + want.nbytes))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(ends, ends[1:]))
    assert packed.offset_of(np.zeros(3)) is None


def test_release_gives_back_the_pages_and_keeps_the_bytes(tmp_path):
    with arena.writing_into(tmp_path / "constants.bin"):
        array = arena.empty((1031, 509), np.float32)
        array[...] = np.arange(array.size, dtype=np.float32).reshape(array.shape)
        address = array.ctypes.data
        assert resident_kb(address) >= array.nbytes // 1024
        arena.release(array)
        assert resident_kb(address) <= 8                       # at most the two edge pages stay
        assert float(array[-1, -1]) == array.size - 1           # read back from the page cache
        arena.release(np.zeros(10))                             # not the arena's: left alone


def test_outside_an_arena_arrays_are_memory():
    array = arena.empty((4, 6), np.float64)
    assert array.shape == (4, 6) and array.base is None         # np.empty's own memory, no mapping
    array[...] = 2.5
    arena.release(array)
    assert (array == 2.5).all()
