"""The Plotly figures: chunk-length histogram, semantic-chunking similarity curve, PCA scatter (2-D/3-D), rank
bump chart, evaluation bars.

Each function takes what rag/ computed and only draws it. Drawing choices made here: the histogram's bins
(whole characters, so its count axis can step by whole chunks) and where the PCA's text labels go
(`place_labels`, a greedy pick among 8 spots around each marker so labels do not sit on each other).
Not handled here: the numbers (rag/index/projection.py, rag/ingest/preview.py, rag/search/ranktable.py, rag/evaluate/evaluation.py).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from rag.evaluate.evaluation import StrategyReport
from rag.index.projection import EmbeddingMap

from .i18n import tr

QUERY_SYMBOLS = ("diamond", "x", "cross", "square", "triangle-up", "star")
QUERY_COLOURS = ("#dc2626", "#9333ea", "#0891b2", "#ca8a04", "#16a34a", "#db2777")


def _wrap(text: str, width: int = 40, limit: int = 240) -> str:
    text = " ".join(text.split())[:limit]
    return "<br>".join(text[i : i + width] for i in range(0, len(text), width))


def length_histogram(lengths: Sequence[int], target: int | None = None, max_bins: int = 30) -> go.Figure:
    """Chunk lengths in at most `max_bins` bins of whole characters. The bins are set here, not left to
    Plotly, so the tallest bar is known: a count axis must not show fractions (0.2, 0.4 ...)."""
    lengths = [int(n) for n in lengths]
    lo, hi = (min(lengths), max(lengths)) if lengths else (0, 1)
    size = max(1, math.ceil((hi - lo + 1) / max_bins))
    tallest = max(Counter((n - lo) // size for n in lengths).values(), default=1)
    fig = go.Figure(go.Histogram(x=lengths, xbins=dict(start=lo - 0.5, end=hi + 0.5, size=size),
                                 marker_color="#3b82f6"))
    # Plotly picks steps of 0.5 or 0.2 for a short axis; a count axis steps by whole chunks.
    fig.update_yaxes(tick0=0, dtick=1 if tallest <= 10 else None, tickformat="d")
    if target:
        fig.add_vline(x=target, line_dash="dash", line_color="#dc2626", annotation_position="top",
                      annotation_text=tr(zh=f"目标 {target}", en=f"target {target}"))
    fig.update_layout(
        height=280, margin=dict(l=10, r=10, t=30, b=10), bargap=0.05,
        xaxis_title=tr(zh="块长度（字符）chunk length (characters)", en="chunk length (characters)"),
        yaxis_title=tr(zh="块数 chunks", en="chunks"),
    )
    return fig


# Where a marker's text label may go, in order of preference, as the offset of the label's centre from
# the marker in units of (marker radius + half the label's width, marker radius + half its height).
LABEL_SPOTS = {
    "top center": (0, 1), "middle right": (1, 0), "bottom center": (0, -1), "middle left": (-1, 0),
    "top right": (0.8, 0.8), "top left": (-0.8, 0.8), "bottom right": (0.8, -0.8), "bottom left": (-0.8, -0.8),
}
PLOT_PX = (760, 540)  # roughly the 2-D plot area (width, height) in pixels, for judging overlaps


def similarity_curve(curve, text: str) -> go.Figure:
    """Adjacent-sentence cosine along a document (semantic chunking), the threshold as a dashed line, and the
    boundaries that cut marked in red; hovering a point shows the two sentences it compares."""
    x = list(range(1, len(curve.similarity) + 1))
    hover = [_wrap(text[curve.sentences[i][0]:curve.sentences[i][1]], 40, 120) + "<br>⟷<br>"
             + _wrap(text[curve.sentences[i + 1][0]:curve.sentences[i + 1][1]], 40, 120) for i in range(len(x))]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=curve.similarity, mode="lines+markers", name=tr(zh="相邻句相似度", en="adjacent cosine"),
                             line={"color": "#2563eb"}, hovertext=hover, hoverinfo="text+y"))
    cut = set(curve.breaks)
    fig.add_trace(go.Scatter(x=[i + 1 for i in sorted(cut)], y=[curve.similarity[i] for i in sorted(cut)],
                             mode="markers", name=tr(zh="切分点 breakpoint", en="breakpoint"),
                             marker={"color": "#dc2626", "size": 11, "symbol": "x"}))
    fig.add_hline(y=curve.threshold, line_dash="dash", line_color="#64748b",
                  annotation_text=tr(zh=f"阈值 {curve.threshold:.3f}", en=f"threshold {curve.threshold:.3f}"))
    fig.update_layout(height=280, margin={"l": 10, "r": 10, "t": 30, "b": 10}, showlegend=True,
                      xaxis_title=tr(zh="句子边界（第 i 句与第 i+1 句之间）", en="sentence boundary (between i and i+1)"),
                      yaxis_title="cosine", legend={"orientation": "h", "y": 1.15})
    return fig


def place_labels(points: Sequence[tuple[float, float, float, str]], dots: Sequence[tuple[float, float]] = (),
                 first_choice: Sequence[str] = ()) -> list[str]:
    """A Plotly textposition for each labelled marker so that labels miss each other and the markers.

    `points` are (x, y, marker radius in px, label) in plot pixels, placed greedily in the order given;
    `dots` are the unlabelled markers (a label over one costs a little). `first_choice[i]`, when given,
    is tried first for point i. Cheap on purpose: 8 spots per label, no search beyond that.
    """
    def box(x, y, r, text, spot):
        w, h = 7 * len(text) + 4, 14
        dx, dy = LABEL_SPOTS[spot]
        cx, cy = x + dx * (r + w / 2), y + dy * (r + h / 2)
        return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)

    def hit(a, b) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    markers = [(x - r, y - r, x + r, y + r) for x, y, r, _ in points]
    small = [(x - 4, y - 4, x + 4, y + 4) for x, y in dots]
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for i, (x, y, r, text) in enumerate(points):
        order = list(LABEL_SPOTS)
        if i < len(first_choice) and first_choice[i] in LABEL_SPOTS:
            order.remove(first_choice[i])
            order.insert(0, first_choice[i])
        best, best_cost = order[0], math.inf
        for n, spot in enumerate(order):
            b = box(x, y, r, text, spot)
            cost = 0.1 * n
            cost += 100 * sum(hit(b, p) for p in placed)
            cost += 50 * sum(hit(b, m) for j, m in enumerate(markers) if j != i)
            cost += sum(hit(b, d) for d in small)
            cost += 20 * (b[0] < 0 or b[1] < 0 or b[2] > PLOT_PX[0] or b[3] > PLOT_PX[1])
            if cost < best_cost:
                best, best_cost = spot, cost
        placed.append(box(x, y, r, text, best))
        out.append(best)
    return out


def pca_figure(
    emap: EmbeddingMap,
    chunk_ids: Sequence[str],
    texts: Sequence[str],
    groups: Sequence[str],
    query_texts: Mapping[str, str],
) -> go.Figure:
    """Chunks coloured by group (document / section), top-k ringed, queries as their own marked points."""
    p = emap.projection
    three = p.n_components == 3
    coords = p.coords
    scatter = go.Scatter3d if three else go.Scatter
    top = set(emap.top)
    rank = {row: i + 1 for i, row in enumerate(emap.top)}
    fig = go.Figure()

    def axes(rows):
        out = {"x": coords[rows, 0], "y": coords[rows, 1]}
        if three:
            out["z"] = coords[rows, 2]
        return out

    by_group: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        by_group.setdefault(g, []).append(i)
    many = len(by_group) > 12  # too many legends entries: one trace, no legend
    for g, rows in ([("chunks", list(range(len(chunk_ids))))] if many else by_group.items()):
        fig.add_trace(scatter(
            **axes(rows), mode="markers", name=str(g),
            marker=dict(size=5 if three else 8, opacity=0.55),
            text=[f"<b>{chunk_ids[i]}</b><br>{_wrap(texts[i])}" for i in rows],
            hovertemplate="%{text}<extra></extra>",
        ))
    rows = list(emap.top)
    queries = list(emap.query_coords.items())
    spots = _label_spots(coords, queries, rows, rank, three)
    query_spots, top_spots = spots[: len(queries)], spots[len(queries):]
    if top:
        fig.add_trace(scatter(
            **axes(rows), mode="markers+text", name=tr(zh=f"余弦 top-{len(rows)}", en=f"cosine top-{len(rows)}"),
            marker=dict(size=9 if three else 15, color="rgba(0,0,0,0)", line=dict(color="#dc2626", width=2.5)),
            text=[f"#{rank[i]}" for i in rows], textposition=top_spots,
            customdata=[f"<b>#{rank[i]} {chunk_ids[i]}</b><br>{_wrap(texts[i])}" for i in rows],
            hovertemplate="%{customdata}<extra></extra>",
        ))
    for n, (label, point) in enumerate(queries):
        pt = {"x": [point[0]], "y": [point[1]]}
        if three:
            pt["z"] = [point[2]]
        fig.add_trace(scatter(
            **pt, mode="markers+text", name=label, text=[label], textposition=query_spots[n],
            marker=dict(size=10 if three else 16, symbol=QUERY_SYMBOLS[n % len(QUERY_SYMBOLS)],
                        color=QUERY_COLOURS[n % len(QUERY_COLOURS)], line=dict(color="black", width=1)),
            customdata=[f"<b>{label}</b><br>{_wrap(query_texts.get(label, ''))}"],
            hovertemplate="%{customdata}<extra></extra>",
        ))
    _axis_titles(fig, p, three)
    fig.update_layout(height=620, margin=dict(l=10, r=10, t=30, b=10), legend=dict(itemsizing="constant"))
    return fig


def _label_spots(coords, queries: list, rows: list[int], rank: dict[int, int], three: bool) -> list[str]:
    """Where each label goes: queries first (they matter most, "middle right" by default), then the top-k by rank;
    in 2-D moved off other points and labels (place_labels)."""
    spots = ["middle right"] * len(queries) + ["top center"] * len(rows)
    if three:
        return spots
    top = set(rows)
    xy = np.vstack([coords[:, :2]] + [np.asarray(pt[:2])[None, :] for _, pt in queries])
    span = np.ptp(xy, axis=0)
    xy = (xy - xy.min(axis=0)) / np.where(span > 0, span, 1.0) * PLOT_PX  # data -> approximate pixels
    q_xy = xy[len(coords):]
    labelled = [(*q_xy[j], 8.0, label) for j, (label, _) in enumerate(queries)]
    labelled += [(*xy[i], 7.5, f"#{rank[i]}") for i in rows]
    return place_labels(labelled, [tuple(xy[i]) for i in range(len(coords)) if i not in top], spots)


def _axis_titles(fig: go.Figure, p, three: bool) -> None:
    ev = p.explained_variance_ratio
    titles = [f"PC{i + 1} ({ev[i]:.1%})" for i in range(p.n_components)]
    if three:
        fig.update_layout(scene=dict(xaxis_title=titles[0], yaxis_title=titles[1], zaxis_title=titles[2]))
    else:
        fig.update_layout(xaxis_title=titles[0], yaxis_title=titles[1])


def bump_chart(paths: Mapping[str, Mapping[str, int | None]], stages: Sequence[str], stage_labels: Sequence[str],
               highlight: Sequence[str] = ()) -> go.Figure:
    """One line per chunk across the stages; y = rank (1 at the top); a gap where a list lacks the chunk."""
    fig = go.Figure()
    hi = set(highlight)
    for cid, ranks in paths.items():
        ys = [ranks.get(s) for s in stages]
        last = max((i for i, y in enumerate(ys) if y is not None), default=-1)
        fig.add_trace(go.Scatter(
            x=list(stage_labels), y=ys, mode="lines+markers+text", name=cid, connectgaps=False,
            text=[cid if i == last else "" for i in range(len(ys))],
            textposition="middle right",
            line=dict(width=3.5 if cid in hi else 1.5),
            opacity=1.0 if cid in hi or not hi else 0.45,
            hovertemplate=f"<b>{cid}</b><br>%{{x}}: #%{{y}}<extra></extra>",
        ))
    worst = max((r for ranks in paths.values() for r in ranks.values() if r is not None), default=1)
    # ranks start at 1: the axis runs from the worst rank down to 1 at the top, never to 0 or -1 (autorange padded
    # it there, which read as ranks that do not exist)
    fig.update_yaxes(range=[worst + 0.5, 0.5], title=tr(zh="名次 rank", en="rank"), tick0=1,
                     dtick=1 if worst <= 25 else max(1, round(worst / 10)))
    fig.update_xaxes(range=[-0.2, len(stages) - 0.4])  # room on the right for the chunk labels
    fig.update_layout(height=560, margin=dict(l=10, r=10, t=30, b=10), showlegend=False)
    return fig


def eval_bars(reports: Sequence[StrategyReport], metrics: Sequence[str]) -> go.Figure:
    fig = go.Figure()
    for r in reports:
        m = r.means
        fig.add_trace(go.Bar(name=r.strategy, x=list(metrics), y=[m.get(k, 0.0) for k in metrics],
                             text=[f"{m.get(k, 0.0):.2f}" for k in metrics], textposition="outside"))
    fig.update_layout(barmode="group", height=420, yaxis=dict(range=[0, 1.1]), margin=dict(l=10, r=10, t=30, b=10))
    return fig


def contribution_chart(why, n: int = 10) -> go.Figure:
    """One candidate's score taken apart: the bias, then its n largest feature contributions (green up, red down)."""
    rows = why.largest(n)[::-1]  # plotly draws the first bar at the bottom
    fig = go.Figure(go.Bar(
        x=[c for _f, _v, c in rows], y=[f for f, _v, _c in rows], orientation="h",
        marker_color=["#15803d" if c >= 0 else "#b91c1c" for _f, _v, c in rows],
        text=[f"{c:+.3f}" for _f, _v, c in rows], textposition="outside",
        hovertemplate="%{y}: %{x:+.4f}<extra></extra>",
    ))
    total = why.bias + sum(why.contributions.values())
    values = [c for _f, _v, c in rows] or [0.0]
    pad = 0.35 * (max(values + [0.0]) - min(values + [0.0]) or 1.0)  # room for the labels outside the bars
    fig.update_xaxes(range=[min(values + [0.0]) - pad, max(values + [0.0]) + pad])
    fig.update_layout(height=60 + 28 * len(rows), margin=dict(l=10, r=40, t=40, b=10),
                      title=tr(zh=f"分数 {total:.3f} = 基线 {why.bias:.3f} + 各特征贡献",
                               en=f"score {total:.3f} = bias {why.bias:.3f} + the features' contributions"))
    return fig


def importance_chart(importance: Mapping[str, float]) -> go.Figure:
    """The model as a whole: each feature's share of the total gain of its splits."""
    items = list(importance.items())[::-1]
    fig = go.Figure(go.Bar(x=[v for _k, v in items], y=[k for k, _v in items], orientation="h",
                           marker_color="#2563eb", text=[f"{v:.1%}" for _k, v in items], textposition="outside",
                           hovertemplate="%{y}: %{x:.1%}<extra></extra>"))
    fig.update_xaxes(tickformat=".0%", title=tr(zh="增益占比", en="share of gain"))
    fig.update_layout(height=60 + 24 * len(items), margin=dict(l=10, r=40, t=20, b=10))
    return fig


def maxsim_heatmap(alignment) -> go.Figure:
    """Query tokens (rows) x chunk tokens (columns), cosine; a ring on each query token's best match. Numeric axes
    with the pieces as tick labels, so a token that repeats keeps its own column."""
    a = alignment
    qp = [html.escape(x) for x in a.query_pieces]  # plotly reads <b>, <a> in labels: the pieces are user text
    pp = [html.escape(x) for x in a.passage_pieces]
    fig = go.Figure(go.Heatmap(
        z=np.round(a.sims, 4).tolist(), x=list(range(len(a.passage_pieces))), y=list(range(len(a.query_pieces))), colorscale="Blues",
        colorbar=dict(title="cos"),  # auto range: e5's token states are all alike (cosines 0.5-1), a 0-1 scale hides the matches
        customdata=[[f"{q} · {p}" for p in pp] for q in qp],
        hovertemplate="%{customdata}: %{z:.3f}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(x=a.best.tolist(), y=list(range(len(a.query_pieces))), mode="markers",
                             marker=dict(symbol="circle-open", size=12, color="#dc2626", line=dict(width=2)),
                             hovertemplate="best match<extra></extra>", showlegend=False))
    fig.update_yaxes(tickvals=list(range(len(a.query_pieces))), ticktext=qp, autorange="reversed")
    step = max(1, len(a.passage_pieces) // 60)  # a tick label for every token up to 60, else every step-th
    fig.update_xaxes(tickvals=list(range(0, len(a.passage_pieces), step)),
                     ticktext=pp[::step], tickangle=-90, tickfont=dict(size=9))
    fig.update_layout(height=140 + 22 * len(a.query_pieces), margin=dict(l=10, r=10, t=30, b=60),
                      title=tr(zh=f"MaxSim = 每个问题词最佳匹配的平均余弦 = {a.score:.3f}",
                               en=f"MaxSim = mean over question tokens of the best match's cosine = {a.score:.3f}"))
    return fig


def waterfall_chart(rows, names: Mapping[str, str]) -> go.Figure:
    """Where one question's time went: each measured stage as a bar from where the last one ended (rag/waterfall.py).
    `names`: stage -> its name in the UI language."""
    rows = list(rows)
    labels = [names.get(r.stage, r.stage) for r in rows]
    text = [f"{r.seconds * 1000:.0f} ms" if r.seconds < 1 else f"{r.seconds:.2f} s" for r in rows]
    fig = go.Figure(go.Bar(
        y=labels, x=[r.seconds for r in rows], base=[r.start for r in rows], orientation="h", text=text,
        textposition="outside", cliponaxis=False, marker_color="#3b82f6",
        hovertemplate="%{y}: %{text}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title=tr(zh="秒（从提问开始）", en="seconds from the question"))
    fig.update_layout(height=60 + 28 * len(rows), margin=dict(l=10, r=60, t=10, b=40), showlegend=False)
    return fig
