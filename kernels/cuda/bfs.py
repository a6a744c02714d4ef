"""BFS levels on the GPU, all decided on the device: top-down (push from a frontier queue, a vertex
claimed by compare-and-swap on its parent), bottom-up (pull: every unvisited vertex scans its
in-neighbours against a byte-per-vertex frontier map and takes the first hit in CSC order), and the
linear-algebra steps of ``spmsv`` (every newly reached vertex takes its highest-labelled frontier
neighbour: ``atomic.max`` when pushing, a max over the whole in-list when pulling).

A search is a sequence of phases per level: ``decide`` (one thread: the direction rule of
graphkern.traversal, from the counters the last level left on the device), ``convert`` (queue to
frontier map before a pull, map to queue after the last pull), ``step`` and ``commit`` (the spmsv push
and the pulls of in-list hubs combine partial results with atomics, then commit them after a barrier).
:func:`search_levels` runs every level in one cooperative launch with a grid barrier between phases, so
the host waits once per search; :func:`decide_kernel`, :func:`convert_kernel`, :func:`step_kernel` and
:func:`commit_kernel` are the same phases as separate launches for devices without cooperative launch.

Work splitting (Merrill's and Gunrock's thread/warp/block/grid expansion): a frontier vertex is queued in
one of four bins by out-degree, and each bin is expanded by a group of threads of its own width: a
thread (degree below ``thresholds[0]``), a group of ``width`` threads (a warp on a GPU), a block (from
``thresholds[1]``), the whole grid (from ``thresholds[2]``). Pulls split the same way by in-degree (a
thread, a group from ``thresholds[3]``, the grid from ``thresholds[4]``), over
lists of those vertices made once per graph (:func:`list_heavy_in_rows`). Groups are cut from the global
thread index, so any launch shape is correct (a group never waits for its lanes: the lanes' results meet
in atomics), and no warp primitive is needed.

Queues: bins 0 and 1 share one array of ``n`` (bin 0 fills from the front, bin 1 from the back), bins 2
and 3 another; two of each, by level parity. Counters ``ctr[parity]``: 0 vertices found by a pull, 1
out-edges of the new frontier, 2-5 the bin sizes, 6 vertices touched by an spmsv push.
"""

from __future__ import annotations

from numba import cuda

# The degree thresholds and the group width reach the kernels as arguments (``thresholds``, ``width``),
# from the knobs cuda_bfs_* of graphkern.tuning (the driver, graphkern/_cuda/bfs.py, reads them).

# algorithms
DIRECTION_OPTIMIZING, TOP_DOWN, BOTTOM_UP, SPMSV = 0, 1, 2, 3
ALGORITHM_CODES = {"direction_optimizing": DIRECTION_OPTIMIZING, "top_down": TOP_DOWN, "bottom_up": BOTTOM_UP,
                   "spmsv": SPMSV}
# step modes (also the first column of the level log)
START, PUSH, PULL, STOP = 0, 1, 2, 3
# conversions before a step
NONE, MARK, UNMARK = 0, 1, 2
# state slots
ST_LEVEL, ST_PREV, ST_MODE, ST_CONV, ST_EDGES_TO_CHECK, ST_OLD, ST_FRONT, ST_LAST_SCOUT = range(8)
STATE_SIZE = 8
COUNTERS = 8


@cuda.jit
def init_search(parents, levels, source, num_edges, indptr, qa, qb, ctr, st, thresholds):
    """Parents and levels unreached but for ``source``; the state and counters of a new search, with the
    source queued in its bin of the parity-0 queues."""
    for v in range(cuda.grid(1), parents.size, cuda.gridsize(1)):
        parents[v] = source if v == source else -1
        levels[v] = 0 if v == source else -1
    if cuda.grid(1) == 0:
        for i in range(ctr.shape[1]):
            ctr[0, i] = 0
            ctr[1, i] = 0
        for i in range(st.size):
            st[i] = 0
        st[ST_EDGES_TO_CHECK] = num_edges
        st[ST_LAST_SCOUT] = -1
        _enqueue(source, 0, indptr, qa, qb, ctr, parents.size, thresholds)


@cuda.jit(device=True)
def _enqueue(v, parity, indptr, qa, qb, ctr, n, thresholds):
    d = indptr[v + 1] - indptr[v]
    if d < thresholds[0]:
        qa[parity, cuda.atomic.add(ctr, (parity, 2), 1)] = v
    elif d < thresholds[1]:
        qa[parity, n - 1 - cuda.atomic.add(ctr, (parity, 3), 1)] = v
    elif d < thresholds[2]:
        qb[parity, cuda.atomic.add(ctr, (parity, 4), 1)] = v
    else:
        qb[parity, n - 1 - cuda.atomic.add(ctr, (parity, 5), 1)] = v


@cuda.jit(device=True)
def _decide(st, ctr, log, indptr, source, algorithm, n, alpha, beta):
    """The direction rule of graphkern.traversal's loop, one level at a time (one thread runs it):
    top-down while the frontier's out-edges ``scout <= edges_to_check / alpha`` or the frontier's
    out-edges do not grow (``scout <= `` the last top-down level's), else bottom-up until a pull level
    finds fewer vertices than the last and at most ``n / beta``; leaving the pulls, the frontier map
    becomes a queue again (``UNMARK``), ``scout`` counts as 1 and no last top-down level. Logs each level as
    ``(mode, frontier size in, found)``; ``found`` of a level is written when the next one is decided."""
    prev = st[ST_PREV]
    if prev == STOP:
        st[ST_CONV] = NONE  # launches past the end (the fallback runs levels in batches) do nothing
        return
    level = st[ST_LEVEL]
    conv = NONE
    pulling = False
    scout = 0
    if prev == START:
        size = 1
        scout = indptr[source + 1] - indptr[source]
    else:
        slot = level % 2
        if prev == PUSH:
            size = ctr[slot, 2] + ctr[slot, 3] + ctr[slot, 4] + ctr[slot, 5]
            scout = ctr[slot, 1]
        else:
            size = ctr[slot, 0]
            if size == 0:
                conv = UNMARK  # no more levels; the map of the level before is cleared
            elif algorithm != BOTTOM_UP and not (size >= st[ST_OLD] or size > n / beta):
                conv = UNMARK
                scout = 1
                st[ST_LAST_SCOUT] = -1
            else:
                pulling = True
        log[level, 2] = size
    st[ST_FRONT] = level % 2
    if size == 0:
        st[ST_PREV] = STOP
        st[ST_MODE] = STOP
        st[ST_CONV] = conv
        return
    if pulling:
        mode = PULL
    elif algorithm == BOTTOM_UP or ((algorithm == DIRECTION_OPTIMIZING or algorithm == SPMSV)
                                    and scout > st[ST_EDGES_TO_CHECK] / alpha and scout > st[ST_LAST_SCOUT]):
        mode = PULL
        # back to a pull right after leaving one: the map already holds this frontier
        conv = NONE if conv == UNMARK else MARK
    else:
        mode = PUSH
        st[ST_EDGES_TO_CHECK] -= scout
        st[ST_LAST_SCOUT] = scout
    level += 1
    st[ST_LEVEL] = level
    st[ST_PREV] = mode
    st[ST_MODE] = mode
    st[ST_CONV] = conv
    st[ST_OLD] = size
    log[level, 0] = mode
    log[level, 1] = size
    log[level, 2] = 0
    for i in range(ctr.shape[1]):
        ctr[level % 2, i] = 0


@cuda.jit(device=True)
def _convert(st, ctr, indptr, qa, qb, bm, n, thresholds):
    """``MARK``: the queued frontier into its map (the maps are all zero between pulls). ``UNMARK``: the
    frontier map into the queue bins, clearing both maps on the way."""
    conv = st[ST_CONV]
    fp = st[ST_FRONT]
    t = cuda.grid(1)
    gs = cuda.gridsize(1)
    if conv == MARK:
        for i in range(t, ctr[fp, 2], gs):
            bm[fp, qa[fp, i]] = 1
        for i in range(t, ctr[fp, 3], gs):
            bm[fp, qa[fp, n - 1 - i]] = 1
        for i in range(t, ctr[fp, 4], gs):
            bm[fp, qb[fp, i]] = 1
        for i in range(t, ctr[fp, 5], gs):
            bm[fp, qb[fp, n - 1 - i]] = 1
    elif conv == UNMARK:
        for v in range(t, n, gs):
            if bm[fp, v]:
                _enqueue(v, fp, indptr, qa, qb, ctr, n, thresholds)
            bm[0, v] = 0
            bm[1, v] = 0


@cuda.jit(device=True)
def _visit(u, v, spmsv, level, nxt, indptr, parents, levels, pick, touched, qa, qb, ctr, n, thresholds):
    """Edge ``u -> v`` of a push; returns the out-degree of ``v`` when this call claimed it (the caller
    adds its claims' out-edges to ``ctr[nxt, 1]`` once, not once per claim)."""
    if parents[v] != -1:
        return 0
    if spmsv:
        if cuda.atomic.max(pick, v, u) == -1:  # the first to touch v lists it for the commit
            touched[cuda.atomic.add(ctr, (nxt, 6), 1)] = v
    elif cuda.atomic.cas(parents, v, -1, u) == -1:
        levels[v] = level
        _enqueue(v, nxt, indptr, qa, qb, ctr, n, thresholds)
        return indptr[v + 1] - indptr[v]
    return 0


@cuda.jit(device=True)
def _expand(u, lane, w, spmsv, level, nxt, indptr, indices, parents, levels, pick, touched, qa, qb, ctr, n,
            thresholds):
    """One lane's share (positions ``lane, lane + w, ...``) of the out-edges of ``u``; the claims' out-edges."""
    scout = 0
    for j in range(indptr[u] + lane, indptr[u + 1], w):
        scout += _visit(u, indices[j], spmsv, level, nxt, indptr, parents, levels, pick, touched, qa, qb, ctr, n,
                        thresholds)
    return scout


@cuda.jit(device=True)
def _push(st, ctr, indptr, indices, parents, levels, pick, touched, qa, qb, n, spmsv, thresholds, width):
    """Expand every bin of the frontier queue, each by groups of its own width (see the module notes)."""
    level = st[ST_LEVEL]
    fp = (level - 1) % 2
    nxt = level % 2
    t = cuda.grid(1)
    gs = cuda.gridsize(1)
    scout = 0
    for i in range(t, ctr[fp, 2], gs):  # a thread per vertex
        scout += _expand(qa[fp, i], 0, 1, spmsv, level, nxt, indptr, indices, parents, levels, pick, touched, qa, qb,
                         ctr, n, thresholds)
    w = min(width, gs)  # a group of w threads per vertex; the last gs % w threads sit this bin out
    if t // w < gs // w:
        for k in range(t // w, ctr[fp, 3], gs // w):
            scout += _expand(qa[fp, n - 1 - k], t % w, w, spmsv, level, nxt, indptr, indices, parents, levels, pick,
                             touched, qa, qb, ctr, n, thresholds)
    for k in range(cuda.blockIdx.x, ctr[fp, 4], cuda.gridDim.x):  # a block per vertex
        scout += _expand(qb[fp, k], cuda.threadIdx.x, cuda.blockDim.x, spmsv, level, nxt, indptr, indices, parents,
                         levels, pick, touched, qa, qb, ctr, n, thresholds)
    for k in range(ctr[fp, 5]):  # the whole grid per vertex
        scout += _expand(qb[fp, n - 1 - k], t, gs, spmsv, level, nxt, indptr, indices, parents, levels, pick, touched,
                         qa, qb, ctr, n, thresholds)
    if scout:  # once per thread: the counters are hot addresses
        cuda.atomic.add(ctr, (nxt, 1), scout)


@cuda.jit(device=True)
def _spmsv_commit(st, ctr, indptr, parents, levels, pick, touched, qa, qb, n, thresholds):
    """Every vertex an spmsv push touched takes the highest frontier in-neighbour ``pick`` holds."""
    level = st[ST_LEVEL]
    nxt = level % 2
    scout = 0
    for i in range(cuda.grid(1), ctr[nxt, 6], cuda.gridsize(1)):
        v = touched[i]
        parents[v] = pick[v]
        levels[v] = level
        pick[v] = -1
        _enqueue(v, nxt, indptr, qa, qb, ctr, n, thresholds)
        scout += indptr[v + 1] - indptr[v]
    if scout:
        cuda.atomic.add(ctr, (nxt, 1), scout)


@cuda.jit(device=True)
def _heavy_pull(v, lane, w, front, in_indptr, in_indices, parents, pick, spmsv):
    """One lane's part of the in-list of an unvisited heavy vertex ``v``, into ``pick[v]`` by
    ``atomic.max``: spmsv the highest frontier in-neighbour; bottom-up ``E - j`` for the first position
    ``j`` whose in-neighbour is in the frontier (lanes stop once an earlier position is known)."""
    if parents[v] != -1:
        return
    num = in_indices.size
    if spmsv:
        best = -1
        for j in range(in_indptr[v] + lane, in_indptr[v + 1], w):
            u = in_indices[j]
            if u > best and front[u]:
                best = u
        if best >= 0:
            cuda.atomic.max(pick, v, best)
    else:
        for j in range(in_indptr[v] + lane, in_indptr[v + 1], w):
            if pick[v] > num - j:
                break
            if front[in_indices[j]]:
                cuda.atomic.max(pick, v, num - j)
                break


@cuda.jit(device=True)
def _pull(st, ctr, in_indptr, in_indices, out_indptr, parents, levels, pick, bm, heavy, heavy_ctr, n, spmsv,
          pull_group, width):
    """Pull: vertices with in-degree below ``pull_group`` scan their in-lists in one thread (bottom-up
    stops at the first frontier in-neighbour in CSC order; spmsv keeps the highest); the heavy lists go
    to groups (:func:`_heavy_pull`) and are committed by :func:`_pull_commit`."""
    level = st[ST_LEVEL]
    fp = (level - 1) % 2
    nxt = level % 2
    t = cuda.grid(1)
    gs = cuda.gridsize(1)
    found = 0
    scout = 0
    for v in range(t, n, gs):
        bm[nxt, v] = 0
        if parents[v] != -1:
            continue
        start = in_indptr[v]
        end = in_indptr[v + 1]
        if end - start >= pull_group:
            continue
        pick_u = -1
        for j in range(start, end):
            u = in_indices[j]
            if bm[fp, u] and u > pick_u:
                pick_u = u
                if not spmsv:
                    break
        if pick_u >= 0:
            parents[v] = pick_u
            levels[v] = level
            bm[nxt, v] = 1
            found += 1
            scout += out_indptr[v + 1] - out_indptr[v]
    if found:
        cuda.atomic.add(ctr, (nxt, 0), found)
        cuda.atomic.add(ctr, (nxt, 1), scout)
    front = bm[fp]
    w = min(width, gs)
    group = t // w
    if group < gs // w:
        for k in range(group, heavy_ctr[0], gs // w):
            _heavy_pull(heavy[k], t % w, w, front, in_indptr, in_indices, parents, pick, spmsv)
    for k in range(heavy_ctr[1]):
        _heavy_pull(heavy[n - 1 - k], t, gs, front, in_indptr, in_indices, parents, pick, spmsv)


@cuda.jit(device=True)
def _pull_commit(st, ctr, in_indices, out_indptr, parents, levels, pick, bm, heavy, heavy_ctr, n, spmsv):
    level = st[ST_LEVEL]
    nxt = level % 2
    num = in_indices.size
    found = 0
    scout = 0
    for k in range(cuda.grid(1), heavy_ctr[0] + heavy_ctr[1], cuda.gridsize(1)):
        v = heavy[k] if k < heavy_ctr[0] else heavy[n - 1 - (k - heavy_ctr[0])]
        key = pick[v]
        if key >= 0:
            pick[v] = -1
            parents[v] = key if spmsv else in_indices[num - key]
            levels[v] = level
            bm[nxt, v] = 1
            found += 1
            scout += out_indptr[v + 1] - out_indptr[v]
    if found:
        cuda.atomic.add(ctr, (nxt, 0), found)
        cuda.atomic.add(ctr, (nxt, 1), scout)


@cuda.jit(device=True)
def _step(st, ctr, indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
          heavy_ctr, n, spmsv, thresholds, width):
    if st[ST_MODE] == PUSH:
        _push(st, ctr, indptr, indices, parents, levels, pick, touched, qa, qb, n, spmsv, thresholds, width)
    elif st[ST_MODE] == PULL:
        _pull(st, ctr, in_indptr, in_indices, indptr, parents, levels, pick, bm, heavy, heavy_ctr, n, spmsv,
              thresholds[3], width)


@cuda.jit(device=True)
def _commit(st, ctr, indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy, heavy_ctr, n, spmsv,
            thresholds):
    if st[ST_MODE] == PUSH:
        if spmsv:
            _spmsv_commit(st, ctr, indptr, parents, levels, pick, touched, qa, qb, n, thresholds)
    elif st[ST_MODE] == PULL:
        _pull_commit(st, ctr, in_indices, indptr, parents, levels, pick, bm, heavy, heavy_ctr, n, spmsv)


@cuda.jit
def search_levels(indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
                  heavy_ctr, ctr, st, log, source, algorithm, num_edges, alpha, beta, thresholds, width):
    """Every level of a search in one cooperative launch: the phases of a level are separated by grid
    barriers, and every thread reads the mode ``decide`` left in ``st`` after the barrier, so all take
    the same branches and meet the same barriers. At most ``max_cooperative_grid_blocks`` blocks."""
    grid = cuda.cg.this_grid()
    n = parents.size
    spmsv = algorithm == SPMSV
    while True:
        if cuda.grid(1) == 0:
            _decide(st, ctr, log, indptr, source, algorithm, n, alpha, beta)
        grid.sync()
        mode = st[ST_MODE]
        if st[ST_CONV] != NONE:
            _convert(st, ctr, indptr, qa, qb, bm, n, thresholds)
            grid.sync()
        if mode == STOP:
            return
        _step(st, ctr, indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
              heavy_ctr, n, spmsv, thresholds, width)
        grid.sync()
        if mode == PULL or spmsv:
            _commit(st, ctr, indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy, heavy_ctr, n,
                    spmsv, thresholds)
            grid.sync()


@cuda.jit
def decide_kernel(st, ctr, log, indptr, source, algorithm, n, alpha, beta):
    if cuda.grid(1) == 0:
        _decide(st, ctr, log, indptr, source, algorithm, n, alpha, beta)


@cuda.jit
def convert_kernel(st, ctr, indptr, qa, qb, bm, thresholds):
    if st[ST_CONV] != NONE:
        _convert(st, ctr, indptr, qa, qb, bm, bm.shape[1], thresholds)


@cuda.jit
def step_kernel(indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
                heavy_ctr, ctr, st, algorithm, thresholds, width):
    if st[ST_MODE] != STOP:
        _step(st, ctr, indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
              heavy_ctr, parents.size, algorithm == SPMSV, thresholds, width)


@cuda.jit
def commit_kernel(indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy, heavy_ctr, ctr, st,
                  algorithm, thresholds):
    if st[ST_MODE] != STOP:
        _commit(st, ctr, indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy, heavy_ctr,
                parents.size, algorithm == SPMSV, thresholds)


@cuda.jit
def list_heavy_in_rows(in_indptr, heavy, heavy_ctr, pull_group, pull_grid):
    """Vertices with in-degree from ``pull_group`` (front of ``heavy``) and from ``pull_grid`` (back), once
    per graph: the pulls hand their in-lists to groups of threads."""
    n = heavy.size
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        d = in_indptr[v + 1] - in_indptr[v]
        if d >= pull_grid:
            heavy[n - 1 - cuda.atomic.add(heavy_ctr, 1, 1)] = v
        elif d >= pull_group:
            heavy[cuda.atomic.add(heavy_ctr, 0, 1)] = v
