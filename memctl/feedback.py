"""`memctl feedback`: a user's pins and votes on a memory, the user_feedback term of weight(node) (seed 001
§6.1), under seed 002's BOOST rules.

Node props written here (R2G keeps them when it merges or rebuilds the node: memctl/r2g/draft.py):
- pinned: bool. weight() counts a pin as full feedback. A pinned memory is never decayed or pruned: no job
  decays, archives or forgets memories yet; the one that does must skip nodes with props.pinned.
- feedback: float, what --up added minus what --down took away (weight() clips it to [0, 1]).
- feedback_boosts: [[time, amount], …], the --up's counted in the last 24 hours, which the rules read:
  cooldown: an --up within feedback.cooldown_hours of the last counted one is refused (seed 002: several uses
  within 2 h count once); daily cap: the --up's of any 24 hours add at most feedback.daily_cap, the one that
  reaches it adds what is left.
A change is one batch with its WeightUpdated event; a pin that is already there changes nothing.
`now` is a parameter (the command line passes the clock) so that tests move time without waiting.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memctl import event_log

ACTIONS = ("pin", "unpin", "up", "down")
USER_PROPS = ("pinned", "feedback", "feedback_boosts")
DAY_SECONDS = 86400.0
PRECISION = 6  # feedback rounded so that 0.3 + 0.3 + 0.3 + 0.1 is 1.0


def give_feedback(graph, config, key: str, action: str, now: float) -> dict:
    """Apply `action` to the memory `key` of the GraphStore `graph` under the Settings `config`: {"id",
    "action", "applied", "pinned", "feedback", "change", "sequence" (of the WeightUpdated event; None when
    nothing changed), "refused" (None, or {"rule", "reason", "allowed_at"}), "weight" (weight(node) at `now`
    and its terms)}. InputError for an unknown action or memory."""
    from engine.errors import InputError
    from memctl.recall.weight import explained_weight

    if action not in ACTIONS:
        raise InputError(f"unknown feedback action {action!r} (one of {', '.join(ACTIONS)})")
    change, sequence = 0.0, None
    with graph.batch() as writer:
        node = writer.node(key)
        if node is None:
            raise InputError(f"no memory {key!r}: give a node id as `memctl recall` or `memctl events --keys` "
                             "prints it", where="ID")
        props = node.get("props") or {}
        proposed, refused = _decide(props, action, now, config.feedback)
        if refused is None:
            change, updated = proposed, _updated(props, action, proposed, now)
            if any(updated[name] != props.get(name) for name in updated):
                writer.update_node(key, properties=updated)
                sequence = event_log.append(writer.batch, "WeightUpdated",
                                            {"id": key, "action": action, "change": change,
                                             "feedback": updated["feedback"], "pinned": updated["pinned"]}, now)
                props = {**props, **updated}
    node_type = graph.type_names("node").get(node["type"])
    return {"id": key, "action": action, "applied": refused is None, "pinned": bool(props.get("pinned")),
            "feedback": float(props.get("feedback") or 0.0), "change": change, "sequence": sequence,
            "refused": refused, "weight": explained_weight(props, node_type, now, config.weights)}


def _decide(props: dict, action: str, now: float, settings) -> tuple[float, dict | None]:
    """(the change to props.feedback, the refusal or None)."""
    if action in ("pin", "unpin"):
        return 0.0, None
    if action == "down":
        return -settings.boost, None
    boosts = _recent_boosts(props, now)
    if boosts:
        last = max(moment for moment, _ in boosts)
        ready = last + settings.cooldown_hours * 3600.0
        if now < ready:
            return 0.0, _refusal("cooldown", f"it was boosted at {_iso(last)} and one --up counts per "
                                 f"{settings.cooldown_hours:g} h", ready)
    room = round(settings.daily_cap - sum(amount for _, amount in boosts), PRECISION)
    if room <= 0:
        oldest = min(moment for moment, _ in boosts)
        return 0.0, _refusal("daily_cap", f"its --up's of the last 24 h already add {settings.daily_cap:g}, the "
                             "daily cap", oldest + DAY_SECONDS)
    return min(settings.boost, room), None


def _updated(props: dict, action: str, change: float, now: float) -> dict:
    """The USER_PROPS after `action`."""
    boosts = _recent_boosts(props, now)
    if action == "up":
        boosts.append([now, change])
    pinned = {"pin": True, "unpin": False}.get(action, bool(props.get("pinned")))
    feedback = round(float(props.get("feedback") or 0.0) + change, PRECISION)
    return {"pinned": pinned, "feedback": feedback, "feedback_boosts": boosts}


def _recent_boosts(props: dict, now: float) -> list:
    return [[moment, amount] for moment, amount in props.get("feedback_boosts") or ()
            if now - moment < DAY_SECONDS]


def _refusal(rule: str, why: str, allowed_at: float) -> dict:
    return {"rule": rule, "reason": why, "allowed_at": _iso(allowed_at)}


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
