"""Random K loops of `tl.dot` over blocks of pointers, written the ways kernels write them
(the `dot_loop` feature of random_kernels.generate).

Each operand is read one of three ways — offsets from the loop index (`rk = k * BK +
tl.arange(0, BK)`), pointers the loop advances (`a_ptrs += BK`, the K tail masked by
`offs_k < K - k * BK`; B's step sometimes an int64), or a block pointer moved by
`tl.advance` — from a batch of matrices, A's last K columns sometimes doubled by a
`tl.where` on the K index (render_bounds drops it where a whole block is before them),
(`bat * stride`), with ragged rows, columns and K, row strides padded or not (so that a
launch runs either the build whose copies the copy engine makes, passes.pointer_tiles, or
the one that copies by cp.async; odd strides leave no vectors to copy at all), B stored
K x N or N x K.  The `scaled_dot_loop` feature scales each step's product by a scalar and a
block of M rows loaded in the loop (small int32s), loads no product's operand is computed
from (read one iteration ahead into registers where a loop's copies go out at the top of
each iteration).  The inputs are quarters in [-4, 4] (the scales integers in [-8, 8]), so
every product and sum is exact and the result is NumPy's to the bit.
"""

from __future__ import annotations

import random

import numpy as np

from tilecc.testing.random_program import Output, Program


def dot_loop_program(seed: int, rng: random.Random, types: dict,
                     scaled: bool = False) -> Program:
    """The program of `seed` (`types`: name → DT of the generator's element types); with
    `scaled`, each step's product scaled by loads of the loop."""
    dt = types[rng.choice(["float16", "float16", "float32"] +
                          (["bfloat16"] * 2 if "bfloat16" in types else []))]
    f32 = types["float32"]
    # (mostly where sm_90 multiplies by wgmma, whose operands the copy engine can copy)
    M, N = rng.choice([64, 128]), rng.choice([16, 64, 64, 128, 128])
    BK = rng.choice([16, 32, 64, 64])
    warps = 4 if M == 64 else rng.choice([4, 8])
    gm, gn, gb = rng.choice([1, 2]), rng.choice([1, 2]), rng.choice([1, 2])
    rows = rng.randint(1, gm * M) if rng.random() < 0.6 else gm * M
    cols = rng.randint(1, gn * N) if rng.random() < 0.6 else gn * N
    K = rng.randint(1, 3 * BK) if rng.random() < 0.7 else rng.randint(1, 3) * BK
    b_t = rng.random() < 0.3  # B stored N x K
    # rows of whole 16-byte vectors mostly (the copies need 4 bytes at least), some not
    pads = [0, 0, 0, 4, 8, 1]
    sa = -(-K // 8) * 8 + rng.choice(pads)
    sb = -(-(K if b_t else cols) // 8) * 8 + rng.choice(pads)
    so = cols
    forms = [rng.choice(["index", "carried", "block_ptr"]) for _ in range(2)]
    mask_rows = rows < gm * M or rng.random() < 0.3
    mask_cols = cols < gn * N or rng.random() < 0.3
    mask_k = K % BK != 0 or rng.random() < 0.5

    def bounds(*tests: tuple[bool, str]) -> str:
        kept = [t for on, t in tests if on]
        return f", mask={' & '.join(kept)}, other=0.0" if kept else ""

    before: list[str] = []
    inside: list[str] = []
    after: list[str] = []
    if "index" in forms:
        inside.append("rk = k * BK + tl.arange(0, BK)")
    if "carried" in forms:
        before.append("offs_k = tl.arange(0, BK)")
    # A: rows x K, row stride sa
    rows_in, cols_in = (mask_rows, "(rm[:, None] < rows)"), (mask_cols, "(rn[None, :] < cols)")
    if forms[0] == "index":
        inside.append("a = tl.load(a_base + rm[:, None] * sa + rk[None, :]" +
                      bounds(rows_in, (mask_k, "(rk[None, :] < K)")) + ")")
    elif forms[0] == "carried":
        before.append("a_ptrs = a_base + rm[:, None] * sa + offs_k[None, :]")
        inside.append("a = tl.load(a_ptrs" + bounds(
            rows_in, (mask_k, "(offs_k[None, :] < K - k * BK)")) + ")")
        after.append("a_ptrs += BK")
    else:
        before.append("a_blk = tl.make_block_ptr(a_base, (rows, K), (sa, 1), (pid_m * M, 0), "
                      "(M, BK), (1, 0))")
        inside.append('a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")')
        after.append("a_blk = tl.advance(a_blk, (0, BK))")
    # (drawn apart, as below) the last `doubled` columns of A's K doubled by a select on
    # the K index, as kernels mask what they loaded: true for whole blocks but the last
    extra = random.Random(seed * 31 + 11)
    doubled = extra.randint(0, BK) if forms[0] != "block_ptr" and extra.random() < 0.4 \
        else None
    if doubled is not None:
        k_index = "rk[None, :]" if forms[0] == "index" else "(k * BK + offs_k[None, :])"
        inside.append(f"a = tl.where({k_index} < K - {doubled}, a, a * 2.0)")
    # B: K x cols (row stride sb), or stored cols x K (b_t) and read as K x N all the same
    k_of, n_of = ("rk[:, None]", "rn[None, :] * sb") if b_t else \
        ("rk[:, None] * sb", "rn[None, :]")
    if forms[1] == "index":
        inside.append(f"b = tl.load(b_base + {k_of} + {n_of}" +
                      bounds((mask_k, "(rk[:, None] < K)"), cols_in) + ")")
    elif forms[1] == "carried":
        k0, step = ("offs_k[:, None]", "BK") if b_t else ("offs_k[:, None] * sb", "BK * sb")
        # (drawn apart, so that the programs of earlier seeds stay as they were) a step
        # widened to int64: the carried offset then adds it as it is
        if random.Random(seed * 31 + 7).random() < 0.3:
            step = f"({step}).to(tl.int64)"
        n0 = "rn[None, :] * sb" if b_t else "rn[None, :]"
        before.append(f"b_ptrs = b_base + {k0} + {n0}")
        inside.append("b = tl.load(b_ptrs" + bounds(
            (mask_k, "(offs_k[:, None] < K - k * BK)"), cols_in) + ")")
        after.append(f"b_ptrs += {step}")
    else:
        strides, order = ("(1, sb)", "(0, 1)") if b_t else ("(sb, 1)", "(1, 0)")
        before.append(f"b_blk = tl.make_block_ptr(b_base, (K, cols), {strides}, "
                      f"(0, pid_n * N), (BK, N), {order})")
        inside.append('b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")')
        after.append("b_blk = tl.advance(b_blk, (BK, 0))")
    # (drawn apart, as below) the loop's own pipeline depth a third of the time
    # (tl.range's num_stages, which wins over the launch's), no deeper than fits
    stage_bytes = (M + N) * BK * dt.bits // 8

    def fitting(depth: int) -> int:  # (at most 200 KiB of stages)
        return max(1, min(depth, 200 * 1024 // stage_bytes))

    own = random.Random(seed * 31 + 17)
    loop_depth = fitting(own.choice([1, 2, 3, 4, 6])) if own.random() < 0.3 else None
    steps = -(-K // BK)
    if scaled:
        inside += ["s = tl.load(s_ptr + k)", "r = tl.load(r_ptr + k * M + tl.arange(0, M))"]
    loop_range = "range(0, tl.cdiv(K, BK))" if loop_depth is None else \
        f"tl.range(0, tl.cdiv(K, BK), num_stages={loop_depth})"
    name = f"random_kernel_{seed}"
    lines = [
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(a_ptr, b_ptr, out_ptr, {'s_ptr, r_ptr, ' if scaled else ''}"
        "rows, cols, K, sa, sb, so, sab, sbb, sob, "
        "M: tl.constexpr, N: tl.constexpr, BK: tl.constexpr):",
        "    pid_m = tl.program_id(0)",
        "    pid_n = tl.program_id(1)",
        "    bat = tl.program_id(2)",
        "    rm = pid_m * M + tl.arange(0, M)",
        "    rn = pid_n * N + tl.arange(0, N)",
        "    a_base = a_ptr + bat * sab",
        "    b_base = b_ptr + bat * sbb",
        *("    " + s for s in before),
        "    acc = tl.zeros((M, N), dtype=tl.float32)",
        f"    for k in {loop_range}:",
        *("        " + s for s in inside),
        "        acc = " + ("acc + tl.dot(a, b) * (s * r[:, None])" if scaled else
                            "tl.dot(a, b, acc)"),
        *("        " + s for s in after),
        "    tl.store(out_ptr + bat * sob + rm[:, None] * so + rn[None, :], acc,",
        "             mask=(rm[:, None] < rows) & (rn[None, :] < cols))",
    ]
    source = "\n".join(lines) + "\n"
    a_size, b_size, o_size = rows * sa, (cols if b_t else K) * sb, rows * so

    def reference(inputs: dict, nudge: int = 0) -> dict:
        a = inputs["a_ptr"].astype(np.float64).reshape(gb, rows, sa)[:, :, :K]
        if doubled is not None:
            a[:, :, max(K - doubled, 0):] *= 2
        b = inputs["b_ptr"].astype(np.float64).reshape(gb, -1, sb)
        b = b[:, :, :K].transpose(0, 2, 1) if b_t else b[:, :, :cols]
        if scaled:  # each step's product scaled by s[k] and row r[k * M + row % M]
            s, rs = inputs["s_ptr"].astype(np.float64), inputs["r_ptr"].astype(np.float64)
            out = np.zeros((gb, rows, b.shape[2]))
            for k in range(steps):
                part = a[:, :, k * BK:(k + 1) * BK] @ b[:, k * BK:(k + 1) * BK]
                out += part * s[k] * rs[k * M + np.arange(rows) % M][None, :, None]
        else:
            out = a @ b
        r = out.astype(np.float32).reshape(-1)  # exact: quarters, sums below 2**24
        return {"out_ptr": (r, np.ones(r.size, bool))}

    scalars = {"rows": rows, "cols": cols, "K": K, "sa": sa, "sb": sb, "so": so,
               "sab": a_size, "sbb": b_size, "sob": o_size}
    # (drawn apart, as above) the pipeline's depth: two stages and one take other paths
    # through the renderer (a refill's stage `stage ^ 1`; no pipeline at all), deep ones
    # more copies in flight than short loops have iterations; no deeper than an sm_90
    # program's shared memory holds (the launch would refuse it, as Triton's)
    apart = random.Random(seed * 31 + 13)
    stages = fitting(apart.choice([1, 2, 3, 3, 4, 5, 8]))
    if apart.random() < 0.2:  # warps wgmma does not come in (2), or more of them than rows
        warps = apart.choice([2, 16])
    i32 = types["int32"]
    scales = {"s_ptr": (i32, steps), "r_ptr": (i32, steps * M)} if scaled else {}
    return Program(seed, "scaled_dot_loop" if scaled else "dot_loop", source, name,
                   [("a_ptr", "array"), ("b_ptr", "array"), ("out_ptr", "array")]
                   + [(s, "array") for s in scales] + [(s, "i32") for s in scalars]
                   + [("M", "constexpr"), ("N", "constexpr"), ("BK", "constexpr")],
                   {"a_ptr": (dt, gb * a_size), "b_ptr": (dt, gb * b_size), **scales},
                   [Output("out_ptr", f32, gb * o_size, exact=True)],
                   {"M": M, "N": N, "BK": BK}, (gm, gn, gb), warps, 1e-4, reference,
                   scalars, num_stages=stages)


def shared_operand_program(seed: int, rng: random.Random, types: dict) -> Program:
    """The `shared_operand` feature: a loop over blocks of BN rows of x (N x D) whose one
    load feeds two products, as it is and through `tl.trans` (attention's backward reads
    its keys and queries so): x loaded by rows ([BN, D]) or by columns ([D, BN], contiguous
    along D either way), B of the first product and, transposed, B of the second (one of
    them K-major, the other N-major); the second's sums carried over the blocks.  Where every
    product's tile places the block alike, one pipeline stage serves both
    (passes.pipeline._shared_stage).  Quarters in [-4, 4]: each first product is exact in
    fp32, its rounding to the input type reproduced."""
    dt = types[rng.choice(["float16", "float16", "float32"] +
                          (["bfloat16"] * 2 if "bfloat16" in types else []))]
    f32 = types["float32"]
    D, BN, BM = rng.choice([32, 64, 64, 128]), rng.choice([16, 32, 64]), rng.choice([64, 128])
    if dt.name == "float32":  # (within gfx90a's 64 KiB of shared memory)
        D, BN, BM = min(D, 64), min(BN, 32), 64
    warps = rng.choice([4, 8]) if BM == 128 else rng.choice([2, 4, 4])
    stages = rng.choice([1, 2, 3, 4])
    n = rng.randint(1, 3 * BN)
    by_columns = rng.random() < 0.5  # x read as its transpose [D, BN] (still along D)
    name = f"random_kernel_{seed}"
    if by_columns:
        load = "tl.load(x_ptr + d[:, None] + cols[None, :] * D, mask=cols[None, :] < N, " \
               "other=0.0)"
        first, second = "tl.dot(q, x)", "tl.dot(g.to(q.dtype), tl.trans(x), acc)"
    else:
        load = "tl.load(x_ptr + cols[:, None] * D + d[None, :], mask=cols[:, None] < N, " \
               "other=0.0)"
        first, second = "tl.dot(q, tl.trans(x))", "tl.dot(g.to(q.dtype), x, acc)"
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(q_ptr, x_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr, "
        "BN: tl.constexpr):",
        "    d = tl.arange(0, D)",
        "    rm = tl.arange(0, BM)",
        "    q = tl.load(q_ptr + rm[:, None] * D + d[None, :])",
        "    acc = tl.zeros([BM, D], dtype=tl.float32)",
        "    for n0 in range(0, N, BN):",
        "        cols = n0 + tl.arange(0, BN)",
        f"        x = {load}",
        f"        g = {first}",
        f"        acc = {second}",
        "    tl.store(out_ptr + rm[:, None] * D + d[None, :], acc)",
    ]) + "\n"

    def reference(inputs: dict, nudge: int = 0) -> dict:
        q = inputs["q_ptr"].astype(np.float64).reshape(BM, D)
        x = inputs["x_ptr"].astype(np.float64).reshape(-1, D)[:n]
        acc = np.zeros((BM, D))
        for n0 in range(0, n, BN):
            xb = x[n0:n0 + BN]
            g = (q @ xb.T).astype(dt.np).astype(np.float64)
            acc += g @ xb
        r = acc.astype(np.float32).reshape(-1)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "shared_operand", source, name,
                   [("q_ptr", "array"), ("x_ptr", "array"), ("out_ptr", "array"), ("N", "i32"),
                    ("D", "constexpr"), ("BM", "constexpr"), ("BN", "constexpr")],
                   {"q_ptr": (dt, BM * D), "x_ptr": (dt, n * D)},
                   [Output("out_ptr", f32, BM * D, exact=False)],
                   {"D": D, "BM": BM, "BN": BN}, (1,), warps,
                   1e-2 if dt.name == "float32" else 1e-4, reference, {"N": n},
                   num_stages=stages)


def product_meets_load_program(seed: int, rng: random.Random, types: dict) -> Program:
    """The `product_meets_load` feature: a loop over chunks of BV columns where a block
    loaded in the loop meets the chunk's product element by element (fla's WY-representation
    backward: `tl.sum(b_dv_beta * b_v, 1)`), so that it is loaded in the product's
    accumulator layout — read in 16-byte vectors and converted where the columns are
    aligned (passes.coalesce.coalesce_loads), as it is where they are not.  Per block of
    BT rows: p = a @ u stored, s = the row sums over the chunks of an element-wise
    combination of p and v.  Rows and columns ragged."""
    dt = types[rng.choice(["float16", "float16", "float32"] +
                          (["bfloat16"] * 2 if "bfloat16" in types else []))]
    f32 = types["float32"]
    BT, BV = rng.choice([32, 64]), rng.choice([16, 32, 64])
    warps = rng.choice([2, 4, 4, 8])
    stages = rng.choice([1, 2, 3])
    T = rng.randint(1, 3 * BT)
    aligned = rng.random() < 0.75  # rows of 16 bytes' multiples three times in four
    V = rng.randint(1, 3 * BV)
    if aligned:
        V = max(8, V // 8 * 8)
    combine, fn = rng.choice([("p * v", lambda p, v: p * v),
                              ("p * v + v", lambda p, v: p * v + v),
                              ("tl.where(v > 0, p, v)", lambda p, v: np.where(v > 0, p, v))])
    name = f"random_kernel_{seed}"
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(a_ptr, u_ptr, v_ptr, p_ptr, s_ptr, T, V, BT: tl.constexpr, "
        "BV: tl.constexpr):",
        "    o_t = tl.program_id(0) * BT + tl.arange(0, BT)",
        "    m_t = o_t < T",
        "    o_a = tl.arange(0, BT)",
        "    a = tl.load(a_ptr + o_t[:, None] * BT + o_a[None, :], mask=m_t[:, None], other=0.0)",
        "    s = tl.zeros([BT], dtype=tl.float32)",
        "    for i_v in range(tl.cdiv(V, BV)):",
        "        o_v = i_v * BV + tl.arange(0, BV)",
        "        m = m_t[:, None] & (o_v[None, :] < V)",
        "        u = tl.load(u_ptr + o_t[:, None] * V + o_v[None, :], mask=m, other=0.0)",
        "        v = tl.load(v_ptr + o_t[:, None] * V + o_v[None, :], mask=m, other=0.0)",
        "        p = tl.dot(a, u)",
        f"        s += tl.sum({combine}, 1)",
        "        tl.store(p_ptr + o_t[:, None] * V + o_v[None, :], p.to(p_ptr.dtype.element_ty),"
        " mask=m)",
        "    tl.store(s_ptr + o_t, s, mask=m_t)",
    ]) + "\n"
    blocks = -(-T // BT)

    def reference(inputs: dict, nudge: int = 0) -> dict:
        a = inputs["a_ptr"].astype(np.float64).reshape(blocks * BT, BT)
        u = inputs["u_ptr"].astype(np.float64).reshape(T, V)
        v = inputs["v_ptr"].astype(np.float64).reshape(T, V)
        p = np.zeros((T, V))
        for r0 in range(0, T, BT):
            rows = slice(r0, min(r0 + BT, T))
            p[rows] = a[rows, :rows.stop - r0] @ u[rows]
        s = fn(p, v).sum(1)
        stored = p.astype(dt.np).astype(np.float64).reshape(-1)
        return {"p_ptr": (stored, np.ones(stored.size, bool)),
                "s_ptr": (s, np.ones(T, bool))}

    return Program(seed, "product_meets_load", source, name,
                   [("a_ptr", "array"), ("u_ptr", "array"), ("v_ptr", "array"),
                    ("p_ptr", "array"), ("s_ptr", "array"), ("T", "i32"), ("V", "i32"),
                    ("BT", "constexpr"), ("BV", "constexpr")],
                   {"a_ptr": (dt, blocks * BT * BT), "u_ptr": (dt, T * V),
                    "v_ptr": (dt, T * V)},
                   [Output("p_ptr", dt, T * V, exact=False), Output("s_ptr", f32, T, exact=False)],
                   {"BT": BT, "BV": BV}, (blocks,), warps,
                   1e-2 if dt.name == "float32" else 1e-4, reference, {"T": T, "V": V},
                   num_stages=stages)


# the masks of `masked_chain`, each a row's columns kept: its source in the kernel, and the
# same over NumPy's index grids of rows and columns
CHAIN_MASKS = {
    "rm[:, None] >= cols[None, :]": lambda r, c: r >= c,
    "rm[:, None] > cols[None, :]": lambda r, c: r > c,
    "(rm[:, None] >= cols[None, :]) & (rm[:, None] - cols[None, :] < 24)":
        lambda r, c: (r >= c) & (r - c < 24),
}


def masked_chain_program(seed: int, rng: random.Random, types: dict) -> Program:
    """The `masked_chain` feature: a loop over blocks of BN columns whose product q @ k^T,
    masked by its row and column indices (causal, strictly, or a sliding window; by a
    select or by a product with the mask), cast to q's type, is the A of a product that
    accumulates over the loop (`@ v`): causal attention without its softmax, linear
    attention's intra-chunk part.  Where the second product's wait is left to the next
    iteration, ptxas serializes the warpgroup products (C7515) and the compile builds the
    kernel without that (compiler.compile).  The loop runs over every column up to the
    block's last row, or over the block's own columns.  Inputs are quarters in [-4, 4]:
    the scores are exact, their cast rounded as NumPy rounds."""
    dt = types[rng.choice(["float16", "float16", "float32"] +
                          (["bfloat16"] * 2 if "bfloat16" in types else []))]
    D, BM, BN = rng.choice([16, 32, 64, 64]), rng.choice([32, 64, 64, 128]), \
        rng.choice([16, 32, 64])
    warps = rng.choice([2, 4, 4, 8])
    stages = rng.choice([1, 2, 3, 3, 4])
    N = rng.randint(1, 3 * BM)
    cond = rng.choice(sorted(CHAIN_MASKS))
    if rng.random() < 0.25:
        masked = f"s * ({cond}).to(tl.float32)"
    else:
        masked = f"tl.where({cond}, s, 0.0)"
    diagonal = rng.random() < 0.3
    start = "tl.program_id(0) * BM" if diagonal else "0"
    name = f"random_kernel_{seed}"
    source = "\n".join([
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(q_ptr, k_ptr, v_ptr, out_ptr, N, D: tl.constexpr, BM: tl.constexpr, "
        "BN: tl.constexpr):",
        "    rm = tl.program_id(0) * BM + tl.arange(0, BM)",
        "    d = tl.arange(0, D)",
        "    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < N, other=0.0)",
        "    acc = tl.zeros([BM, D], dtype=tl.float32)",
        f"    for n0 in range({start}, tl.minimum((tl.program_id(0) + 1) * BM, N), BN):",
        "        cols = n0 + tl.arange(0, BN)",
        "        live = cols < N",
        "        kt = tl.load(k_ptr + d[:, None] + cols[None, :] * D, mask=live[None, :], "
        "other=0.0)",
        "        v = tl.load(v_ptr + cols[:, None] * D + d[None, :], mask=live[:, None], "
        "other=0.0)",
        "        s = tl.dot(q, kt)",
        f"        s = {masked}",
        "        acc = tl.dot(s.to(q.dtype), v, acc)",
        "    tl.store(out_ptr + rm[:, None] * D + d[None, :], acc, mask=rm[:, None] < N)",
    ]) + "\n"
    blocks = -(-N // BM)
    keep = CHAIN_MASKS[cond]

    def reference(inputs: dict, nudge: int = 0) -> dict:
        q, k, v = (inputs[p].astype(np.float64).reshape(N, D) for p in ("q_ptr", "k_ptr",
                                                                         "v_ptr"))
        out = np.zeros((N, D))
        for r0 in range(0, N, BM):
            rows = np.arange(r0, min(r0 + BM, N))
            # the loop's column blocks: from 0 (or the block's first row) while below both
            # the block's end and N; BN past the last row are masked off or beyond N
            cols = np.arange(r0 if diagonal else 0, min(r0 + BM, N))
            s = q[rows] @ k[cols].T
            s = np.where(keep(rows[:, None], cols[None, :]), s, 0.0)
            out[rows] = s.astype(dt.np).astype(np.float64) @ v[cols]
        r = out.astype(np.float32).reshape(-1)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "masked_chain", source, name,
                   [("q_ptr", "array"), ("k_ptr", "array"), ("v_ptr", "array"),
                    ("out_ptr", "array"), ("N", "i32"), ("D", "constexpr"),
                    ("BM", "constexpr"), ("BN", "constexpr")],
                   {"q_ptr": (dt, N * D), "k_ptr": (dt, N * D), "v_ptr": (dt, N * D)},
                   [Output("out_ptr", types["float32"], N * D, exact=False)],
                   {"D": D, "BM": BM, "BN": BN}, (blocks,), warps,
                   1e-2 if dt.name == "float32" else 1e-4, reference, {"N": N},
                   num_stages=stages)


def batched_block_program(seed: int, rng: random.Random, types: dict) -> Program:
    """The `batched_block` feature: a batched K loop written as Liger's fused MLP writes
    it: x (B, S, K) read through a 3-D tensor descriptor made in the kernel, a block of 1
    along the batch reshaped to the 2-D block the product reads (`tl.reshape`, `.reshape`,
    or a 3-D block pointer), the weights (N, K) through a 2-D descriptor as `w.T`; with a
    second weight array the block feeds two products.  The result is stored through a 3-D
    descriptor, reshaped back to its box (sometimes cast to the inputs' type), or by
    pointers.  Ragged rows (the descriptor's zeros past each batch's rows) and K (past K).
    Where the reshape only drops the batch, the load and the store are the 2-D block's
    (passes.unit_dims), TMA copies of a 3-d map on sm_90 (the descriptors' shapes and
    strides are arguments, whose maps the launch encodes).  Inputs are quarters in
    [-4, 4]: every product and sum is exact."""
    dt = types[rng.choice(["float16", "float16", "float32"] +
                          (["bfloat16"] * 2 if "bfloat16" in types else []))]
    f32 = types["float32"]
    BM, BN, BK = rng.choice([64, 64, 128]), rng.choice([64, 128]), rng.choice([32, 64])
    if dt.name == "float32":  # (within gfx90a's 64 KiB of shared memory)
        BM, BN, BK = 64, 64, 32
    warps = rng.choice([4, 4, 8])
    stages = rng.choice([1, 2, 3, 3, 4])
    step = 16 // dt.np.itemsize  # (a descriptor's strides are 16-byte multiples)
    B, S, K = rng.randint(1, 3), rng.randint(1, 3 * BM), step * rng.randint(1, 160 // step)
    N = BN * rng.choice([1, 2])
    two = rng.random() < 0.4
    load = rng.choice(["reshape", "method", "block_ptr"])
    cast = rng.random() < 0.3 and not two  # (a 16-bit sum of quarters is exact below 2^11)
    by_pointers = rng.random() < 0.25
    out_dt = dt if cast else f32
    name = f"random_kernel_{seed}"
    x_read = {
        "reshape": "tl.reshape(xd.load([b, pid_m * BM, k]), [BM, BK])",
        "method": "xd.load([b, pid_m * BM, k]).reshape(BM, BK)",
        "block_ptr": "tl.load(tl.advance(xp, (0, 0, k)), boundary_check=(0, 1, 2), "
                     "padding_option='zero').reshape(BM, BK)"}[load]
    lines = [
        "import tilecc", "import tilecc.language as tl", "", "",
        "@tilecc.jit",
        f"def {name}(x_ptr, w_ptr, v_ptr, out_ptr, B, S, K, x_batch, out_batch, "
        "N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):",
        "    pid_m, pid_n, b = tl.program_id(0), tl.program_id(1), tl.program_id(2)",
        "    xd = tl.make_tensor_descriptor(x_ptr, [B, S, K], [x_batch, K, 1], [1, BM, BK])",
        "    xp = tl.make_block_ptr(x_ptr, (B, S, K), (x_batch, K, 1), (b, pid_m * BM, 0), "
        "(1, BM, BK), (2, 1, 0))",
        "    wd = tl.make_tensor_descriptor(w_ptr, [N, K], [K, 1], [BN, BK])",
        "    vd = tl.make_tensor_descriptor(v_ptr, [N, K], [K, 1], [BN, BK])",
        "    acc = tl.zeros([BM, BN], dtype=tl.float32)",
        "    acc2 = tl.zeros([BM, BN], dtype=tl.float32)",
        "    for k in range(0, K, BK):",
        f"        x = {x_read}",
        "        acc = tl.dot(x, tl.trans(wd.load([pid_n * BN, k])), acc)",
    ]
    if two:
        lines.append("        acc2 = tl.dot(x, vd.load([pid_n * BN, k]).T, acc2)")
    lines.append("    res = acc + acc2" if two else "    res = acc")
    if by_pointers:
        lines += ["    rows = pid_m * BM + tl.arange(0, BM)",
                  "    cols = pid_n * BN + tl.arange(0, BN)",
                  "    tl.store(out_ptr + b * S * N + rows[:, None] * N + cols[None, :], "
                  f"res{'.to(x_ptr.dtype.element_ty)' if cast else ''}, "
                  "mask=rows[:, None] < S)"]
    else:
        lines += ["    od = tl.make_tensor_descriptor(out_ptr, [B, S, N], [out_batch, N, 1], "
                  "[1, BM, BN])",
                  "    od.store([b, pid_m * BM, pid_n * BN], tl.reshape(res, [1, BM, BN])"
                  f"{'.to(x_ptr.dtype.element_ty)' if cast else ''})"]
    source = "\n".join(lines) + "\n"

    def reference(inputs: dict, nudge: int = 0) -> dict:
        x = inputs["x_ptr"].astype(np.float64).reshape(B, S, K)
        w = inputs["w_ptr"].astype(np.float64).reshape(N, K)
        out = x @ w.T
        if two:
            out = out + x @ inputs["v_ptr"].astype(np.float64).reshape(N, K).T
        r = out.astype(out_dt.np).reshape(-1)
        return {"out_ptr": (r, np.ones(r.size, bool))}

    return Program(seed, "batched_block", source, name,
                   [("x_ptr", "array"), ("w_ptr", "array"), ("v_ptr", "array"),
                    ("out_ptr", "array"), ("B", "i32"), ("S", "i32"), ("K", "i32"),
                    ("x_batch", "i32"), ("out_batch", "i32"), ("N", "constexpr"), ("BM", "constexpr"), ("BN", "constexpr"),
                    ("BK", "constexpr")],
                   {"x_ptr": (dt, B * S * K), "w_ptr": (dt, N * K), "v_ptr": (dt, N * K)},
                   [Output("out_ptr", out_dt, B * S * N, exact=False)],
                   {"N": N, "BM": BM, "BN": BN, "BK": BK}, (-(-S // BM), N // BN, B), warps,
                   1e-2 if dt.name == "float32" else 1e-4, reference,
                   {"B": B, "S": S, "K": K, "x_batch": S * K, "out_batch": S * N},
                   num_stages=stages)
