"""The agent's actions as a JSON schema, the llama.cpp grammar that enforces it, and a tolerant parser.

    {"thought": "...", "action": "search", "query": "..."}   search the knowledge base (top hits come back)
    {"thought": "...", "action": "read", "ref": "faq_016"}   read one chunk it has seen in full
    {"thought": "...", "action": "answer"}                   stop; the answer is written from what it found

Under `action_grammar` (GBNF) a small model cannot write anything else: the keys come in this order, a
thought and a query are one line of at most THOUGHT_CHARS / QUERY_CHARS characters without quotes or
backslashes, and `ref` can only be a ref the agent has seen (so it cannot read a chunk that does not
exist). Actions can be taken away per step: no `read` before anything was found, only `answer` on the
budget's last step. `parse_action` reads the same JSON from a backend without grammars, tolerating
text around it; what it cannot read is reported, never guessed.
Not handled here: running the loop (agent.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.messages import Msg

ACTIONS = ("search", "read", "answer")
THOUGHT_CHARS = 160
QUERY_CHARS = 80

SCHEMA = {  # what the grammar enforces, written as JSON Schema for readers and for endpoints' docs
    "type": "object",
    "required": ["thought", "action"],
    "properties": {
        "thought": {"type": "string", "maxLength": THOUGHT_CHARS},
        "action": {"enum": list(ACTIONS)},
        "query": {"type": "string", "maxLength": QUERY_CHARS},  # search only
        "ref": {"type": "string"},  # read only: one of the refs seen so far
    },
}


@dataclass(frozen=True)
class Action:
    thought: str
    action: str  # search | read | answer
    query: str = ""
    ref: str = ""


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def action_grammar(refs: Sequence[str] = (), allowed: Sequence[str] = ACTIONS) -> str:
    """GBNF for one action; `read` needs refs to choose from, and `allowed` can drop actions."""
    allowed = [a for a in ACTIONS if a in allowed and (a != "read" or refs)]
    if not allowed:
        raise ValueError("no action is allowed: keep at least 'answer'")
    rules = {
        "search": 'search ::= "\\"action\\": \\"search\\", \\"query\\": \\"" qchar{1,%d} "\\""' % QUERY_CHARS,
        "read": 'read ::= "\\"action\\": \\"read\\", \\"ref\\": " ref',
        "answer": 'answer ::= "\\"action\\": \\"answer\\""',
    }
    lines = [
        'root ::= "{\\"thought\\": \\"" tchar{1,%d} "\\", " act "}"' % THOUGHT_CHARS,
        "act ::= " + " | ".join(allowed),
        *(rules[a] for a in allowed),
        'tchar ::= [^"\\\\\\n]',
        'qchar ::= [^"\\\\\\n]',
    ]
    if "read" in allowed:
        lines.append("ref ::= " + " | ".join(_literal(_literal(r)) for r in dict.fromkeys(refs)))
    return "\n".join(lines) + "\n"


_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_action(text: str, refs: Sequence[str] = ()) -> tuple[Action | None, str]:
    """(the action, "") or (None, why it cannot be read). Text around the JSON object is ignored."""
    m = _OBJECT.search(text or "")
    if not m:
        return None, Msg(en="no JSON object in the reply", zh="回复里没有 JSON 对象")
    try:
        obj = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        return None, Msg(en=f"the JSON does not parse ({exc.msg})", zh=f"JSON 解析不了（{exc.msg}）")
    if not isinstance(obj, dict):
        return None, Msg(en="the JSON is not an object", zh="JSON 不是一个对象")
    action = str(obj.get("action", "")).strip()
    thought = str(obj.get("thought", "")).strip()
    if action not in ACTIONS:
        return None, Msg(en=f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}",
                         zh=f"未知的动作 {action!r}；应当是 {', '.join(ACTIONS)} 之一")
    if action == "search":
        query = str(obj.get("query", "")).strip()
        return (Action(thought, action, query=query), "") if query else \
            (None, Msg(en="a search without a query", zh="检索动作没有查询"))
    if action == "read":
        ref = str(obj.get("ref", "")).strip()
        if ref not in refs:
            return None, Msg(en=f"read of {ref!r}, which no search returned", zh=f"要读 {ref!r}，但没有哪次检索返回过它")
        return Action(thought, action, ref=ref), ""
    return Action(thought, action), ""
