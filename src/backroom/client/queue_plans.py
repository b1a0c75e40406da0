"""The client's queue and lane steering as plans (see `backroom.client.plans`): list,
pause and resume queues and LLM lanes for every worker, and list the workers (an
admin key's operations).

They answer with the API's documents as plain data. Pausing or resuming twice changes
nothing the second time, so a lost answer is retried like a read.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

from backroom.client.plans import Plan, Plans, Send
from backroom.client.webhook_plans import Document, Documents

Kind = Literal["queue", "lane"]
"""What is steered: a queue, or an LLM lane (`provider/model`)."""


def _path(kind: Kind, name: str, action: str) -> str:
    # A lane's name keeps its slash: the route's parameter takes the rest of the path.
    safe = "/" if kind == "lane" else ""
    return f"/v1/{kind}s/{quote(name, safe=safe)}/{action}"


def steer(
    plans: Plans, kind: Kind, name: str, action: Literal["pause", "resume"]
) -> Plan[Document]:
    """Pause or resume the queue or lane `name` for every worker; its document after."""
    document, _ = yield from plans.call(Send("POST", _path(kind, name, action)))
    return dict(document)


def queues(plans: Plans) -> Plan[Documents]:
    """Every queue with jobs or a pause: jobs by state, oldest queued age, pause."""
    document, _ = yield from plans.call(Send("GET", "/v1/queues"))
    return list(document["queues"])


def lanes(plans: Plans) -> Plan[Documents]:
    """Every lane with calls or a pause: limits, calls in flight, what is left, pauses."""
    document, _ = yield from plans.call(Send("GET", "/v1/lanes"))
    return list(document["lanes"])


def workers(plans: Plans) -> Plan[Documents]:
    """Every registered worker: alive, lost or stopped, with the jobs it runs."""
    document, _ = yield from plans.call(Send("GET", "/v1/workers"))
    return list(document["workers"])
