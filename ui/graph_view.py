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

from rag.graph.extraction import CO_OCCURS

from .memo import memo

PALETTE = ("#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777", "#4b5563",
           "#65a30d", "#7c3aed", "#0d9488")
MAX_NODES = 180
HUB_LABELS = 8  # the most connected entities also get a label, where it fits


def drawn_nodes(graph, highlight: set[str], most: int = MAX_NODES) -> list[str]:
    """The nodes drawn: the highlighted ones, then the most connected, at most `most`; never a "name" that is a
    clause, a formula or a fragment (rag/graph/verify.fragment: the page lists those apart)."""
    g = graph.g
    by_degree = sorted((n for n in g.nodes if not g.nodes[n].get("fragment")), key=lambda n: (-g.degree(n, weight="weight"), n))
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


def _edge_kind(d: dict) -> str:
    """"fact": a relation its sentence states; "unchecked": relations none of whose sentences states them; "": none."""
    rels = d.get("relations") or []
    if not rels:
        return ""
    return "fact" if any(r.get("verified") for r in rels) else "unchecked"


# Where a label may sit, tried in this order: (x pixels, y pixels) of its centre from its node's centre.
LABEL_SPOTS = ((0, 16), (0, -16), (0, 30), (0, -30))


def labelled(nodes: list[str], pos: dict, highlight: set[str], graph, first: tuple[str, ...] = (),
             width_px: float = 1000, height_px: float = 620, font_px: float = 12) -> dict[str, tuple[int, int]]:
    """The nodes whose label is drawn, each with its offset in pixels: the question's own entities first, then the
    other highlighted ones, then the HUB_LABELS most connected; each at the first of LABEL_SPOTS where its box
    (estimated from its characters at `font_px`, with a margin) overlaps no label already placed and, but for the
    question's own entities, no ringed entity's marker. No two labels overlap in the default view."""
    if not nodes:
        return {}
    xs, ys = [pos[n][0] for n in nodes], [pos[n][1] for n in nodes]
    x_unit = (max(xs) - min(xs) or 1.0) / width_px  # data units per pixel
    y_unit = (max(ys) - min(ys) or 1.0) / height_px
    placed: list[tuple[float, float, float, float]] = []
    g, out = graph.g, {}
    by_degree = sorted(nodes, key=lambda n: (-g.degree(n, weight="weight"), n))
    hubs = [n for n in by_degree if n not in highlight][:HUB_LABELS]
    order = [m for m in first if m in pos] + [m for m in by_degree if m in highlight and m not in first] + hubs
    for n in dict.fromkeys(order):
        # a margin on the estimate: plotly pads the axes, so a data unit is fewer pixels than reckoned here
        half = 0.65 * sum(font_px if ord(ch) > 0x2e80 else font_px * 0.65 for ch in n) * x_unit
        tall = 0.8 * font_px * y_unit
        for dx, dy in LABEL_SPOTS:
            x, y = pos[n][0] + dx * x_unit, pos[n][1] + dy * y_unit
            box = (x - half, y - tall, x + half, y + tall)
            clash = any(not (box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1]) for b in placed)
            marker = n not in first and any(box[0] <= pos[m][0] <= box[2] and box[1] <= pos[m][1] <= box[3]
                                            for m in highlight if m != n and m in pos)
            if not clash and not marker:
                placed.append(box)
                out[n] = (dx, dy)
                break
    return out


def figure(graph, highlight: set[str], walked: set[tuple[str, str]], labels: dict[str, str],
           linked: tuple[str, ...] = ()) -> go.Figure:
    """`highlight`: the question's entities and what the walk reached; `walked`: its edges; `labels`: UI words;
    `linked`: the question's own entities, labelled first.
    Relations their sentence states are drawn solid, the others dashed; only labels that fit are written."""
    nodes = drawn_nodes(graph, highlight)
    pos = layout(graph, nodes)
    shown = set(nodes)
    g = graph.g
    sub = g.subgraph(nodes)
    fig = go.Figure()
    styles = (("unchecked", False, dict(width=0.8, color="#cbd5e1", dash="dot")),
              ("fact", False, dict(width=1.2, color="#64748b")),
              (None, True, dict(width=2.5, color="#f59e0b")))
    for kind, walked_only, line in styles:
        xs, ys = [], []
        for a, b, d in sub.edges(data=True):
            on_walk = (a, b) in walked or (b, a) in walked
            if on_walk != walked_only or (not walked_only and _edge_kind(d) != kind):
                continue
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False, line=line))
    fig.add_trace(_relation_markers(sub, pos, labels))
    named = labelled(nodes, pos, highlight, graph, linked)
    fig.add_trace(_entity_markers(graph, nodes, pos, highlight, labels))
    for n, (dx, dy) in named.items():  # annotations: above every marker, on a white ground, none over another
        fig.add_annotation(x=pos[n][0], y=pos[n][1], text=n, showarrow=False, xshift=dx, yshift=dy, font=dict(size=12),
                           bgcolor="rgba(255,255,255,0.85)", borderpad=1)
    fig.update_layout(height=620, margin=dict(l=10, r=10, t=10, b=10), clickmode="event+select", dragmode="pan",
                      xaxis=dict(visible=False), yaxis=dict(visible=False), plot_bgcolor="#ffffff")
    fig.add_annotation(x=0, y=1.02, xref="paper", yref="paper", showarrow=False, xanchor="left",
                       text=labels["caption"].format(shown=len(shown), total=g.number_of_nodes()),
                       font=dict(size=11, color="#64748b"))
    return fig


def _relation_markers(sub, pos, labels: dict[str, str]) -> go.Scatter:
    """A diamond mid-edge for each edge with relations: the first checked one (else the first) on hover."""
    mx, my, mtext, mdata, mcolour = [], [], [], [], []
    for a, b, d in sub.edges(data=True):
        if d.get("relations"):
            facts = [r for r in d["relations"] if r.get("verified")]
            r = (facts or d["relations"])[0]
            mx.append((pos[a][0] + pos[b][0]) / 2)
            my.append((pos[a][1] + pos[b][1]) / 2)
            mark = labels["checked"] if facts else labels["unchecked"]
            rel = labels.get("co_occurs", r["relation"]) if r["relation"] == CO_OCCURS else r["relation"]
            mtext.append(f"{r['head']} —{rel}→ {r['tail']} ({len(d['relations'])}) · {mark}")
            mdata.append(f"edge:{a}\t{b}")
            mcolour.append("#475569" if facts else "#cbd5e1")
    return go.Scatter(x=mx, y=my, mode="markers", marker=dict(size=5, color=mcolour, symbol="diamond"),
                      text=mtext, customdata=mdata, hovertemplate="%{text}<extra></extra>",
                      name=labels["edge"], showlegend=False)


def _entity_markers(graph, nodes, pos, highlight: set[str], labels: dict[str, str]) -> go.Scatter:
    """The entities, coloured by community, the highlighted ones larger and ringed."""
    g = graph.g
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
    return go.Scatter(x=xs, y=ys, mode="markers", hovertext=text, hovertemplate="%{hovertext}<extra></extra>",
                      customdata=data, marker=dict(size=size, color=colour, line=dict(width=line, color="#f59e0b")),
                      name=labels["entity"], showlegend=False)


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
