"""What a recurrent predictor over chunk ids could add to chunk-cm's -9: an estimate.

An LSTM reads the chunks one at a time (each chunk's id, embedded) and predicts every decision
of the next chunk down the rank tree: a logit per tree node, from the hidden state (the tree
plays the softmax's part, so a chunk costs its ~9 decisions, not a distribution over the
dictionary). Its logit is mixed with the model's final probability by a small online mixer
(weights per tree node and confidence of the model), and both are charged what they would
cost. Float arithmetic, fastmath: an estimate, not a format (an archive needs integers).

Input: the decisions written by dump_decisions.py.

    python lstm_estimate.py decisions.npz --hidden 32
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

#: the mixer's weight sets: the first 255 tree nodes and one for the rest, by 8 classes of the
#: model's confidence
MIX_NODES = 256
CONFIDENCE_CLASSES = 8


@numba.njit(fastmath=True, cache=True)
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@numba.njit(fastmath=True, cache=True)
def estimate(node, bit, p_model, chunk, ranks, n_ranks, n_nodes, hidden, embed, window, rate, out_rate, mix_rate):
    """(the model's bytes, mixed bytes, the LSTM's alone). Truncated backpropagation through
    ``window`` chunks, Adam on the gates, plain steps on the node outputs and the mixer."""
    np.random.seed(1)
    width = embed + hidden
    w = (np.random.randn(4 * hidden, width) / np.sqrt(width)).astype(np.float32)
    b = np.zeros(4 * hidden, np.float32)
    b[hidden: 2 * hidden] = 1.0  # forget gates start open
    emb = (np.random.randn(n_ranks + 1, embed) * 0.1).astype(np.float32)
    v = np.zeros((n_nodes, hidden), np.float32)
    bv = np.zeros(n_nodes, np.float32)
    mw, vw = np.zeros_like(w), np.zeros_like(w)
    mb, vb = np.zeros_like(b), np.zeros_like(b)
    xs = np.zeros((window, width), np.float32)
    xi = np.zeros(window, np.int64)
    gates = np.zeros((window, 4 * hidden), np.float32)
    cell = np.zeros((window, hidden), np.float32)
    cell_before = np.zeros((window, hidden), np.float32)
    dh_out = np.zeros((window, hidden), np.float32)
    h = np.zeros(hidden, np.float32)
    c = np.zeros(hidden, np.float32)
    z = np.zeros(4 * hidden, np.float32)
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    mix = np.zeros((MIX_NODES * CONFIDENCE_CLASSES, 3))
    mix[:, 0] = 1.0
    cost_model = cost_mixed = cost_alone = 0.0
    k = 0
    s = 0
    for t in range(ranks.size):
        xi[s] = ranks[t - 1] if t > 0 else n_ranks
        xs[s, :embed] = emb[xi[s]]
        xs[s, embed:] = h
        for r in range(4 * hidden):
            acc = b[r]
            for j in range(width):
                acc += w[r, j] * xs[s, j]
            z[r] = acc
        for j in range(hidden):
            ig, fg = sigmoid(z[j]), sigmoid(z[hidden + j])
            og, gg = sigmoid(z[2 * hidden + j]), np.tanh(z[3 * hidden + j])
            gates[s, j], gates[s, hidden + j], gates[s, 2 * hidden + j], gates[s, 3 * hidden + j] = ig, fg, og, gg
            cell_before[s, j] = c[j]
            c[j] = fg * c[j] + ig * gg
            cell[s, j] = c[j]
            h[j] = og * np.tanh(c[j])
            dh_out[s, j] = 0.0
        while k < node.size and chunk[k] == t:  # the chunk's decisions
            nd, y, p = node[k], bit[k], p_model[k] / 4096.0
            logit = bv[nd]
            for j in range(hidden):
                logit += v[nd, j] * h[j]
            logit = max(-30.0, min(30.0, logit))
            q = sigmoid(logit)
            st = np.log(p / (1 - p))
            m_set = min(nd, MIX_NODES - 1) * CONFIDENCE_CLASSES + min(CONFIDENCE_CLASSES - 1, int(abs(st) * 1.2))
            m = sigmoid(mix[m_set, 0] * st + mix[m_set, 1] * logit + mix[m_set, 2])
            m = min(max(m, 1.0 / 4096), 4095.0 / 4096)
            cost_model -= np.log2(p if y else 1 - p)
            cost_mixed -= np.log2(m if y else 1 - m)
            cost_alone -= np.log2(max(q if y else 1 - q, 1e-6))
            e = y - m
            mix[m_set, 0] += mix_rate * e * st
            mix[m_set, 1] += mix_rate * e * logit
            mix[m_set, 2] += mix_rate * e
            e = y - q
            for j in range(hidden):
                dh_out[s, j] += e * v[nd, j]
                v[nd, j] += out_rate * e * h[j]
            bv[nd] += out_rate * e
            k += 1
        s += 1
        if s < window and t < ranks.size - 1:
            continue
        gw[:] = 0
        gb[:] = 0
        dh_next = np.zeros(hidden, np.float32)
        dc_next = np.zeros(hidden, np.float32)
        dz = np.zeros(4 * hidden, np.float32)
        for u in range(s - 1, -1, -1):  # back through the window (ascending the log-likelihood)
            for j in range(hidden):
                dh = dh_out[u, j] + dh_next[j]
                ig, fg = gates[u, j], gates[u, hidden + j]
                og, gg = gates[u, 2 * hidden + j], gates[u, 3 * hidden + j]
                tc = np.tanh(cell[u, j])
                dc = dh * og * (1 - tc * tc) + dc_next[j]
                dz[j] = dc * gg * ig * (1 - ig)
                dz[hidden + j] = dc * cell_before[u, j] * fg * (1 - fg)
                dz[2 * hidden + j] = dh * tc * og * (1 - og)
                dz[3 * hidden + j] = dc * ig * (1 - gg * gg)
                dc_next[j] = dc * fg
            dx = np.zeros(width, np.float32)
            for r in range(4 * hidden):
                gb[r] += dz[r]
                for j in range(width):
                    gw[r, j] += dz[r] * xs[u, j]
                    dx[j] += w[r, j] * dz[r]
            for j in range(embed):
                emb[xi[u], j] += rate * 10 * max(-1.0, min(1.0, dx[j]))
            dh_next[:] = dx[embed:]
        for r in range(4 * hidden):
            g = max(-5.0, min(5.0, gb[r]))
            mb[r] = 0.9 * mb[r] + 0.1 * g
            vb[r] = 0.999 * vb[r] + 0.001 * g * g
            b[r] += rate * mb[r] / (np.sqrt(vb[r]) + 1e-6)
            for j in range(width):
                g = max(-5.0, min(5.0, gw[r, j]))
                mw[r, j] = 0.9 * mw[r, j] + 0.1 * g
                vw[r, j] = 0.999 * vw[r, j] + 0.001 * g * g
                w[r, j] += rate * mw[r, j] / (np.sqrt(vw[r, j]) + 1e-6)
        s = 0
    return cost_model / 8, cost_mixed / 8, cost_alone / 8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("decisions", help="an .npz written by dump_decisions.py")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--embed", type=int, default=32)
    ap.add_argument("--window", type=int, default=16, help="chunks backpropagated through at a time")
    ap.add_argument("--rate", type=float, default=0.005, help="Adam's step for the gates")
    ap.add_argument("--out-rate", type=float, default=0.05, help="the node outputs' step")
    a = ap.parse_args()
    d = np.load(a.decisions)
    node = d["node"].astype(np.int64)
    start = time.perf_counter()
    model, mixed, alone = estimate(node, d["bit"].astype(np.int64), d["p"].astype(np.int64), d["chunk"].astype(np.int64),
                                   d["ranks"].astype(np.int64), int(d["n_ranks"]), int(node.max()) + 1, a.hidden,
                                   a.embed, a.window, a.rate, a.out_rate, 0.002)
    print(f"{a.decisions} hidden {a.hidden}: model {model:,.0f} B, mixed {mixed:,.0f} B ({100 * (mixed / model - 1):+.2f}%),"
          f" the LSTM alone {alone:,.0f} B, {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
