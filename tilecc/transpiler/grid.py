"""Launch grids: `normalize_grid(grid) -> (x, y, z)`.  Below the runtime and the
interpreter, which both launch on a grid and report a bad one with the same message."""

from __future__ import annotations

_GRID_X_MAX = (1 << 31) - 1
_GRID_YZ_MAX = 65535


def normalize_grid(g) -> tuple[int, int, int]:
    """(x, y, z) from an int or a 1- to 3-tuple of non-negative sizes; errors name the
    grid (CUDA's limits: x < 2**31, y and z <= 65535)."""
    if isinstance(g, int):
        g = (g,)
    try:
        g = tuple(int(x) for x in g)
    except (TypeError, ValueError):
        _bad_grid(g)
    if not 1 <= len(g) <= 3 or min(g) < 0:
        _bad_grid(g)
    g = g + (1,) * (3 - len(g))
    if g[0] > _GRID_X_MAX or g[1] > _GRID_YZ_MAX or g[2] > _GRID_YZ_MAX:
        raise ValueError(f"grid {g} exceeds the GPU's limits (x < 2**31, y and z <= 65535)")
    return g


def _bad_grid(g):
    raise ValueError(f"grid must be 1 to 3 non-negative sizes, got {g}")
