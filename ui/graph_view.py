"""The corpus graph drawn with plotly: nodes coloured by community, the question's subgraph highlighted, and a
clickable marker in the middle of every edge that has relations, so a click on a node or an edge can be read
back (st.plotly_chart's on_select) as "entity:NAME" or "edge:A\\tB".

Plotly rather than a graph component (pyvis, streamlit-agraph): it is already a dependency, its selection
events come back to the page through Streamlit's own API, it renders in AppTest and in Chromium the same
way, and every label is data (hover text), never HTML. The layout is networkx's spring layout with a fixed
seed, computed once per session, graph and drawn-node set, so a rerun does not move the nodes.
Not handled here: the graph (rag/graph/), the page (app_pages/3b_graph.py).
"""

from __future__ import annotations

import networkx as nx
import plotly.graph_objects as go

from .memo import memo

PALETTE = ("#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777", "#4b5563",
           "#65a30d", "#7c3aed", "#0d9488")
MAX_NODES = 180


def drawn_nodes(graph, highlight: set[str], most: int = MAX_NODES) -> list[str]:
    """The nodes drawn: the highlighted ones, then the most connected, at most `most`."""
    g = graph.g
    by_degree = sorted(g.nodes, key=lambda n: (-g.degree(n, weight="weight"), n))
    keep = [n for n in by_degree if n in highlight][:most]
    keep += [n for n in by_degree if n not in highlight][: max(0, most - len(keep))]
    return keep


def layout(graph, nodes: list[str]) -> dict:
    """Spring-layout positions of `nodes`, kept in this session's memo (never a module global: every session
    would share it) and keyed by what the layout is computed from, the drawn nodes and their weighted edges."""
    sub = graph.g.subgraph(nodes)
    edges = tuple(sorted((a, b, round(float(d.get("weight", 1.0)), 4)) for a, b, d in sub.edges(data=True)))
    return memo("graph_layout", (tuple(nodes), edges), lambda: nx.spring_layout(
        sub, seed=7, weight="weight", k=1.2 / max(1, len(nodes)) ** 0.5), keep=8)


def figure(graph, highlight: set[str], walked: set[tuple[str, str]], labels: dict[str, str]) -> go.Figure:
    """`highlight`: the question's entities and what the walk reached; `walked`: its edges; `labels`: UI words."""
    nodes = drawn_nodes(graph, highlight)
    pos = layout(graph, nodes)
    shown = set(nodes)
    g = graph.g
    fig = go.Figure()
    for walked_only in (False, True):
        xs, ys = [], []
        for a, b, d in g.subgraph(nodes).edges(data=True):
            on_walk = (a, b) in walked or (b, a) in walked
            if on_walk != walked_only or (not d.get("relations") and not on_walk):
                continue
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line=dict(width=2.5 if walked_only else 0.6,
                                           color="#f59e0b" if walked_only else "#cbd5e1")))
    mx, my, mtext, mdata = [], [], [], []
    for a, b, d in g.subgraph(nodes).edges(data=True):
        if d.get("relations"):
            r = d["relations"][0]
            mx.append((pos[a][0] + pos[b][0]) / 2)
            my.append((pos[a][1] + pos[b][1]) / 2)
            mtext.append(f"{r['head']} —{r['relation']}→ {r['tail']} ({len(d['relations'])})")
            mdata.append(f"edge:{a}\t{b}")
    fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", marker=dict(size=5, color="#94a3b8", symbol="diamond"),
                             text=mtext, customdata=mdata, hovertemplate="%{text}<extra></extra>",
                             name=labels["edge"], showlegend=False))
    xs, ys, text, data, colour, size, line = [], [], [], [], [], [], []
    for n in nodes:
        comm = g.nodes[n].get("community", 0) or 0
        xs.append(pos[n][0])
        ys.append(pos[n][1])
        text.append(f"{n} · {g.nodes[n]['type']} · {labels['community']} {comm} · "
                    f"{len(graph.mentions.get(n, []))} {labels['chunks']}")
        data.append(f"entity:{n}")
        colour.append(PALETTE[comm % len(PALETTE)])
        size.append(16 if n in highlight else 8)
        line.append(3 if n in highlight else 0)
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers+text", text=[n if n in highlight else "" for n in nodes],
                             textposition="top center", hovertext=text, hovertemplate="%{hovertext}<extra></extra>",
                             customdata=data, marker=dict(size=size, color=colour, line=dict(width=line, color="#f59e0b")),
                             name=labels["entity"], showlegend=False))
    fig.update_layout(height=620, margin=dict(l=10, r=10, t=10, b=10), clickmode="event+select", dragmode="pan",
                      xaxis=dict(visible=False), yaxis=dict(visible=False), plot_bgcolor="#ffffff")
    fig.add_annotation(x=0, y=1.02, xref="paper", yref="paper", showarrow=False, xanchor="left",
                       text=labels["caption"].format(shown=len(shown), total=g.number_of_nodes()),
                       font=dict(size=11, color="#64748b"))
    return fig


def picked(event) -> str | None:
    """The customdata of the first point a plotly selection event holds ("entity:..." or "edge:..."), or None."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for p in points:
        value = p.get("customdata")
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, str) and value.startswith(("entity:", "edge:")):
            return value
    return None
