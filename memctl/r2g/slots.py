"""Slot facts from the generic attribute frames of one sentence (issue 18): who holds which attribute, and its
value, in the form the facts issue versions (seed 001 §2.3, §7.1).

Frames, clause by clause (a Chinese clause ends at ，,；;：:!?, an English one at ;:!?— and a period before a space;
an English frame may follow only a few lead-in words: "Losing my job was …" is no statement about a job; an
English value ends before a subordinate clause or a clause with a subject of its own):

    English                              Chinese                        holder            slot  value
    my X's Y is Z                        我X的Y是Z, 我的X的Y是Z,         the speaker's X   Y     Z
                                         我XY是Z (X a relative, Y a slot)
    X's Y is Z  (X a name)               X的Y是Z   (X a name or thing)   X                 Y     Z
    my Y is Z                            我的Y是Z, 我Y是Z                the speaker       Y     Z
    my X is called/named Z               我X叫Z                          the speaker's X   name  Z
    Z is my Y   (Y a person slot)        Z是我的Y                        the speaker       Y     Z
                                         其Y是Z, 它的Y是Z                the clause before's topic (Z of
                                                                        "Z是我的Y", T of "我…的T")

Is/是 also stand as was, 为, 叫 (名字叫…) and, before a number, 有 (身高有172厘米). Y is mapped through the slot
lexicon (memctl.language.slot_lexicon); a Y it does not know stays a free slot name, as written. "my X" names
a holder of its own: an Entity "<speaker>'s X" / "<speaker>的X" (Ann's aunt, 用户的婶婶), a Person when X
names a person slot (aunt, 婶婶, boss), something else otherwise (my dog, 我公司). A bare relative (舅妈的电话是…,
Mom's birthday is …) is the speaker's too, and 我家的X is 我的X. The speaker is the turn's speaker ("user",
"用户" when there is none). "我的猫叫咪咪" names the cat: holder 用户的猫, slot name.

Polarity: "negated" after 不/不再/not/isn't, "ended" for a former value (以前的/之前的/原来的, my old/former/
previous Y, used to be), else "stated". A time expression of the clause outside the value is the statement's
time.

Precision first, so a frame is dropped when: the clause is a question; the value is empty, evaluative (很…, so
…, really …) or cannot be of the slot's kind (a phone without 7 digits, an e-mail without @, a person slot's
value that is no name, a date or number without a digit or numeral); an English "my Y is Z" names no lexicon
slot, or "my favorite Y" (a preference: memctl/r2g/preferences.py); an English free slot's value holds no name,
number or address ("Melanie's painting is amazing"); the holder is another pronoun (his, your, 他的 without a
topic); X of 我X的Y is a verb of liking or doing (我喜欢的手机是…, 我参观的医院是…: a preference or an event;
after a verb of using or keeping, 我用的手机是…, Y is the speaker's own); Y ends in a pronoun (我表姐她是…).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from memctl.language.lexicon import english_words, gazetteer, lexicon_cache
from memctl.language.slot_lexicon import SlotSpec, slot_lexicon
from memctl.language.timenorm import TimeExpr
from memctl.r2g.structures import Mention

STATED, NEGATED, ENDED = "stated", "negated", "ended"
KINDS = ("set", "change", "end", "add", "stop")  # what a statement does to its slot (memctl/r2g/changes.py)
DEFAULT_HOLDER = {"en": "user", "zh": "用户"}
MAX_VALUE_CHARS = 120
MAX_ENGLISH_VALUE_WORDS = 12


@dataclass(slots=True)
class SlotFact:
    """One attribute statement. `holder` and `value_mention` are what `extract` turns into entities
    (subject_entity, value_entity); `value_time` indexes the sentence's times when the value is one."""

    holder: Mention
    slot: str  # the lexicon's slot name, or the free name as written
    slot_surface: str  # Y as the sentence writes it (叫, called for a name)
    lexicon: bool
    value: str
    value_start: int
    value_end: int
    polarity: str
    start: int  # the clause the frame read
    end: int
    confidence: float
    value_mention: Mention | None = None
    value_time: int | None = None
    time: int | None = None  # index into the sentence's times: the statement's own time words
    subject_entity: int | None = None
    value_entity: int | None = None
    kind: str = "set"  # one of KINDS: "set" a value stated, the others a change the sentence tells
    statement: bool = False  # read by memctl/r2g/changes.py: the clause's event facts stay (a move is an event)

    @property
    def subject(self) -> str:
        return self.holder.canonical

    def to_dict(self) -> dict:
        return {"subject": self.subject, "slot": self.slot, "slot_surface": self.slot_surface,
                "lexicon": self.lexicon, "value": self.value, "polarity": self.polarity,
                "span": [self.start, self.end], "confidence": self.confidence,
                "subject_entity": self.subject_entity, "value_entity": self.value_entity,
                "value_time": self.value_time, "time": self.time, "kind": self.kind}


@dataclass
class _Sentence:
    text: str
    lang: str
    speaker: str
    mentions: list
    times: list
    found: list = field(default_factory=list)


_ZH_PLACE_ENDS = ("市", "省", "区", "县", "镇", "村", "州", "国", "家里", "家", "本地", "外地", "老家", "那边", "这边")
# "Guess who doesn't live in Toronto anymore?": a question that tells, not asks
_RHETORICAL = re.compile(r"\W*(?:guess (?:who|what)|猜猜(?:看)?谁)", re.IGNORECASE)


def find_slots(sentence: str, lang: str, speaker: str | None, mentions: list[Mention],
               times: list[TimeExpr]) -> list[SlotFact]:
    """The slot facts of one sentence: its frames', then the statements of memctl/r2g/changes.py in the clauses
    no frame read ("we moved to Denver"). `mentions` are the language analyser's named entities (a holder or
    value spanning exactly one keeps its type), `times` the sentence's time expressions."""
    if sentence.rstrip().endswith(("?", "？")) and not _RHETORICAL.match(sentence):
        return []
    state = _Sentence(sentence, lang, speaker or DEFAULT_HOLDER.get(lang, "user"), mentions, times)
    if lang == "zh":
        _chinese(state)
    else:
        _english(state)
    from memctl.r2g.changes import find_statements

    state.found.extend(find_statements(state))
    if lang != "zh":
        from memctl.r2g.slot_statements_en import english_statements

        state.found.extend(english_statements(state))
    return state.found


# ---------------------------------------------------------------------------------------------------------
# Chinese

_ZH_LEAD = r"(?:而且|另外|还有|其实|现在|目前|对了)?"
_ZH_ONE_OF = re.compile(r"^(?:一个|一位|那个|这个|那位|这位)(?=..)")
_ZH_ENDED = r"(?P<ended>以前的|之前的|原来的|过去的)?"
_ZH_NEGATION = r"(?P<adverb>就|也|都|还|正|才|一直|真|确实|实在|可)?(?P<neg>不再|并不|不)?"
_ZH_WEI = r"(?<![华因成作认称以行])为"  # not the 为 of 华为, 因为, 成为…
_ZH_COPULA = rf"(?P<verb>是|{_ZH_WEI}|叫|有)"
_ZH_IS = rf"(?P<verb>是|{_ZH_WEI}|有)"
_ZH_NOUN = r"[^\s的是为叫有不我你他她它其]"

@cache
def _zh_frames() -> tuple:
    """(name, pattern), tried in this order: the first that reads a clause wins (what a relative is, 我同事是沈阳人,
    before the own frame would take 同事 as a slot). Compiled on first use: importing
    this module stays cheap."""
    frames = (
        ("origin", rf"^{_ZH_LEAD}(?P<mine>我的?)?(?P<x>{_ZH_NOUN}{{0,4}}?)(?:他|她)?(?P<verb>是)(?P<z>[^\s的]{{2,8}}?)人$"),
        ("occupation", rf"^{_ZH_LEAD}(?P<mine>我的?)?(?P<x>{_ZH_NOUN}{{0,4}}?)(?:他|她)?(?P<did>干的|做的)?(?P<verb>是)(?P<work>做|干|当)?"
                       rf"(?:一名|一位|一个|个|名|位)?(?P<z>[^\s的]{{2,10}}?)(?P<tail>的|这行|这一行)?$"),
        ("taste", rf"^{_ZH_LEAD}(?P<mine>我的?)?(?P<x>{_ZH_NOUN}{{1,4}}?)(?:他|她)?(?:也|还|一直|特别|特|很|非常|最|比较|超)*"
                  rf"(?P<verb>爱好|喜欢|热爱|爱)(?P<z>.+)$"),
        ("measured", rf"^{_ZH_LEAD}我?的?(?P<xy>[^\s的是为叫有不]{{3,8}}?)(?P<z>[0-9０-９一二两三四五六七八九十]+[^\s，。]{{0,4}})$"),
        ("workplace", rf"^{_ZH_LEAD}(?P<mine>我的?)?(?P<x>{_ZH_NOUN}{{0,4}}?)(?:他|她)?(?:现在|目前|一直)?在"
                      rf"(?P<z>[^\s，。在]{{2,12}}?)(?:上班|工作)(?:呢|了|啦)?$"),
        ("plan", rf"^{_ZH_LEAD}我(?:将要|即将|将|要|打算|准备|计划)(?P<z>参加[^的，。]{{2,24}})$"),
        ("estate", rf"^{_ZH_LEAD}我(?:现在|目前)?住的(?:那个|这个)?小区(?:名字)?(?P<verb>叫|是)(?P<z>.+)$"),
        ("relative", rf"^{_ZH_LEAD}我的?{_ZH_ENDED}(?P<x>{_ZH_NOUN}{{1,6}}?)的(?P<y>[^\s的是为叫有]{{1,8}}?)"
                     rf"{_ZH_NEGATION}{_ZH_COPULA}(?P<z>.+)$"),
        ("joined", rf"^{_ZH_LEAD}我的?{_ZH_ENDED}(?P<xy>[^\s的是为叫有不]{{2,10}}?){_ZH_NEGATION}"
                   rf"{_ZH_COPULA}(?P<z>.+)$"),
        ("own", rf"^{_ZH_LEAD}我的?{_ZH_ENDED}(?P<y>[^\s的是为叫有]{{1,8}}?){_ZH_NEGATION}{_ZH_COPULA}(?P<z>.+)$"),
        ("called", rf"^{_ZH_LEAD}我的?(?P<x>{_ZH_NOUN}{{1,4}}?)叫(?P<z>.+)$"),
        ("inverse", r"^(?P<z>[^\s，。的我你他她它]{2,8}?)是我的(?P<y>[^\s，。的]{1,6})$"),
        ("pronoun", rf"^(?P<x>其|它的|他的|她的)(?P<y>[^\s的是为叫有]{{1,8}}?){_ZH_NEGATION}{_ZH_IS}(?P<z>.+)$"),
        ("named", rf"^(?!但|而|可是|这|那)(?P<x>[^\s，。的我你他她它其]{{2,24}}?)的(?P<y>[^\s的是为有]{{1,8}}?){_ZH_NEGATION}"
                  rf"{_ZH_IS}(?P<z>.+)$"),
    )
    return tuple((frame, re.compile(pattern)) for frame, pattern in frames)


_ZH_THEIR = re.compile(r"^(?:他们|她们|他|她)")  # 我同事他们公司: the colleague's company
_ZH_FORMER = frozenset({"以前", "之前", "原来", "过去"})
# 我V的Y是Z is "the Y I V", not Y of a holder V: after a verb of using or keeping, Y is the speaker's (我用的手机
# 是… = my phone is …); after a verb of liking it is a preference (memctl/r2g/preferences.py), after another verb
# an event (我参观的医院是…), neither an attribute.
_ZH_USING_VERBS = frozenset({"用", "使用", "在用", "常用", "平时用", "现在用", "手头用", "手上用", "穿", "开", "养", "戴", "拥有"})
_ZH_OTHER_VERBS = frozenset({"喜欢", "最喜欢", "特别喜欢", "爱", "最爱", "中意", "偏爱", "讨厌", "参观", "路过",
                             "经过", "去", "去过", "买", "看", "看过", "参加", "住"})
_ZH_MINE = frozenset({"家", "手头", "手上", "身边"})  # 我家的猫, 我手头的手机: the speaker's own
_ZH_PRONOUN_END = re.compile(r"(?:他们|她们|他|她|它)$")  # 我表姐她是…: said of the cousin, no slot named
_ZH_EVALUATIVE_ADVERBS = frozenset({"真", "确实", "实在", "可"})
_ZH_TOPIC = re.compile(r"^我[^，。的]{0,8}的(?P<topic>[^，。的]{2,24})$")  # 我将要参加的X，它的…
_ZH_CLAUSE = re.compile(r"(?:[^，,；;：:。！？!?\n]|(?<=\d):(?=\d))+")  # 14:00 is a time, not a clause break
_ZH_QUESTION = re.compile(r"吗$|什么|哪|谁|多少|几[个点天岁]")
_ZH_EVALUATIVE = re.compile(r"^(?:很|挺|特别|非常|真|太|超|好|蛮|比较|相当|有点|最|更|还|都|也)")
_ZH_TRAILING = re.compile(r"[。！!～~…\s]+$|(?:了|啦|呢|哦|呀|的啊|啊)$")
_ZH_NAME = re.compile(r"[\u4e00-\u9fff]{2,4}")
_ZH_NOT_IN_NAMES = re.compile(r"[这那哪谁某的了是在有个位些们名一二两三四五六七八九十]")
_ZH_NUMERAL = re.compile(r"[0-9０-９〇零一二两三四五六七八九十百千万]")


def _chinese(state: _Sentence) -> None:
    topic: Mention | None = None
    clauses = list(_ZH_CLAUSE.finditer(state.text))
    index = 0
    while index < len(clauses):
        clause = clauses[index]
        index += 1
        text = clause.group()
        if _ZH_QUESTION.search(text):
            continue
        found = frame = None
        for frame, pattern in _zh_frames():
            match = pattern.match(text)
            found = None if match is None else _chinese_frame(state, frame, match, clause.start(), clause.end(),
                                                              topic)
            if found is not None:
                break
        if found is not None:
            state.found.append(found)
            if frame == "inverse":
                topic = found.value_mention
            elif found.value_mention is None and found.value_time is None and _free(found):
                index = _continued(state, found, clauses, index)
        elif _chinese_match(text)[0] is None and _ZH_TOPIC.match(text):
            named = _ZH_TOPIC.match(text)
            topic = named_holder(state, clause.start() + named.start("topic"), clause.start() + named.end("topic"))


# What a person is (我同事是主管, 我爸爸是做财务经理的): a person noun that is no relative, or a word ending like
# an occupation, or anything after 做/干 (是做销售的, 干的是医生这行); what else follows 是 (我表哥是内向的) is no
# job.
_ZH_OCCUPATION_ENDS = ("师", "员", "经理", "主管", "总监", "专家", "工", "长", "官", "销售", "会计", "老板")


def _kind(state, frame, match, base: int, start: int, end: int) -> SlotFact | None:
    """我表哥是山东济南人 (hometown 山东济南), 我的上司是个工程师, 陈梦婷她是做农民的 (job): what a person is, said
    with 是."""
    lexicon = slot_lexicon()
    holder = _person_subject(state, match, base) if match["x"] or match["mine"] else None
    if holder is None:
        return None
    value = match["z"]
    if frame == "origin" and not any(mention.entity_type == "Location" and base + match.start("z") <= mention.start
                                     and mention.end <= base + match.end("z") for mention in state.mentions):
        return None  # 我妈妈是个好人: no place before 人
    if frame == "occupation" and not (
            match["work"] or match["did"] or value.endswith(_ZH_OCCUPATION_ENDS)
            or value.endswith(tuple(gazetteer().occupation_nouns_zh))
            or (value in gazetteer().person_nouns_zh and not lexicon.person_noun(value, "zh"))):
        return None
    surface = "老家" if frame == "origin" else "职业"
    return _slot(state, holder, surface, match, base, start, end, STATED)


def _measured(state, match, base: int, start: int, end: int) -> SlotFact | None:
    """我舅舅身高176厘米, 我表姐生日9月17号: a relative, a slot of number or date and its value, with no copula."""
    split = _relative_and_slot(match["xy"])
    spec = None if split is None else slot_lexicon().named_by(split[1], "zh")
    if spec is None or spec.value_kind not in ("number", "date"):
        return None
    noun, surface = split
    holder = relative_holder(state, noun, base + match.start(), base + match.start("xy") + len(noun))
    return _slot(state, holder, surface, match, base, start, end, STATED)


def _person_subject(state, match, base: int) -> Mention | None:
    """Who a frame with (我的)? X is about: the speaker's relative X (我表哥, 表哥), the speaker when X is empty
    after 我, a person named X (陈梦婷); None otherwise."""
    x_start, x_end = base + match.start("x"), base + match.end("x")
    if match["x"] and slot_lexicon().person_noun(match["x"], "zh"):
        return relative_holder(state, match["x"], base + match.start(), x_end)
    if not match["x"]:
        return speaker_holder(state, base + match.start("mine")) if match["mine"] else None
    named = None if match["mine"] else mention_at(state, x_start, x_end)
    return named if named is not None and named.entity_type == "Person" else None


def _taste(state, match, base: int, start: int, end: int) -> SlotFact | None:
    """我婶婶特别爱画画, 刘志宏特别爱好美食烹饪: what another person likes is a slot fact of theirs (the speaker's
    own likes are preferences, memctl/r2g/preferences.py)."""
    holder = _person_subject(state, match, base)
    if holder is None:
        return None
    surface = "爱好" if match["verb"] == "爱好" else "喜好"
    return _slot(state, holder, surface, match, base, start, end, STATED)


def _relative_and_slot(words: str) -> tuple | None:
    """我婶婶生日, 我的上司生日, 我同事他们公司: a relative and a slot written together, (婶婶, 生日), (同事, 公司);
    None when they are not (爸爸 is one relative, not 爸 + 爸)."""
    lexicon = slot_lexicon()
    if lexicon.person_noun(words, "zh"):
        return None
    for cut in range(1, len(words)):
        rest = _ZH_THEIR.sub("", words[cut:])
        if lexicon.person_noun(words[:cut], "zh") and lexicon.named_by(rest, "zh") is not None:
            return words[:cut], rest
    return None


def _chinese_match(text: str) -> tuple:
    for frame, pattern in _zh_frames():
        match = pattern.match(text)
        if match is not None:
            return frame, match
    return None, None


_ZH_NEW_CLAUSE = re.compile(r"^(?:我|你|他|她|它|其|这|那|就是|但|不过|可是|只是|而且|另外|如果|要是|希望)")


def _free(found: SlotFact) -> bool:
    spec = slot_lexicon().slots.get(found.slot) if found.lexicon else None
    return spec is None or spec.value_kind == "free"


def _continued(state: _Sentence, found: SlotFact, clauses: list, index: int) -> int:
    """A free value (主要内容是展示…，交流…，体验…) runs on over the clauses that follow it and start nothing
    new (no frame, no subject of their own); returns the index of the first clause not taken."""
    while index < len(clauses):
        text = clauses[index].group()
        if _chinese_match(text)[0] is not None or _ZH_NEW_CLAUSE.match(text):
            break
        found.value_end = found.end = clauses[index].start() + len(_zh_trimmed(text))
        index += 1
    found.value = state.text[found.value_start:found.value_end]
    return index


def _chinese_frame(state, frame, match, start, end, topic) -> SlotFact | None:
    lexicon = slot_lexicon()
    base = start
    if match.groupdict().get("adverb") in _ZH_EVALUATIVE_ADVERBS:
        return None  # 环境真是整洁又明亮: an evaluation, not a value
    if frame == "relative" and (match["x"] in _ZH_FORMER or match["x"] in _ZH_OTHER_VERBS or (
            match["x"] not in _ZH_MINE and not lexicon.person_noun(match["x"], "zh")
            and lexicon.named_by(match["y"], "zh") is None)):
        return None  # 我以前的…: the own frame's; 我住的那个小区叫…: X is no relative and Y no slot (a verb?)
    if frame == "own" and _ZH_PRONOUN_END.search(match["y"]):
        return None
    if frame == "called":
        if not lexicon.person_noun(match["x"], "zh"):
            return None
        holder = relative_holder(state, match["x"], base + match.start() , base + match.end("x"))
        return _slot(state, holder, "名字", match, base, start, end, STATED, written="叫")
    if frame in ("origin", "occupation"):
        return _kind(state, frame, match, base, start, end)
    if frame == "measured":
        return _measured(state, match, base, start, end)
    if frame == "workplace":
        holder = _person_subject(state, match, base) if match["x"] or match["mine"] else None
        if holder is None:
            return None
        # 在杭州工作, 在山东青岛上班 name a place of work; 在腾讯工作, 在星辰软件工作 (a name the analyser does not
        # know) an employer
        value_start, value_end = base + match.start("z"), base + match.end("z")
        at_place = match["z"].endswith(_ZH_PLACE_ENDS) or any(
            mention.entity_type == "Location" and value_start <= mention.start and mention.end <= value_end
            for mention in state.mentions)
        surface = "工作地" if at_place else "单位"
        return _slot(state, holder, surface, match, base, start, end, STATED)
    if frame == "plan":  # 我将要参加翻译行业交流峰会
        return _slot(state, speaker_holder(state, base + match.start()), "计划", match, base, start, end, STATED)
    if frame == "taste":
        return _taste(state, match, base, start, end)
    if frame == "estate":
        return _slot(state, speaker_holder(state, base + match.start()), "住址", match, base, start, end, STATED,
                     written="小区")
    if frame == "inverse":
        spec = lexicon.named_by(match["y"], "zh")
        if spec is not None and spec.value_kind != "person":
            return None
        return _slot(state, speaker_holder(state, base + match.start("y") - 2), match["y"], match, base, start, end,
                     STATED, needs_person=True)
    if frame == "joined":
        split = _relative_and_slot(match["xy"])
        if split is None:
            return None  # not 上司 + 生日: the own frame reads it (我的手机是…)
        noun, surface = split
        holder = relative_holder(state, noun, base + match.start(), base + match.start("xy") + len(noun))
        polarity = NEGATED if match["neg"] else ENDED if match["ended"] else STATED
        return _slot(state, holder, surface, match, base, start, end, polarity)
    if frame == "pronoun":
        if topic is None:
            return None
        holder = topic
    elif frame == "relative" and match["x"] not in _ZH_MINE and match["x"] not in _ZH_USING_VERBS:
        holder = relative_holder(state, match["x"], base + match.start(), base + match.end("x"))
    elif frame in ("own", "relative"):  # 我家的猫 is 我的猫, 我用的手机 is 我的手机, 我手头的手机 too
        holder = speaker_holder(state, base + match.start())
    else:
        holder = _holder(state, match["x"], base + match.start("x"), base + match.end("x"))
    spec = lexicon.named_by(match["y"], "zh")
    if match["verb"] == "有" and not (_ZH_NUMERAL.match(match["z"])
                                     and (spec is None or spec.value_kind in ("number", "date"))):
        return None  # 身高有172厘米; 我家有一只猫 is no address
    polarity = NEGATED if match["neg"] else ENDED if match.groupdict().get("ended") else STATED
    if _ZH_EVALUATIVE.match(match["y"]):
        return None  # 我特别中意…: Y is no noun
    if match["verb"] == "叫" and (spec is None or spec.value_kind == "person"):
        # 我家的猫叫咪咪, 我的上司名叫…: Y is who or what is called Z, a holder of its own (单位叫…, 名字叫…
        # are Y itself)
        named = match["y"].removesuffix("名") or match["y"]
        owner = holder.canonical if holder.entity_type == "Person" else state.speaker
        holder = relative_holder(state, named, base + match.start(), base + match.start("y") + len(named), owner)
        return _slot(state, holder, "名字", match, base, start, end, polarity, written="叫")
    surface = match["y"]
    fresh = spec is None and surface.startswith("新") and lexicon.named_by(surface[1:], "zh") is not None
    found = _slot(state, holder, surface[1:] if fresh else surface, match, base, start, end, polarity)
    if found is not None and fresh and polarity == STATED:  # 我的新号码是…: a value that replaces one
        found.kind = "add" if lexicon.slots[found.slot].multi_valued else "change"
    return found


# ---------------------------------------------------------------------------------------------------------
# English

_EN_WORD = r"[A-Za-z][A-Za-z-]*"
_EN_WORDS = rf"(?:{_EN_WORD} ){{0,2}}{_EN_WORD}"
_EN_COPULA = r"(?P<verb>is not|was not|isn't|wasn't|used to be|is|was)"
_EN_VALUE = r"(?P<z>.+)$"
_EN_NAME = r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2}"
@cache
def _en_frames() -> tuple:
    """(name, pattern), tried in this order: the first that reads a clause wins (what a relative is, 我同事是沈阳人,
    before the own frame would take 同事 as a slot). Compiled on first use."""
    frames = (
        ("relative", rf"\b[Mm]y (?P<x>{_EN_WORDS})['’]s (?P<y>{_EN_WORDS}) {_EN_COPULA} {_EN_VALUE}"),
        ("named", rf"\b(?P<x>{_EN_NAME})['’]s (?P<y>{_EN_WORDS}) {_EN_COPULA} {_EN_VALUE}"),
        ("called", rf"\b[Mm]y (?P<x>{_EN_WORDS}) (?:is|was|['’]s) (?:called|named) (?P<z>{_EN_NAME})$"),
        ("own", rf"\b[Mm]y (?P<y>{_EN_WORDS}) {_EN_COPULA} {_EN_VALUE}"),
        ("inverse", rf"^(?P<z>{_EN_NAME}) (?:is|['’]s) my (?P<y>{_EN_WORDS})$"),
    )
    return tuple((frame, re.compile(pattern)) for frame, pattern in frames)


_EN_CLAUSE = re.compile(r"(?:[^;:!?.—]|\.(?=\S))+")
_EN_ENDED_MODIFIERS = frozenset({"old", "former", "previous", "ex", "late"})
_EN_NEUTRAL_MODIFIERS = frozenset({"new", "current", "present", "own", "real", "actual"})
_EN_EVALUATIVE = frozenset({
    "so", "really", "very", "pretty", "super", "such", "too", "kinda", "quite", "awesome", "amazing", "great",
    "good", "fine", "ok", "okay", "nice", "cool", "hard", "tough", "important", "key", "everything", "about",
    "all", "just", "still", "also", "like", "doing", "going", "getting", "coming", "busy", "crazy", "out",
    "over", "up", "down", "here", "there", "not", "always", "never", "the best", "best", "worth", "something",
    "nothing", "what", "how", "why", "gone", "back", "a lot", "lots", "much", "more", "less", "same"})
_EN_ARTICLES = frozenset({"a", "an", "the"})
_EN_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_EN_SUBJECT = r"(?:I|you|he|she|we|they|it|this|that|there)\b"
# Where a value ends: a subordinate clause, or a clause of its own subject ("…, but it pushed me", "… and I …").
_EN_VALUE_END = re.compile(
    rf"(?:,\s*|\s+)(?:because|though|although|which|who|whom|whose|when|while|if|unless|until)\b.*$"
    rf"|(?:,\s*|\s+)(?:and|but|so|or)\s+{_EN_SUBJECT}.*$|,\s*(?:{_EN_SUBJECT}|but|so)\b.*$", re.IGNORECASE)
# The only words a clause may hold before the frame: "my job" in "Losing my job was a bummer" is no subject.
_EN_LEAD_WORDS = frozenset({"and", "but", "so", "yeah", "yes", "oh", "well", "also", "plus", "now", "then",
                            "thankfully", "honestly", "actually", "anyway", "btw", "because", "cause", "'cause",
                            "since", "i", "think", "guess", "know", "mean", "believe", "that", "as", "for", "sure",
                            "ok", "okay", "hey", "hi", "wow", "though", "still", "currently", "right"})
_EN_NON_NAMES = frozenset({"It", "That", "This", "What", "Here", "There", "Let", "He", "She", "Who", "Everyone",
                           "Everything", "Today", "Life", "Nobody", "Somebody", "Someone", "Mine", "Yours"})


def _english(state: _Sentence) -> None:
    for clause in _EN_CLAUSE.finditer(state.text):
        text = clause.group()
        offset = clause.start() + len(text) - len(text.lstrip())
        text = text.strip()
        for frame, pattern in _en_frames():
            match = pattern.search(text)
            if match is not None and _led_in(text[: match.start()]):
                found = _english_frame(state, frame, match, offset, offset + len(text))
                if found is not None:
                    state.found.append(found)
                    break


def _english_frame(state, frame, match, start, end) -> SlotFact | None:
    lexicon = slot_lexicon()
    base = start
    if frame == "called":
        if _function_words(match["x"]):
            return None
        holder = relative_holder(state, match["x"], base + match.start(), base + match.end("x"))
        written = "called" if "called" in match.group() else "named"
        return _slot(state, holder, "name", match, base, start, end, STATED, written=written)
    if _function_words(match["y"]):
        return None
    words = match["y"].lower().split()
    polarity = ENDED if words[0] in _EN_ENDED_MODIFIERS else STATED
    if words[0] in _EN_ENDED_MODIFIERS | _EN_NEUTRAL_MODIFIERS and len(words) > 1:
        words = words[1:]
    surface = " ".join(words)
    if frame == "inverse":
        if not lexicon.person_noun(surface, "en"):
            return None
        return _slot(state, speaker_holder(state, base + match.start("y") - 3), surface, match, base, start, end,
                     STATED, needs_person=True)
    verb = match["verb"]
    if "not" in verb or "n't" in verb:
        polarity = NEGATED
    elif verb == "used to be":
        polarity = ENDED
    if frame == "own":
        if lexicon.named_by(surface, "en") is None or words[0] in ("favorite", "favourite"):
            return None
        holder = speaker_holder(state, base + match.start())
    elif frame == "relative":
        if _function_words(match["x"]):
            return None
        holder = relative_holder(state, match["x"], base + match.start(), base + match.end("x"))
    else:
        if match["x"].split()[0] in _EN_NON_NAMES:
            return None
        holder = _holder(state, match["x"], base + match.start("x"), base + match.end("x"))
    found = _slot(state, holder, surface, match, base, start, end, polarity)
    if found is not None and polarity == STATED and match["y"].lower().startswith("new "):
        # "My new boss is Tom": a value that replaces one (or joins the others of a multi-valued slot)
        spec = slot_lexicon().slots.get(found.slot) if found.lexicon else None
        found.kind = "add" if spec is not None and spec.multi_valued else "change"
    return found


def _led_in(before: str) -> bool:
    return all(word in _EN_LEAD_WORDS for word in re.findall(r"[a-z']+", before.lower()))


@lexicon_cache
def english_function_words() -> frozenset:
    words = english_words()
    return (words["pronouns"] | words["determiners"] | words["prepositions"] | words["conjunctions"]
            | words["auxiliaries"] | words["negations"] | frozenset(words["modals"]))


def _function_words(phrase: str) -> bool:
    function_words = english_function_words()
    return any(word in function_words for word in phrase.lower().split())


# ---------------------------------------------------------------------------------------------------------
# holders, values


def speaker_holder(state: _Sentence, start: int, length: int | None = None) -> Mention:
    """The speaker, written at `start` (我, "my"); with length 0 named by the first-person pronoun instead of
    the words at `start` (we, 我们家, or none: 辞职了), so that no word of the clause becomes the speaker's alias."""
    if length is None:
        length = 1 if state.lang == "zh" else 2
    start = max(start, 0)
    text = state.text[start: start + length] if length else ("我" if state.lang == "zh" else "I")
    return Mention(text, start, start + length, "Person", state.speaker, confidence=0.8)


def relative_holder(state: _Sentence, noun: str, start: int, end: int, owner: str | None = None,
                    person: bool = False) -> Mention:
    """The speaker's X (or `owner`'s): "Ann's aunt", "用户的婶婶"; a Person when X names a person slot or
    `person` says so."""
    owner = owner or state.speaker
    if state.lang == "zh":
        noun = _ZH_ONE_OF.sub("", noun)  # 我的一个下属 is 用户的下属
    name = f"{owner}的{noun}" if state.lang == "zh" else f"{owner}'s {noun.lower()}"
    person = person or slot_lexicon().person_noun(noun, state.lang)
    # Named as its canonical form, not as written: "my aunt" would become an alias of every speaker's aunt.
    return Mention(name, start, end, "Person" if person else "Other", name, confidence=0.75)


def _holder(state: _Sentence, text: str, start: int, end: int) -> Mention:
    """A holder named in the sentence: a bare relative is the speaker's; a name keeps the analyser's type."""
    if slot_lexicon().person_noun(text, state.lang):
        return relative_holder(state, text, start, end)
    return named_holder(state, start, end)


def named_holder(state: _Sentence, start: int, end: int) -> Mention:
    for mention in state.mentions:
        if (mention.start, mention.end) == (start, end) and not mention.pronoun:
            return mention
    return Mention(state.text[start:end], start, end, "Other", confidence=0.7)


def _slot(state, holder: Mention, surface: str, match, base: int, start: int, end: int, polarity: str,
          needs_person: bool = False, written: str | None = None) -> SlotFact | None:
    """`surface` names the slot (mapped through the lexicon); `written` is what the sentence wrote for it when
    that is not the surface itself (叫, called)."""
    spec = slot_lexicon().named_by(surface, state.lang)
    return slot_fact(state, holder, spec, written or surface, base + match.start("z"), base + match.end("z"),
                     start, end, polarity, needs_person, surface)


def slot_fact(state, holder: Mention, spec: SlotSpec | None, written: str, value_start: int, value_end: int,
              start: int, end: int, polarity: str, needs_person: bool = False, surface: str | None = None,
              kind: str = "set") -> SlotFact | None:
    """The slot fact of `spec` (None: the free slot `surface`) whose value is the sentence's text from
    `value_start` to `value_end`, trimmed; None when that value cannot be the slot's. `start`, `end`: the
    clause, where the statement's own time words are looked for."""
    if spec is not None and spec.name == "residence" and holder.entity_type != "Person":
        spec = None  # 我公司的地址: an organisation's address, no one's residence
    value_start, value_end = _trimmed_value(state, value_start, value_end, spec)
    value = state.text[value_start:value_end]
    value_mention = mention_at(state, value_start, value_end)
    if not _acceptable(state, value, value_start, spec, value_mention,
                       needs_person or (spec and spec.value_kind == "person")):
        return None
    value_time = next((index for index, time in enumerate(state.times)
                       if (time.start, time.end) == (value_start, value_end)), None)
    if value_mention is None and spec is not None and spec.value_kind == "person":
        value_mention = Mention(value, value_start, value_end, "Person", confidence=0.7)
    surface = surface or written
    slot = spec.name if spec is not None else (surface if state.lang == "zh" else surface.lower())
    confidence = 0.8 if spec is not None else 0.6
    return SlotFact(holder, slot, written, spec is not None, value, value_start, value_end, polarity, start, end,
                    confidence, value_mention, value_time, statement_time(state, start, end, value_start, value_end),
                    kind=kind)


def statement_time(state, start: int, end: int, value_start: int, value_end: int) -> int | None:
    """The index of the clause's first time expression outside the value: the statement's own time words."""
    return next((index for index, time in enumerate(state.times)
                 if start <= time.start and time.end <= end and (time.end <= value_start or time.start >= value_end)),
                None)


def _trimmed_value(state: _Sentence, start: int, end: int, spec: SlotSpec | None) -> tuple[int, int]:
    text = state.text[start:end]
    if state.lang == "zh":
        trimmed = _zh_trimmed(text)
        lead = 1 if trimmed.startswith("在") and spec is not None and spec.value_kind in ("date", "place") else 0
        if spec is not None and spec.value_kind in ("place", "product", "organisation") and trimmed.endswith("的"):
            trimmed = trimmed[:-1]  # 是山东青岛的, 是美的的: the place or brand, without the 的 that closes it
        return start + lead, start + len(trimmed)
    trimmed = _EN_VALUE_END.sub("", text).rstrip(" .,!\"'”’)")
    article = _EN_ARTICLE.match(trimmed)
    lead = article.end() if article else 0
    return start + lead, start + len(trimmed)


def _zh_trimmed(text: str) -> str:
    """Without the closing punctuation and particles: 在7月7号。 → 在7月7号, 三千人了 → 三千人."""
    while True:
        shorter = _ZH_TRAILING.sub("", text)
        if shorter == text:
            return text
        text = shorter


def mention_at(state: _Sentence, start: int, end: int) -> Mention | None:
    return next((mention for mention in state.mentions
                 if (mention.start, mention.end) == (start, end) and not mention.pronoun), None)


def _acceptable(state: _Sentence, value: str, start: int, spec: SlotSpec | None, mention: Mention | None,
                needs_person: bool) -> bool:
    if not value or len(value) > MAX_VALUE_CHARS:
        return False
    if state.lang == "zh":
        if _ZH_EVALUATIVE.match(value) or value.startswith(("不", "没")):
            return False
    else:
        lowered = value.lower()
        words = lowered.split()
        if len(words) > MAX_ENGLISH_VALUE_WORDS or any(lowered == word or lowered.startswith(word + " ")
                                                       for word in _EN_EVALUATIVE):
            return False
        timed = any(time.start == start for time in state.times)  # "May 5": a month, not the modal
        if words[0] in english_function_words() - _EN_ARTICLES and not timed and not (
                words[0] == "to" and spec is not None and spec.value_kind == "free"):
            return False  # "is on June 17th", "is at the Blue Note": a place or time of something, no value
            # ("My goal is to …" is a plan)
        if spec is None and (words[0].endswith("ing") or not re.search(r"\d|@|(?:^|\s)[A-Z]", value)):
            return False  # "Tim's band is performing …": a progressive, not a value
    if needs_person:
        return _person_name(state, value, mention)
    return spec is None or _fits(spec.value_kind, value, state)


def _person_name(state: _Sentence, value: str, mention: Mention | None) -> bool:
    if mention is not None:
        return mention.entity_type == "Person"
    if state.lang == "zh":
        # A name the analyser missed: two to four Han characters that are no word of a slot or a function word.
        from memctl.r2g.nlp_zh import plausible_name

        return (_ZH_NAME.fullmatch(value) is not None and not _ZH_NOT_IN_NAMES.search(value) and plausible_name(value)
                and slot_lexicon().named_by(value, "zh") is None
                and not any(noun in value for noun in gazetteer().person_nouns_zh)
                and not any(noun in value for noun in gazetteer().occupation_nouns_zh))  # 大学教授 is no name
    return re.fullmatch(_EN_NAME, value) is not None and value.split()[0] not in _EN_NON_NAMES


def _fits(kind: str, value: str, state: _Sentence) -> bool:
    if kind == "phone":
        return len(re.findall(r"\d", value)) >= 7
    if kind == "email":
        return "@" in value
    if kind in ("date", "number"):
        return _ZH_NUMERAL.search(value) is not None or any(
            time.expression in value for time in state.times)
    return True
