"""Pointers as numbers in the interpreter: casts between pointers and int64 addresses.

A pointer's address is the host address of the element it points to (the array's memory
plus its offset), so that an address a kernel computes from a pointer argument, or one the
caller wrote into an int64 array (`a.ctypes.data`, a CPU tensor's `data_ptr()`), casts
back to a pointer into the same array.  An address is mapped back to an array the
interpreter can find: the kernel's array arguments, then the NumPy arrays and CPU tensors
the calling code holds (its frames' variables, and the lists, tuples and dicts alive).
Every lane of one block of pointers must point into one array; an address inside no known
array becomes a pointer that no load or store may use (the bounds check says which).
"""

from __future__ import annotations

import gc
import sys

import numpy as np

from tilecc.errors import InterpreterError

UNKNOWN = np.int64(-(1 << 62))  # the element offset of a lane whose address is unknown
SEVERAL = "different arrays"  # the name of pointers whose lanes are in several arrays


def address(ptr) -> np.ndarray | np.int64:
    """The addresses of a Pointer's elements, as int64."""
    if ptr.raw is not None:
        return ptr.raw
    base = ptr.buffer.__array_interface__["data"][0]
    return (np.int64(base) + np.asarray(ptr.offset, np.int64) * ptr.buffer.itemsize)[()]


def _span(a: np.ndarray) -> tuple[int, int]:
    start = a.__array_interface__["data"][0]
    return start, start + a.size * a.itemsize


def _flat(a: np.ndarray) -> np.ndarray | None:
    """A's memory as one flat array (None where it is not one block: non-contiguous)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return a.reshape(-1, order="A")
    return None


def _as_array(x) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x
    mod = type(x).__module__
    if not (isinstance(mod, str) and mod.startswith("torch")):
        return None
    try:  # a CPU tensor (not any object of torch's: those may raise on these attributes)
        if type(x).__name__ in ("Tensor", "Parameter") and x.device.type == "cpu":
            return x.detach().numpy()
    except Exception:  # bfloat16 (no NumPy view), or not a tensor after all
        return None
    return None


def _items(container) -> list:
    try:  # a snapshot: other code may change a dict while it is read
        return list(container.values() if isinstance(container, dict) else container)
    except RuntimeError:
        return []


def _reachable_arrays():
    """The NumPy arrays (and CPU tensors) the program holds, nearest first: the calling
    frames' variables and what they hold, then every list, tuple and dict alive."""
    frame = sys._getframe(1)
    while frame is not None:
        for v in _items(frame.f_locals):
            a = _as_array(v)
            if a is not None:
                yield a
            elif isinstance(v, (list, tuple, dict)):
                yield from filter(lambda x: x is not None, map(_as_array, _items(v)))
        frame = frame.f_back
    for obj in gc.get_objects():
        a = _as_array(obj)
        if a is not None:
            yield a
        elif isinstance(obj, (list, tuple, dict)):
            yield from filter(lambda x: x is not None, map(_as_array, _items(obj)))


class AddressSpace:
    """Finds the arrays addresses point into: the kernel's arguments, the arrays found
    before, then the arrays reachable from the program, searched once per batch of
    addresses.  An address found nowhere is remembered as such for the launch (the heap
    walk is slow in a large program, and a masked lane's address is usually one)."""

    def __init__(self, arguments: list[np.ndarray]):
        self.arrays = [(_span(a), a) for a in arguments]
        self.nowhere: set[int] = set()

    def _known(self, addr: int) -> np.ndarray | None:
        for (start, end), a in self.arrays:
            if start <= addr < end:
                return a
        return None

    def find_all(self, addrs) -> dict[int, np.ndarray]:
        """address -> the array holding it, for those of `addrs` some array holds."""
        found, left = {}, set()
        for addr in addrs:
            a = self._known(addr)
            if a is not None:
                found[addr] = a
            elif addr not in self.nowhere:
                left.add(addr)
        if left:
            for a in _reachable_arrays():
                flat = _flat(a)
                if flat is None or not flat.size:
                    continue
                start, end = _span(flat)
                hits = [addr for addr in left if start <= addr < end]
                if hits:
                    self.arrays.append(((start, end), flat))
                    found.update((addr, flat) for addr in hits)
                    left.difference_update(hits)
                    if not left:
                        break
            self.nowhere |= left
        return found


def to_pointer(space: AddressSpace, addresses, elem: np.dtype, loc, pointer_class):
    """int64 addresses → a Pointer into the one array they point into, viewed as `elem`."""
    addrs = np.asarray(addresses).astype(np.int64)
    found = space.find_all(int(a) for a in np.unique(addrs))
    arrays = {id(arr): arr for arr in found.values()}
    if len(arrays) != 1:  # kept as addresses: a load or store through them is an error
        first = int(addrs.reshape(-1)[0])
        name = f"{len(arrays)} {SEVERAL}" if arrays else f"address {first:#x}"
        return pointer_class(np.empty(0, elem), np.full(addrs.shape, UNKNOWN)[()], name,
                             addrs[()])
    memory = next(iter(arrays.values()))
    start, _ = _span(memory)
    raw = memory.view(np.uint8)
    buffer = raw[:raw.size - raw.size % elem.itemsize].view(elem)
    byte_offsets = addrs - start
    known = np.isin(addrs, list(found))
    if (known & (byte_offsets % elem.itemsize != 0)).any():
        raise InterpreterError(f"an address is not aligned to its element size "
                               f"({elem.itemsize} bytes)", loc)
    offsets = np.where(known, byte_offsets // elem.itemsize, UNKNOWN)[()]
    return pointer_class(buffer, offsets, f"the array at address {start:#x}")


def retype(ptr, elem: np.dtype, loc, pointer_class):
    """A Pointer to another element type at the same addresses."""
    raw = ptr.buffer.view(np.uint8) if ptr.buffer.size else np.empty(0, np.uint8)
    byte_offsets = np.asarray(ptr.offset, np.int64) * ptr.buffer.itemsize
    if (byte_offsets % elem.itemsize != 0).any():
        raise InterpreterError(f"a pointer cast to {elem} elements is not aligned to their "
                               f"size ({elem.itemsize} bytes)", loc)
    buffer = raw[:raw.size - raw.size % elem.itemsize].view(elem)
    if ptr.raw is not None:  # addresses only: no array to be aligned in
        return pointer_class(buffer, ptr.offset, ptr.name, ptr.raw)
    return pointer_class(buffer, (byte_offsets // elem.itemsize)[()], ptr.name)
