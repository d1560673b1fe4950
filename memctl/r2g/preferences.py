"""Preferences (seed R2G-2: 从指令/偏好语言触发, "以后优先中文回答").

Three kinds, each with a polarity (+1 wants / likes, -1 refuses / dislikes) and an object (the liked thing or the
requested behaviour, as written):
- instruction: addressed to the assistant. Chinese 以后/今后/请/总是/优先/希望你/不要/别/请勿 at the start of a
  clause; English please/always/never/don't/from now on, "I want you to", or an imperative of answering
  (answer/reply/write/keep/cite/use...) about the assistant's output.
- taste: the speaker's own likes, dislikes and constraints: 我喜欢/我爱/我讨厌/我不喜欢/我更喜欢/我受不了/我不吃/对…过敏,
  "I like/love/enjoy/prefer/hate/can't stand", "I'm (not) a fan of", "my favorite X is Y", "I'd rather (not)".
- habit: 我每天/经常/总是/习惯, "I usually/always/never/often".
Third-person likes ("Tom likes jazz") are facts, not preferences. A clause that follows an instruction and starts
with a verb continues it (以后别叫我老张，叫我张总 → -叫我老张, +叫我张总).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache


@dataclass(frozen=True, slots=True)
class PreferenceHit:
    polarity: int
    object: str
    kind: str  # instruction | taste | habit
    trigger: str
    start: int  # span of the object in the sentence
    end: int
    confidence: float

    def to_dict(self) -> dict:
        return {"polarity": self.polarity, "object": self.object, "kind": self.kind, "trigger": self.trigger,
                "span": [self.start, self.end], "confidence": self.confidence}


# (pattern, polarity, kind, confidence); the object is the named group "object".
_ZH_DEGREE = r"(?:真的|真|是真的|非常|特别|特|挺|还挺|超|蛮|很|最|比较|一直|从来|从小就|其实|也|还)*"  # 我挺喜欢…, 我特喜欢…
_ZH_LEAD = r"(?:以后|今后|从现在起|从今以后|往后|下次)?[，,]?"
_ZH_CONTEXT = r"(?:[^，。！？]{1,8}?(?:时|的时候|里|中)[，,]?)?"  # 回答的时候请…, 回答时不要…
_ZH_RULES = [
    (rf"^{_ZH_CONTEXT}{_ZH_LEAD}(?:请|麻烦你?|你)?(?:千万|再也|永远|一定)?(?P<trigger>不要|别|请勿|勿|不许|不准|禁止|避免)(?:再)?(?P<object>.+)",
     -1, "instruction", 0.85),
    (rf"^{_ZH_CONTEXT}(?P<trigger>以后|今后|从现在起|从今以后|往后|下次)[，,]?(?:请|麻烦你?)?(?:你)?(?:总是|始终|一直|都|尽量|务必|优先|最好)*(?P<object>.+)",
     1, "instruction", 0.85),
    (rf"^{_ZH_CONTEXT}(?P<trigger>请|麻烦你|麻烦)(?!记住|记得|问)(?:你)?(?:总是|始终|一直|都|尽量|务必|优先|最好)*(?P<object>.+)",
     1, "instruction", 0.75),
    (r"^(?P<trigger>总是|始终|一律|每次都|尽量|务必|优先)(?P<object>.+)", 1, "instruction", 0.75),
    (r"^(?:我)?(?P<trigger>希望你|想让你|要你|需要你)(?P<object>.+)", 1, "instruction", 0.8),
    (r"^你(?:能不能|可不可以|可以|能)(?P<trigger>每次|以后|总是|一直)(?P<object>.+?)[吗嘛吧？?]*$", 1, "instruction", 0.75),
    (r"^我(?:最|比较)?喜欢的(?P<topic>[^是]{1,8})是(?P<object>.+)", 1, "taste", 0.85),
    # 我平时用的美妆产品是倩碧特效润肤露: what the speaker uses as a rule (without 平时 it is only what they own)
    (r"^我(?P<trigger>平时|每天|经常|一直|一般|通常)(?:都)?(?:用|使用|穿|喝|吃|戴|开)的(?P<topic>[^是，]{1,8})是(?P<object>.+)",
     1, "habit", 0.75),
    (rf"^我{_ZH_DEGREE}(?P<trigger>讨厌|厌恶|受不了|不喜欢|不爱|反感|不想要|不要|不吃|不喝|从不|从来不|不能|不太喜欢|害怕|怕)(?P<object>.+)",
     -1, "taste", 0.8),
    (r"^(?P<trigger>不吃|不喝|从不吃|从不喝)(?P<object>.+)", -1, "taste", 0.7),
    (r"^(?:但是|但|而且|可是)?(?:我)?对(?P<object>[^，。]+?)(?P<trigger>过敏)", -1, "taste", 0.85),
    (rf"^我{_ZH_DEGREE}(?P<trigger>更喜欢|最喜欢|喜欢|喜爱|热爱|钟爱|爱|偏好|偏爱|习惯)(?P<object>.+)",
     1, "taste", 0.8),
    (r"^我(?P<trigger>每天|每周|每晚|每个周末|每个月|经常|常常|总是|一般|通常|平时)(?:都|会)?(?P<object>.+)", 1, "habit", 0.7),
    # 每天下班后去那里散步: a routine told without 我, the speaker's own
    (r"^(?P<trigger>每天|每周|每晚|每个周末|每个月)(?!(?:都|会)?(?:很|挺|特别|非常|真|太|好|有点))(?:都|会)?(?P<object>[^，。！？]{3,})", 1, "habit", 0.6),
]
_ABOUT_ANSWERS = re.compile(r"回答|回复|答案|\b(?:answers?|repl(?:y|ies)|responses?)\b", re.IGNORECASE)
_ZH_QUESTION = re.compile(r"[？?]\s*$|吗[。！]?\s*$")
_ZH_BARE_LIKING = re.compile(rf"^我(?:是)?{_ZH_DEGREE}(?P<negation>不)?(?P<trigger>喜欢|爱|讨厌)的?[了啊呀]*$")
_ZH_TOPIC_BEFORE = re.compile(r"^我[^，。的]{0,6}(?:用|买|穿|养)的(?P<object>[^，。的]{2,16})$")
_ZH_SELF_DESCRIPTION = re.compile(r"(?:对|像|^)(?:我|咱们|我们)这(?:种|些|样的?)(?P<trigger>经常|老爱|老是|总是|常常|爱|喜欢)(?:要|得)?"
                                  r"(?P<object>[^，。的]{2,16})")
_ZH_CONTINUATION = re.compile(r"^(?!我|你|他|她|它|我们)(?P<object>[\u4e00-\u9fff].+)")
_ZH_FILLER = re.compile(r"^(?:再|也|都|会|还|就|要|去|早上|晚上|中午|下午|周末|每天)+|[了吧呢啊呀哦的。！!？?～~]+$")

_EN_LEAD = r"(?:(?:from now on|in the future|going forward|next time|always remember to)[, ]+)?"
_EN_ANSWER_VERBS = r"answer|reply|respond|write|use|cite|format|summari[sz]e|explain|include|keep|call|address|speak|translate|list|show|give|add|avoid|stop|mention|remind"
_EN_RULES = [
    (rf"^{_EN_LEAD}(?:please[, ]+)?(?P<trigger>don't|do not|never|stop|avoid|please don't)\s+(?P<object>.+)", -1, "instruction", 0.85),
    (rf"^{_EN_LEAD}(?:please[, ]+)?(?P<trigger>always|please always)\s+(?P<object>.+)", 1, "instruction", 0.85),
    (r"^(?P<trigger>from now on|in the future|going forward|next time)[, ]+(?:please\s+)?(?P<object>.+)", 1, "instruction", 0.85),
    (r"^(?:from now on[, ]+)?(?P<object>(?P<trigger>reply|answer|respond|write|speak)\b.+)", 1, "instruction", 0.75),
    (rf"^(?:please\s+)?(?P<object>(?P<trigger>{_EN_ANSWER_VERBS})\b.*\b(?:answers?|repl(?:y|ies)|responses?|summary|summaries|sources|me|emojis|bullet points|tone|words|english|chinese)\b.*)",
     1, "instruction", 0.7),
    (r"^i (?P<trigger>want you to|'d like you to|would like you to|need you to)\s+(?P<object>.+)", 1, "instruction", 0.8),
    (r"^i(?:'d| would) (?P<trigger>rather not)\s+(?P<object>.+)", -1, "taste", 0.8),
    (r"^i(?:'d| would) (?P<trigger>rather|prefer)\s+(?P<object>.+)", 1, "taste", 0.8),
    (r"^(?:can|could|would|will) you (?:please )?(?P<trigger>always|every time|from now on)\s+(?P<object>.+?)\??$", 1, "instruction", 0.75),
    (r"^i(?: really| absolutely| honestly| just)? (?P<trigger>can't stand|cannot stand|hate|dislike|detest|despise|don't like|do not like|don't enjoy|don't eat|don't drink|never eat|never drink|can't eat|cannot eat|can't drink|never)\s+(?P<object>.+)",
     -1, "taste", 0.8),
    (r"^i(?:'m| am) (?P<trigger>not a (?:big )?fan of|not into|allergic to|not big on)\s+(?P<object>.+)", -1, "taste", 0.75),
    (r"^i(?: really| absolutely| honestly| just| totally)? (?P<trigger>prefer|like|love|enjoy|adore)\s+(?P<object>.+)", 1, "taste", 0.8),
    (r"^i(?:'m| am) (?:really |totally |such |a )*(?P<trigger>into|a (?:big |huge )?fan of|obsessed with)\s+(?P<object>.+)", 1, "taste", 0.75),
    (r"^my (?P<trigger>favou?rite)\s+\w+(?: \w+)? (?:is|are)\s+(?P<object>.+)", 1, "taste", 0.8),
    # "I always feel …", "I usually like them more": a habit word before a verb of feeling or thinking says how
    # the speaker is, not what they do
    (r"^i (?P<trigger>usually|always|often|normally|typically|tend to|regularly)\s+"
     r"(?!(?:feel|felt|like|love|enjoy|think|thought|know|knew|believe|wonder|wish|hope|want|need|appreciate|"
     r"remember|find|get|got|seem|am|was|have been|had|admire|look up|cherish|struggle|worry|say)\b)(?P<object>.+)",
     1, "habit", 0.7),
]
# Between people, "Don't forget to …", "Never give up!", "Always here to help" are advice and comfort, not
# instructions: an English instruction names something the assistant does (answer, use, recommend, share …).
_EN_TASKS = re.compile(r"(?:please\s+)?(?:" + _EN_ANSWER_VERBS + r"|recommend|suggest|share|send|tell|ask|book|schedule|"
                       r"order|talk|contact|email|text|play|bring up|mention)\b(?! up\b)", re.IGNORECASE)
_EN_ADDRESSED = re.compile(r"\b(?:please|from now on|in the future|going forward|next time)\b", re.IGNORECASE)
# "I love it!", "I love how you …", "I love the theme": a reaction to what was just shown or said, not a taste.
_EN_REACTION = re.compile(r"^(?:it|that|this|these|those|them|to|how|what|when|the|all the|your|you)\b", re.IGNORECASE)
_EN_CONTINUATION = re.compile(r"^(?:and\s+)?(?P<object>(?:" + _EN_ANSWER_VERBS + r")\b.+)")
_EN_CLAUSE_SPLIT = re.compile(r"\s*(?:[;,]\s*(?:so|but|and)?|\bso\b|\bbut\b)\s*", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[，,；;。！？!?]")
_CLAUSE_BREAK_KEPT = re.compile(r"([，,；;。！？!?])")
_EN_ASIDE = re.compile(r"\s+[-–—]\s.*$")  # "pottery - the creativity and skill is awesome": a dash starts an aside
_EN_TRAILING = re.compile(r"(?:[,\s]+please)?[\s.!?,;:]*$", re.IGNORECASE)


@cache
def _compiled(lang: str):
    """Compiled on first use: importing this module stays cheap for commands that never look for preferences."""
    rules, flags = (_ZH_RULES, 0) if lang == "zh" else (_EN_RULES, re.IGNORECASE)
    return [(re.compile(pattern, flags), polarity, kind, confidence) for pattern, polarity, kind, confidence in rules]


def find_preferences(sentence: str, lang: str) -> list[PreferenceHit]:
    """Preferences stated in one sentence, clause by clause. A Chinese question states none ("你喜欢什么？")."""
    hits: list[PreferenceHit] = []
    instruction_open = False
    if lang == "zh" and _ZH_QUESTION.search(sentence):
        return hits
    previous = (0, "")
    for start, clause in _clauses(sentence, lang):
        hit = _match_clause(clause, start, lang)
        if hit is None and lang == "zh":
            hit = _liked_before(clause, previous) or _self_description(clause, start)
        previous = (start, clause)
        if hit is None and instruction_open:
            hit = _continuation(clause, start, lang)
        if hit is not None:
            hits.append(hit)
            instruction_open = hit.kind == "instruction"
    return hits


def _liked_before(clause: str, previous: tuple[int, str]) -> PreferenceHit | None:
    """我家里用的松下空气净化器，我是真的挺喜欢的: a bare liking whose object is the clause before it."""
    liked = _ZH_BARE_LIKING.match(clause.strip())
    offset, before = previous
    topic = _ZH_TOPIC_BEFORE.match(before.strip())
    if liked is None or topic is None:
        return None
    polarity = -1 if liked["negation"] or liked["trigger"] == "讨厌" else 1
    offset += len(before) - len(before.lstrip())
    return PreferenceHit(polarity, topic["object"], "taste", liked["trigger"], offset + topic.start("object"),
                         offset + topic.end("object"), 0.7)


def _self_description(clause: str, offset: int) -> PreferenceHit | None:
    """对我这种经常在飞机上工作的人来说, 咱们这些喜欢跳舞的人: the speaker describes themself by a habit or a
    taste, inside a longer clause."""
    match = _ZH_SELF_DESCRIPTION.search(clause)
    if match is None:
        return None
    kind = "taste" if match["trigger"] in ("爱", "喜欢") else "habit"
    return _hit(clause, offset, match.start("object"), match.end("object"), 1, kind, match["trigger"], 0.65, "zh")


_ZH_PLACE_PRONOUN = re.compile(r"那里|那儿|那边|这里|这儿|这边|那(?=$|[去来散跑坐逛玩])")


def with_place(hit: PreferenceHit, place: str) -> PreferenceHit:
    """我每天经过那, 每天下班后去那里散步: the place a Chinese habit points to, named (`place`: the turn's place
    named before it), so that the preference keeps its whole object."""
    named = _ZH_PLACE_PRONOUN.sub(place, hit.object, count=1)
    return hit if named == hit.object else replace(hit, object=named)


def has_place_pronoun(hit: PreferenceHit) -> bool:
    return _ZH_PLACE_PRONOUN.search(hit.object) is not None


def is_instruction(sentence: str, lang: str, hits: list[PreferenceHit] | None = None) -> bool:
    """True when the sentence's first clause is addressed to the assistant: the sentence then states no facts
    about the world ("以后请用中文回答", "Please always answer in English")."""
    hits = find_preferences(sentence, lang) if hits is None else hits
    if not hits or hits[0].kind != "instruction":
        return False
    first_break = _CLAUSE_BREAK.search(sentence)
    return first_break is None or hits[0].start < first_break.start()


def _clauses(sentence: str, lang: str):
    if lang == "zh":
        position = 0
        for piece in _CLAUSE_BREAK_KEPT.split(sentence):
            if piece and piece not in "，,；;。！？!?":
                yield position, piece
            position += len(piece)
        return
    position = 0
    for match in _EN_CLAUSE_SPLIT.finditer(sentence):
        if match.start() > position:
            yield position, sentence[position : match.start()]
        position = match.end()
    if position < len(sentence):
        yield position, sentence[position:]


def _match_clause(clause: str, offset: int, lang: str) -> PreferenceHit | None:
    rules = _compiled("zh" if lang == "zh" else "en")
    text = clause.lstrip()
    offset += len(clause) - len(text)
    for pattern, polarity, kind, confidence in rules:
        match = pattern.match(text)
        if match is None:
            continue
        trigger = match.groupdict().get("trigger") or ""
        if kind == "taste" and _ABOUT_ANSWERS.search(match.group("object")):
            kind = "instruction"  # "I prefer short answers": a taste about the assistant's output is an instruction
        elif lang != "zh" and not _english_preference(kind, text, match.group("object")):
            return None
        return _hit(text, offset, match.start("object"), match.end("object"), polarity, kind, trigger, confidence, lang)
    return None


def _english_preference(kind: str, clause: str, object_text: str) -> bool:
    if kind == "instruction":
        return _EN_ADDRESSED.search(clause) is not None or _EN_TASKS.match(object_text) is not None
    return _EN_REACTION.match(object_text) is None


def _continuation(clause: str, offset: int, lang: str) -> PreferenceHit | None:
    text = clause.lstrip()
    offset += len(clause) - len(text)
    match = (_ZH_CONTINUATION if lang == "zh" else _EN_CONTINUATION).match(text)
    if match is None:
        return None
    return _hit(text, offset, match.start("object"), match.end("object"), 1, "instruction", "", 0.6, lang)


def _hit(text, offset, start, end, polarity, kind, trigger, confidence, lang) -> PreferenceHit | None:
    object_text = text[start:end]
    if lang == "zh":
        stripped = _ZH_FILLER.sub("", object_text)
        while stripped != object_text:  # 早上都去健身房跑步 → 去健身房跑步 (strip until nothing changes)
            object_text, stripped = stripped, _ZH_FILLER.sub("", stripped)
    else:
        object_text = _EN_TRAILING.sub("", _EN_ASIDE.sub("", object_text))
    object_text = object_text.strip()
    if not object_text:
        return None
    position = text.find(object_text, start)
    return PreferenceHit(polarity, object_text, kind, trigger, offset + position, offset + position + len(object_text), confidence)
