"""Chinese analysis: jieba.posseg tokens, repaired with our lexicons, then the R2G-6 minimum rules.

Word classes come from jieba (nr person, ns place, nt organisation, nz other proper noun, t time, v verb, n noun;
computed by engine.text.chinese over a compiled copy of jieba's dictionary, or by jieba itself when that copy
cannot be used) but are corrected where jieba's dictionary is wrong for conversation (蓝牙/ns, 过敏/nr,
超市/v): lexicon words are added to a private tagger with our own tags, so the segmenter the text index uses
is never modified. Names that jieba's HMM invents are kept only when they start with a common surname.

Rules (seed R2G-6), applied per clause (split at ，；):
- the noun phrase or name before the first verb is the subject → AGENT (和/跟 join a second one);
- 在/于 + place (+ 里/上/中…) → LOCATION; after a verb too (丢在出租车上, 出生在上海);
- verb + direct object → predicate + PATIENT, or the lexicon's role for it (搬到深圳 → LOCATION);
- 给 + person → RECIPIENT, 把/对 + noun → PATIENT, 用 + noun → INSTRUMENT, 被 makes the subject the PATIENT;
- time words → TIME (from memctl.language.timenorm, which resolves them);
- 不/没/别/从不 before the verb → negation; 可能/应该/能/想/要/打算… → modality; 开始/继续 are transparent;
  喜欢/讨厌/学 + verb phrase take that phrase's object as their PATIENT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.language.lexicon import aliases, chinese_words, gazetteer, lexicon_cache
from memctl.language.slot_lexicon import slot_lexicon
from memctl.language.timenorm import TimeExpr
from memctl.model import normalize_text
from memctl.r2g.predicates import chinese_surface_words, fallback_predicate, lexicon
from memctl.r2g.structures import Analysis, Mention, RawFact

# Common surnames (百家姓, the most frequent ~130) for names jieba's HMM proposes.
_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪"
    "范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁"
    "岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "令狐", "慕容", "尉迟", "长孙")
_PERSON_SUFFIXES = ("老师", "同学", "医生", "经理", "总", "先生", "女士", "阿姨", "叔叔", "师傅", "教授", "主任", "老板", "姐", "哥",
                    "者", "员", "师")
_NUMBER_MEASURE = re.compile(r"^[0-9一二两三四五六七八九十百几半每这那哪]+[个本台家只件条张位次顿场辆套部双杯瓶份种块首篇]")
# Single-character verbs whose jieba tag is often wrong (学/n, 丢/zg): trusted when not followed by 的.
_SINGLE_VERBS = frozenset("学丢住搬爱借买卖吃喝踢画听唱跑写读教修寄喂遛待去到来回看用做开关装送发给问找见玩叫花种练帮租存付煮炒烤")
_TRANSPARENT = frozenset({"开始", "继续", "停止", "尝试", "试着", "试图", "决定", "坚持", "学着", "帮"})
_COMPLEMENT_TAKERS = frozenset({"like", "dislike", "prefer", "learn"})
_CLAUSE_BREAKS = frozenset("，,；;：:、。！？!?…\n")
_NOUN_FLAGS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "ng", "zg", "nper", "nplace", "nprod", "s", "j", "eng", "an", "nw"})
# jieba's dictionary tags some everyday words ns (海鲜, 太极, 太多, 哥哥): a two-character place name must be
# known to us or end like one.
_TOPONYM_FINALS = frozenset("州京阳安山海江河湖岛城市县区镇村港口门庆沙宁原昌南北东西林川肥都汉津连坊台关德兴化庄桥滨源")
# Single-character verbs that jieba's dictionary tags otherwise (去/t, 学/n, 丢/zg).
_VERB_CHARACTERS = "去来回吃喝买卖学丢住搬借踢唱跑写读教修寄喂遛待看玩听画叫找送问见"
# Classes of names. nper (妈妈, 医生) and nplace (公园, 家里) are our lexicon's common nouns: a relative is a Person
# (_person_type), an occupation or a place noun names no entity.
_NAME_FLAGS = {"nr": "Person", "nrt": "Person", "nrfg": "Person", "ns": "Location", "nt": "Organization",
               "nprod": "Product"}
_ENTITY_TAGS = {"Location": "ns", "Organization": "nt", "Product": "nprod", "Person": "nr", "Object": "n", "Other": "nz"}


@dataclass(slots=True)
class Token:
    text: str
    flag: str
    start: int
    end: int
    entity_type: str | None = None
    canonical: str = ""
    aliases: tuple[str, ...] = ()
    time_index: int | None = None

    @property
    def is_noun(self) -> bool:
        return self.flag in _NOUN_FLAGS or self.entity_type is not None

    @property
    def is_verb(self) -> bool:
        return self.flag.startswith("v")


# ---------------------------------------------------------------------------------------------------------
# tokenizer


@lexicon_cache
def _pos_tokenizer():
    """A tagger of our own over jieba's dictionary (engine.text.chinese: its compiled copy, or jieba itself when
    that cannot be used) with the lexicon's words added under our classes; the text index's segmenter never
    sees them."""
    from engine.text.chinese import pos_tagger

    return pos_tagger(_lexicon_words())


def _lexicon_words():
    """(word, class) of the lexicon words the tagger must know, in the order they are added: a fixed order, since
    the frequency a word gets depends on the words added before it (and the compiled file is keyed by them)."""
    names = gazetteer()
    yield from ((word, "v") for word in chinese_surface_words())
    yield from ((character, "v") for character in _VERB_CHARACTERS)
    yield from ((word, "nper") for word in sorted(names.person_nouns_zh))
    yield from ((word, "nplace") for word in sorted(names.place_nouns_zh))
    yield from ((word, "ns") for word in sorted(names.locations) if _has_han(word))
    yield from ((word, "nt") for word in sorted(names.organizations) if _has_han(word))
    for surface, entry in aliases().exact.items():
        if _has_han(surface):
            yield surface, _ENTITY_TAGS[entry.entity_type]


def warm_up() -> None:
    """Load the dictionary and the lexicons now rather than inside the first sentence."""
    _pos_tokenizer()


def _has_han(text: str) -> bool:
    return any("\u3400" <= character <= "\u9fff" for character in text)


_DIGIT = re.compile(r"\d")
_SPACE_OR_HYPHEN = re.compile(r"[\s\-]")
_LATIN_ENTITY = re.compile(r"[A-Za-z][A-Za-z0-9.+#'\-]*(?:\s?[0-9]+(?:\.[0-9]+)*)?(?:\s(?:Pro|Max|Plus|Air|mini|Ultra))*")


def tokenize(sentence: str, times: list[TimeExpr]) -> list[Token]:
    """Segment with jieba's dictionary and its fast HMM for unknown words, tag from the dictionary.

    jieba.posseg's own HMM tags unknown words jointly with segmentation but costs ~7 times more (it searches
    every word class for every character); our rules only need the dictionary tags, plus a class for the words
    jieba's HMM discovers: a plausible Chinese name (surname first) is nr, anything else a noun."""
    tagger = _pos_tokenizer()
    tags = tagger.word_tag_tab
    tokens: list[Token] = []
    position = 0
    for word in _words(sentence, tagger.tokenizer):
        flag = tags.get(word)
        if flag is None and _has_han(word) and not tagger.tokenizer.FREQ.get(word):
            pieces = _unknown_word(word, position, tagger)
        else:
            pieces = [Token(word, flag or _non_han_flag(word), position, position + len(word))]
        for piece in pieces:
            tokens.extend(_repair(piece, tagger))
        position += len(word)
    tokens = _merge_split_names(_merge_short_names(_merge_latin_entities(sentence, tokens)))
    tokens = _merge_occupations(_merge_proper_names(_adjectives_after_degree(tokens)))
    return _merge_times(tokens, times)


BLOCKS_REMEMBERED = 1 << 16  # a block and its words: a few hundred bytes


def _words(sentence: str, tokenizer) -> list[str]:
    """`tokenizer.cut(sentence, HMM=True)`, block by block: jieba cuts a sentence into blocks (runs of Han
    characters, letters and digits, and what lies between them) and each block on its own, so the cut of a
    sentence is the cut of its blocks joined. Blocks repeat across a conversation far more than sentences do
    (on a 4 MiB generated transcript, half of the Chinese blocks and a third of their characters are repeats),
    and a block's cut is remembered."""
    from engine.text.chinese.segmenter import BLOCK

    remembered = _block_words()
    words: list[str] = []
    for block in BLOCK.split(sentence):
        if not block:
            continue
        found = remembered.get(block)
        if found is None:
            found = tuple(tokenizer.cut(block, HMM=True))
            remembered.put(block, found)
        words.extend(found)
    return words


@lexicon_cache
def _block_words():
    """block → its words; forgotten with the private tokenizer, whose added words change the cuts."""
    from memctl.r2g.recent import Recent

    return Recent(BLOCKS_REMEMBERED)


_DEGREE_ADVERBS = frozenset({"很", "挺", "特别", "非常", "真", "太", "好", "超", "十分", "相当", "比较", "更", "最"})


def _adjectives_after_degree(tokens: list[Token]) -> list[Token]:
    """社区氛围特别温馨: after a degree adverb, a word jieba takes for a name (温馨/nr) is an adjective."""
    for previous, token in zip(tokens, tokens[1:]):
        if previous.text in _DEGREE_ADVERBS and token.entity_type == "Person" and not token.canonical:
            token.flag, token.entity_type = "a", None
    return tokens


def _merge_occupations(tokens: list[Token]) -> list[Token]:
    """销售经理, 研发总监: a trade the verb lexicon does not know before a job noun is one noun (an occupation),
    not a verb 销售 whose object is a manager."""
    names = gazetteer()
    merged: list[Token] = []
    for token in tokens:
        previous = merged[-1] if merged else None
        if (previous is not None and previous.flag in ("v", "vn") and len(previous.text) >= 2
                and lexicon().zh_words.get(previous.text) is None
                and (token.text in _TITLE_NOUNS or token.text in names.occupation_nouns_zh)):
            merged[-1] = Token(previous.text + token.text, "n", previous.start, token.end)
            continue
        merged.append(token)
    return merged


def _merge_short_names(tokens: list[Token]) -> list[Token]:
    """小刘, 老王, 阿杰: a familiar prefix and a surname that jieba left as two tokens are one name."""
    merged: list[Token] = []
    for token in tokens:
        previous = merged[-1] if merged else None
        if (previous is not None and previous.text in ("小", "老", "阿") and len(token.text) == 1
                and token.text in _SURNAMES and previous.end == token.start):
            merged[-1] = Token(previous.text + token.text, "nr", previous.start, token.end, entity_type="Person")
            continue
        merged.append(token)
    return merged


# Around a name jieba cut after its surname (郭 + 志强, 刘子 + 墨): where a sentence names a person.
_NAME_OPENERS = frozenset({"叫", "是", "和", "跟", "与", "给", "让", "找", "，", ",", "。", "：", ":"})
_NAME_CLOSERS = frozenset({"的", "是", "和", "跟", "与", "说", "在", "今年", "，", ",", "。", "！", "？"})
_NOT_SURNAME_FLAGS = frozenset({"m", "r", "ns", "nt", "nz", "nplace", "nper"})  # 沈阳人 is from 沈阳
_NOT_NAME_PARTS = frozenset({"v", "vn", "p", "c", "u", "uj", "ul", "uz", "d", "r", "m", "q", "t", "f", "y", "e"})


def _merge_split_names(tokens: list[Token]) -> list[Token]:
    """郭志强的生日, 张欣怡的…, 刘子墨是我的下属: jieba cuts a three-character name it does not know after its
    surname (or after a two-character piece it takes for a name); where the sentence names a person (at its
    start or after 叫/是/和, before 的/是/和) the pieces are one Person."""
    merged: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        after = tokens[index + 2] if index + 2 < len(tokens) else None
        before = merged[-1] if merged else None
        if (following is not None and len(token.text) + len(following.text) == 3 and token.text[0] in _SURNAMES
                and token.flag not in _NOT_SURNAME_FLAGS and following.flag not in _NOT_SURNAME_FLAGS and _has_han(following.text)
                and following.flag not in _NOT_NAME_PARTS and following.text not in _FUNCTION_CHARACTERS
                and (before is None or before.text in _NAME_OPENERS) and (after is None or after.text in _NAME_CLOSERS)
                and not (token.entity_type and token.entity_type != "Person")):
            merged.append(Token(token.text + following.text, "nr", token.start, following.end, entity_type="Person"))
            index += 2
            continue
        merged.append(token)
        index += 1
    return merged


_ORGANIZATION_NAME_PARTS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "vn", "j", "eng", "nper", "nplace", "an"})
_PROPER_FLAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "j", "eng"})
_PLACE_NAME_PARTS = frozenset({"n", "nr", "nrt", "nrfg", "ns", "nz", "j"})
_ORGANIZATION_NAME_CHARS = 12
_GENERIC_AREAS = frozenset({"地区", "本地", "当地", "附近", "周边", "各地", "全国"})
_KINDS_OF_ORGANIZATION = frozenset({"公司", "集团", "分公司", "工作室"})  # 广州公司: a company in Guangzhou


def _organization_name_part(token: Token) -> bool:
    """A word of an organisation's name: a noun or name, an ordinal (上海浦东新区第一中学), a verb of its trade
    (速递); not a one-character verb (在上海开公司) nor one the verb lexicon knows (记者参加公司团建)."""
    return token.time_index is None and (token.flag in _ORGANIZATION_NAME_PARTS or token.entity_type is not None
                                         or (token.flag == "m" and token.text.startswith("第"))
                                         or (token.flag == "v" and len(token.text) >= 2
                                             and lexicon().zh_words.get(token.text) is None))  # 金陵速递服务有限公司


def _merge_proper_names(tokens: list[Token]) -> list[Token]:
    """An organisation's or a place's name that jieba cut into words is one token: 上海卓越营销集团 (not a person
    卓越), 青岛齐鲁银行支行, 广州金鼎律师事务所, 紫荆花园, 恒隆广场. An organisation needs a proper name among its
    words (设计公司, 一家银行 are common nouns); a place name is one word before a place-name suffix."""
    names = gazetteer()
    merged: list[Token] = []
    for token in tokens:
        kind = ("Organization" if token.text in names.organization_suffixes_zh
                else "Location" if token.text in names.place_name_suffixes_zh else None)
        if kind is None and token.flag != "nplace" and len(token.text) > 2 and token.text.endswith(names.place_name_suffixes_zh):
            token.flag, token.entity_type = "ns", "Location"  # 儿童公园 as one jieba word
        start = len(merged)
        if kind == "Organization":
            while (start > 0 and _organization_name_part(merged[start - 1])
                   and sum(len(part.text) for part in merged[start - 1 :]) <= _ORGANIZATION_NAME_CHARS):
                start -= 1
            parts = merged[start:]
            if (not any(part.flag in _PROPER_FLAGS or part.entity_type for part in parts)
                    or any(area in part.text for part in parts for area in _GENERIC_AREAS)
                    or (len(parts) == 1 and parts[0].flag == "ns" and token.text in _KINDS_OF_ORGANIZATION)):
                start = len(merged)  # 设计公司, 深圳地区银行, 广州公司: a kind of organisation, not one named
        elif kind == "Location" and merged:
            previous = merged[-1]
            if (len(previous.text) == 2 and previous.flag in _PLACE_NAME_PARTS and previous.entity_type in (None, "Location")
                    and previous.time_index is None):
                start -= 1
        if start < len(merged):
            parts = merged[start:]
            text = "".join(part.text for part in parts) + token.text
            merged[start:] = [Token(text, _ENTITY_TAGS[kind], parts[0].start, token.end, entity_type=kind)]
            continue
        merged.append(token)
    return merged


# Characters that end a name: jieba's HMM glues them to the name before them (李娜在, 小李在, 我要).
_FUNCTION_CHARACTERS = frozenset("的了在是和与跟给把被对说去来要会想也都就还很不没我你他她它们这那")


def _unknown_word(word: str, position: int, tagger) -> list[Token]:
    """A word jieba's HMM invented: keep a plausible name (surname first, function characters cut off),
    otherwise fall back to the dictionary's own pieces."""
    name_end = len(word)
    while name_end > 0 and word[name_end - 1] in _FUNCTION_CHARACTERS:
        name_end -= 1
    if name_end >= 2 and plausible_name(word[:name_end]):
        name = Token(word[:name_end], "nr", position, position + name_end, entity_type="Person")
        return [name, *_dictionary_pieces(word[name_end:], position + name_end, tagger)]
    return _dictionary_pieces(word, position, tagger)


def _dictionary_pieces(text: str, position: int, tagger) -> list[Token]:
    pieces = []
    for piece in tagger.tokenizer.cut(text, HMM=False):
        pieces.append(Token(piece, tagger.word_tag_tab.get(piece, "n"), position, position + len(piece)))
        position += len(piece)
    return pieces


def _non_han_flag(word: str) -> str:
    if word.isascii():
        if word.isdigit():
            return "m"
        return "eng" if any(character.isalpha() for character in word) else "x"
    return "x"


def _repair(token: Token, tagger) -> list[Token]:
    """Fix one jieba token: lexicon types, invented names, verb-noun compounds, 在家-style merges."""
    alias = aliases().exact.get(token.text)
    if alias is not None and not (len(token.text) == 1 and _has_han(token.text)):  # 美妆品's 美 is no country
        token.entity_type, token.canonical, token.aliases = alias.entity_type, alias.canonical, alias.aliases
        token.flag = _ENTITY_TAGS[alias.entity_type]
        return [token]
    if len(token.text) == 1 and token.flag in ("ns", "nr", "nt") and _has_han(token.text):
        token.flag = "n"  # 美妆品's 美, 新百伦's 伦: a character left over by the cut, no name
        return [token]
    if len(token.text) >= 3 and token.text[-1] == "人" and _place_word(token.text[:-1], tagger):
        # 沈阳人, 济南人: where someone is from, not a person's name
        place = Token(token.text[:-1], "ns", token.start, token.end - 1)
        return [place, Token("人", "n", token.end - 1, token.end)]
    if token.flag == "ns" and token.text not in gazetteer().locations and (
            len(token.text) == 2 and token.text[-1] not in _TOPONYM_FINALS
            or token.text in _NOT_PLACES or token.text[-1] in _NOT_TOPONYM_FINALS):
        token.flag = "n"
        return [token]
    if token.flag == "nt" and token.text.endswith("会"):
        token.flag = "n"  # 音乐会, 交易会: jieba's nt, an event's kind, no organisation
        return [token]
    if token.flag == "nrt" and tagger.tokenizer.FREQ.get(token.text, 0) >= _COMMON_TRANSLITERATION_FREQUENCY:
        token.flag = "n"  # 宜人 (236): jieba's transliterated names are rare words (凯奇 4, 乔丹 …)
        return [token]
    if token.flag.startswith("nr") and token.flag != "nrt":
        if not plausible_name(token.text) or tagger.tokenizer.FREQ.get(token.text, 0) >= _COMMON_WORD_FREQUENCY:
            return _resplit(token, tagger)
        token.entity_type = "Person"
        return [token]
    if token.text[0] == "在" and len(token.text) > 1 and token.text[1:] in gazetteer().place_nouns_zh:
        return [Token("在", "p", token.start, token.start + 1), Token(token.text[1:], "nplace", token.start + 1, token.end)]
    number = _NUMBER_MEASURE.match(token.text)
    if number and number.end() < len(token.text) and token.flag not in ("t",):
        split = token.start + number.end()
        return [Token(token.text[: number.end()], "m", token.start, split), *_repair(Token(token.text[number.end():], "n", split, token.end), tagger)]
    if len(token.text) >= 3 and token.flag in ("l", "i", "nz", "n", "v", "vn") and lexicon().zh_words.get(token.text) is None:
        return _split_compound(token, tagger) or [token]
    if (len(token.text) == 2 and token.flag == "v" and token.text[1] in _SINGLE_VERBS
            and lexicon().zh_words.get(token.text) is None and tagger.word_tag_tab.get(token.text[0], "").startswith("n")):
        middle = token.start + 1  # 猫叫 → 猫 + 叫
        return [Token(token.text[0], "n", token.start, middle), Token(token.text[1], "v", middle, token.end)]
    return [token]


def _place_word(text: str, tagger) -> bool:
    return text in gazetteer().locations or (tagger.word_tag_tab.get(text) == "ns" and text[-1] in _TOPONYM_FINALS)


# jieba's dictionary tags everyday words nr (安静 1199, 沙滩 993, 阳光 3451, 明白 10875, 顾客 1365); the names it
# knows are rarer (李娜 438, 周杰伦 89, 刘德华 37).
_COMMON_WORD_FREQUENCY = 600
_COMMON_TRANSLITERATION_FREQUENCY = 200
_NOT_PLACES = frozenset({"东西", "南北", "夕阳", "遮阳", "太阳", "人山人海"})  # jieba's ns: "things", "the setting sun"…
# jieba's ns ending like a measure or a quality (满意度), no place's name
_NOT_TOPONYM_FINALS = frozenset("度性率感力量")


def plausible_name(word: str) -> bool:
    """jieba tags many non-names nr (喝咖啡, 蓝屏, 过敏), in its dictionary and from its HMM: a Chinese name
    must start with a common surname (or 小/老/阿 + surname) and must not end in a verb."""
    if not 2 <= len(word) <= 4:
        return False
    if word.startswith(_COMPOUND_SURNAMES):
        return True
    if word[0] in "小老阿" and len(word) == 2:
        return word[1] in _SURNAMES
    return word[0] in _SURNAMES and len(word) <= 3 and not any(word.endswith(verb) for verb in _SINGLE_VERBS)


def _resplit(token: Token, tagger) -> list[Token]:
    pieces = []
    position = token.start
    for pair in tagger.cut(token.text, HMM=False):
        piece = Token(pair.word, "n" if pair.flag.startswith("nr") else pair.flag, position, position + len(pair.word))
        pieces.extend(_split_compound(piece, tagger) or [piece] if len(piece.text) >= 3 else [piece])
        position += len(pair.word)
    return pieces


def _split_compound(token: Token, tagger) -> list[Token] | None:
    """吃火锅/l → 吃 + 火锅, 云南旅游/nz → 云南 + 旅游: two dictionary words, one of them a verb."""
    frequencies = tagger.tokenizer.FREQ
    verbs = lexicon().zh_words
    for cut in range(1, len(token.text)):
        left, right = token.text[:cut], token.text[cut:]
        if not (frequencies.get(left) and frequencies.get(right)):
            continue
        left_verb = left in verbs or left in _SINGLE_VERBS
        right_verb = right in verbs
        if left_verb == right_verb:
            continue
        middle = token.start + cut
        left_flag = "v" if left_verb else tagger.word_tag_tab.get(left, "n")
        right_flag = "v" if right_verb else tagger.word_tag_tab.get(right, "n")
        return [Token(left, left_flag, token.start, middle), Token(right, right_flag, middle, token.end)]
    return None


def _merge_latin_entities(sentence: str, tokens: list[Token]) -> list[Token]:
    """Latin-script names inside Chinese text (Win11, iPhone 15, Windows 11, Wi-Fi) become one token."""
    spans = []
    for match in _LATIN_ENTITY.finditer(sentence):
        text = match.group().rstrip(".-'")
        if "@" in sentence[max(match.start() - 1, 0) : match.start() + len(text) + 1]:
            continue  # wangsiqi0117@jsld.com: a part of an e-mail address names no product
        entry = aliases().lookup(text) or aliases().lookup(text.split()[0])
        if entry is None and len(text) <= 3 and text.isalpha() and text.isupper():
            continue  # AI年终总结盛典, VR: an abbreviation, no product
        entity_type = entry.entity_type if entry else ("Product" if _DIGIT.search(text) or text[0].isupper() else None)
        if entity_type is None:
            continue
        canonical = entry.canonical if entry and normalize_surface(text) in {normalize_surface(a) for a in entry.aliases} else text
        spans.append((match.start(), match.start() + len(text), entity_type, canonical, entry.aliases if entry else ()))
    for start, end, entity_type, canonical, alias_forms in spans:
        tokens = _merge_span(tokens, start, end, Token(sentence[start:end], _ENTITY_TAGS[entity_type], start, end,
                                                       entity_type, canonical, alias_forms))
    return tokens


def normalize_surface(text: str) -> str:
    return _SPACE_OR_HYPHEN.sub("", text).casefold()


def _merge_times(tokens: list[Token], times: list[TimeExpr]) -> list[Token]:
    for index, expr in enumerate(times):
        tokens = _merge_span(tokens, expr.start, expr.end, Token(expr.expression, "t", expr.start, expr.end, time_index=index))
    return tokens


def _merge_span(tokens: list[Token], start: int, end: int, merged: Token) -> list[Token]:
    """Replace the tokens inside [start, end) by `merged`; tokens that straddle the edge are cut."""
    result = []
    inserted = False
    for token in tokens:
        if token.end <= start or token.start >= end:
            result.append(token)
            continue
        if token.start < start:
            result.append(Token(token.text[: start - token.start], token.flag, token.start, start))
        if not inserted:
            result.append(merged)
            inserted = True
        if token.end > end:
            result.append(Token(token.text[end - token.start :], token.flag, end, token.end))
    return result


# ---------------------------------------------------------------------------------------------------------
# noun phrases


def _entity_type_of(tokens: list[Token]) -> str | None:
    """The entity type of a noun phrase, or None for a common noun (手机, 公园, 农民): that stays a word of its
    fact, not an Entity node. Names are typed by their class; organisation and place names that jieba cuts into
    pieces were joined by the tokenizer (_merge_proper_names)."""
    head = tokens[-1]
    if head.entity_type:
        return head.entity_type
    text = "".join(token.text for token in tokens)
    if head.flag == "nper" or head.text in gazetteer().person_nouns_zh or text.endswith(_PERSON_SUFFIXES):
        return _person_type(text)
    return _NAME_FLAGS.get(head.flag)


# Before a person noun, these keep it a particular person (男同事, 前老板, 好朋友); a surname makes it a name
# (王老师, 李经理); any other word makes it an occupation (销售经理, 语文老师, 科室主任).
_PERSON_NOUN_MODIFIERS = frozenset("男女老小大前新好亲")
# Relations that are also jobs: after another word they name the job (销售经理, 语文老师, 健身教练).
_TITLE_NOUNS = frozenset({"经理", "老师", "主管", "总监", "师傅", "教练", "导师", "老板", "领导", "学生"})


def _person_type(text: str) -> str | None:
    """Person for a relative or someone named by a title (我表哥, 王老师); None for an occupation (厨师, 大学教授):
    what someone does is a value of their job, not a person of its own."""
    names = gazetteer()
    if text in names.occupation_nouns_zh:
        return None
    if text in names.person_nouns_zh:
        return "Person"
    suffix = next((noun for noun in (*names.person_nouns_zh, *_PERSON_SUFFIXES, *names.occupation_nouns_zh)
                   if text.endswith(noun) and len(noun) < len(text)), None)
    if suffix in names.person_nouns_zh and suffix not in names.occupation_nouns_zh and suffix not in _TITLE_NOUNS:
        return "Person"  # 大学同学, 前男友: a relation, whatever comes before it
    prefix = text[: len(text) - len(suffix)] if suffix else text
    if (prefix.startswith(_COMPOUND_SURNAMES) and len(prefix) == 2) or (len(prefix) == 1 and (
            prefix in _SURNAMES or prefix in _PERSON_NOUN_MODIFIERS)) or (len(prefix) == 2 and prefix[0] in "小老" and prefix[1] in _SURNAMES):
        return "Person"
    return None


_DEMONSTRATIVES = ("这个", "那个", "这位", "那位")


def _noun_phrase(tokens: list[Token], index: int, end: int, sink: list[Mention]):
    """The noun phrase starting at `index` (after determiners, numbers, adjectives and 的-modifiers).

    Returns (head mention or None, index after the phrase). N 的 N keeps the last noun run as the head
    ("周杰伦的演唱会" → 演唱会); named modifiers and appositions (朋友小李) go to `sink` as mentions of their own."""
    words = chinese_words()
    position = index
    modifiers: list[Mention] = []
    run: list[Token] = []
    while position < end:
        token = tokens[position]
        if token.flag in ("m", "q", "mq") or token.text in ("这", "那", "这个", "那个", "这些", "那些", "很多", "一些"):
            position += 1
            continue
        if (token.is_noun
                or (run and token.flag == "vn" and run[-1].flag not in ("ns", "nplace"))
                or (_after_de(tokens, position) and token.is_verb and token.text not in lexicon().zh_words)
                or (token.flag == "t" and token.time_index is None and position > 0 and tokens[position - 1].text == "的")):
            run.append(token)
            position += 1
            continue
        if token.text in ("的", "之") and position + 1 < end:
            if run:
                modifiers.extend(_named(run))
            run = []
            position += 1
            continue
        if (token.flag in ("a", "b", "ad", "an", "d", "r", "z", "f", "t") or token.is_verb) and not run and position + 1 < end and tokens[position + 1].text in ("的", "之"):
            position += 2  # 新的, 最新的, 我的, 生病的
            continue
        if token.flag == "r" and not run and position + 2 < end and tokens[position + 1].text == "家" and tokens[position + 2].is_noun:
            position += 2  # 我们家狗狗 → 狗狗
            continue
        if token.flag in ("a", "b") and not run and position + 1 < end and tokens[position + 1].is_noun:
            position += 1  # 新 笔记本
            continue
        if token.flag == "r" and token.text in words["pronouns"] and not run and position + 1 < end and (
                tokens[position + 1].is_noun or tokens[position + 1].text in _DEMONSTRATIVES):
            position += 1  # 我 女儿 → 女儿, 我那个下属 → 下属
            continue
        break
    sink.extend(modifiers)
    if not run:
        return None, position
    # A person noun before a name is an apposition (朋友小李): both are people, the name is the head.
    if len(run) >= 2 and run[-1].entity_type == "Person" and run[-2].flag == "nper":
        sink.append(_mention(run[:-1], "Person"))
        run = run[-1:]
    if position < end and tokens[position].text == "们":
        return _mention(run, None), position  # 孩子们, 同事们: people in general, no one entity
    return _mention(run, _entity_type_of(run)), position


def _after_de(tokens: list[Token], position: int) -> bool:
    return position > 0 and tokens[position - 1].text == "的" and position + 1 < len(tokens) and tokens[position + 1].flag in ("vn", "n")


def _named(run: list[Token]) -> list[Mention]:
    typed = ((token, _entity_type_of([token])) for token in run)
    return [_mention([token], entity_type) for token, entity_type in typed if entity_type is not None]


def _mention(run: list[Token], entity_type: str | None) -> Mention:
    text = "".join(token.text for token in run)
    head = run[-1]
    canonical = head.canonical if len(run) == 1 and head.canonical else text
    confidence = 0.9 if head.canonical else (0.8 if head.flag in _NAME_FLAGS else 0.7)
    return Mention(text, run[0].start, head.end, entity_type, canonical, head.aliases, confidence)


def _pronoun(token: Token) -> Mention:
    return Mention(token.text, token.start, token.end, None, token.text, pronoun=True, confidence=0.8)


# ---------------------------------------------------------------------------------------------------------
# clauses

# Roles of a noun phrase after a preposition; "_source" (从华为) is consumed but links nothing.
_PREPOSITION_ROLES = {"给": "RECIPIENT", "把": "PATIENT", "对": "PATIENT", "用": "INSTRUMENT", "被": "AGENT", "从": "_source"}
# 老板让我交报告: the person after a causative verb is the AGENT of the next verb.
_PIVOTS = frozenset({"让", "叫", "请", "要求", "逼", "派", "催", "劝"})
_COMITATIVES = frozenset({"和", "跟", "与", "同"})
_CLAUSE_KEEP = frozenset({"在", "给", "把", "被", "对", "和", "跟", "与", "同", "是", "有", "从", "用", "我", "你", "他", "她",
                          "它", "我们", "你们", "他们", "她们"})


@dataclass(slots=True)
class _Clause:
    subjects: list[Mention]
    mentions: list[Mention]
    pending: dict
    negation: bool = False
    modality: str | None = None
    passive: bool = False
    topic: Mention | None = None  # 周杰伦的新歌我听了: a fronted object
    complement_of: RawFact | None = None  # 喜欢/学 waiting for the verb phrase that gives its PATIENT


def analyze(sentence: str, times: list[TimeExpr], speaker: str | None = None) -> Analysis:
    """`speaker`, when known, owns the relatives the sentence names without another holder (我表哥, 舅妈)."""
    tokens = tokenize(sentence, times)
    facts: list[RawFact] = []
    subjects: list[Mention] = []
    mentions = [_mention([token], _entity_type_of([token])) for token in tokens
                if token.entity_type or token.flag in _NAME_FLAGS]
    carried_times: list[Token] = []
    for start, end in _clauses(tokens):
        state = _Clause(subjects=[], mentions=mentions, pending={})
        attribute = _attribute(sentence, tokens, start, end, mentions)
        if attribute is not None:
            if _has_holder(sentence, attribute, tokens[start].start):
                facts.append(attribute)
            continue
        clause_facts, clause_times = _clause(sentence, tokens, start, end, state)
        _assign_agents(clause_facts, state, subjects)
        subjects = state.subjects or subjects
        clause_times = carried_times + clause_times
        for fact in clause_facts:
            for time_token in clause_times:
                fact.add_role("TIME", Mention(time_token.text, time_token.start, time_token.end, None,
                                              time_index=time_token.time_index, confidence=0.9))
        carried_times = [] if clause_facts else clause_times
        facts.extend(fact for fact in clause_facts
                     if _has_holder(sentence, fact, tokens[start].start) and _has_content(fact)
                     and not _relative_copula(tokens[start:end]))
    if speaker:
        _own_relatives(sentence, mentions, facts, speaker)
    word_classes = [(token.text, _word_class(token)) for token in tokens]
    return Analysis(mentions, facts, word_classes)


def _own_relatives(sentence: str, mentions: list[Mention], facts: list[RawFact], speaker: str) -> None:
    """我表哥 is 用户的表哥, as the slot facts name him: one entity per relative of one speaker, not a 表哥 that every
    speaker's cousin would share. 王强的妻子 is 王强's, not the speaker's."""
    lexicon = slot_lexicon()
    for group in [mentions, *(fillers for fact in facts for fillers in fact.roles.values())]:
        for position, mention in enumerate(group):
            before = sentence[: mention.start]
            if (mention.entity_type == "Person" and lexicon.person_noun(mention.text, "zh")
                    and not sentence.startswith("们", mention.end)  # 孩子们: children, not the speaker's
                    and (not before.endswith("的") or before.endswith(_POSSESSIVES))):
                name = f"{speaker}的{mention.text}"
                group[position] = Mention(name, mention.start, mention.end, "Person", name, confidence=mention.confidence)


# Pronouns that can stand for a person holding a fact (它, 这, 那, 大家 cannot).
_PERSON_PRONOUNS = frozenset({"我", "你", "您", "他", "她", "我们", "你们", "他们", "她们", "咱们", "咱", "俺"})


_SELF_NOUNS = frozenset({"个人", "自己", "本人"})  # 我个人: the speaker, not something of theirs
_POSSESSIVES = ("我的", "我", "我家的", "我家", "我们的", "我们家的", "我们家", "我们", "咱家的")


def _has_holder(sentence: str, fact: RawFact, clause_start: int) -> bool:
    """A fact is about someone: its AGENTs are people (the speaker, a named person, a relative) or something the
    speaker owns (我的蓝牙打不开了). Product and place reviews ("米饭做出来特别好吃", "屏幕看起来也超清晰"),
    agentless fragments and a place joined to a person as agents ("感受到了大自然的宁静和美") state no one's
    event."""
    # 我的车被刮了: what happened to the speaker's car holds it as agentless passive
    agents = fact.roles.get("AGENT") or (fact.roles.get("PATIENT", ()) if fact.passive else ())
    return bool(agents) and all(
        agent.entity_type == "Person" or (agent.pronoun and agent.text in _PERSON_PRONOUNS)
        or (sentence[: agent.start].endswith(_POSSESSIVES) and agent.text not in _SELF_NOUNS
            and agent.start >= clause_start)  # 我们家狗狗生病了，带它去了医院: the dog took no one
        for agent in agents)


_DIRECTIONAL_COMPLEMENTS = frozenset({"起来", "下来", "上来", "出来", "过来", "下去", "上去"})
_OPINION_VERBS = frozenset({"认为", "觉得", "感觉", "以为", "感到"})


def _has_content(fact: RawFact) -> bool:
    """我超喜欢…'s 超, 变紧致了's 致, 要是能…'s 能: one character the lexicon does not know, with no argument but its
    holder, names no event."""
    if fact.raw in _DIRECTIONAL_COMPLEMENTS or fact.raw in _OPINION_VERBS:
        return False  # 心情都好起来: the end of another verb; 我认为iPhone14真心好用: an opinion, no event
    return fact.from_lexicon or len(fact.raw) > 1 or any(role not in ("AGENT", "TIME") for role in fact.roles)


def _relative_copula(clause: list[Token]) -> bool:
    """我参观的是一家口腔医院, 我刚才经过的那个公园是中心公园, 我平时用的美妆品是…: 是 after a 的-phrase that is
    no possessive identifies what the phrase names (a visit, a taste, a thing used); the clause says what that
    thing is, not what the relative clause's subject did, so be(用户) or watch(用户) would be wrong. A possessive
    的 (王强的妻子是护士, 我的…) keeps its facts."""
    relative = False
    for previous, token in zip(clause, clause[1:]):
        if token.text == "的" and not (previous.is_noun or previous.flag == "r"):
            relative = True
        elif token.text == "是" and relative:
            return True
    return False


_ATTRIBUTE = re.compile(r"^(?P<owner>[^，,。！？]{2,24}?)的(?P<attribute>[^的，,。！？]{1,6}?)(?:是|为)(?P<value>[^。！？]+?)[。！？!?]*$")


def _attribute(sentence: str, tokens: list[Token], start: int, end: int, mentions: list[Mention]) -> RawFact | None:
    """"X的Y是Z" states an attribute of X (模型艺术盛宴的地点是北京): has_Y with X as AGENT and Z as PATIENT.
    X is named as written, however jieba cut it, so that every attribute of one event links to one entity."""
    first, last = tokens[start].start, tokens[end - 1].end
    match = _ATTRIBUTE.match(sentence, first, last)
    if (match is None or match["owner"][0] in "我你他她它" or match["owner"] in chinese_words()["pronouns"]
            or match["attribute"] in gazetteer().person_nouns_zh):
        return None  # 我的生日是…, 王强的妻子是护士: a person's relation is an ordinary clause
    owner_text, value_text = match["owner"], match["value"]
    named_owner = next((mention for mention in mentions
                        if (mention.start, mention.end) == (match.start("owner"), match.end("owner"))), None)
    if named_owner is not None:
        owner = named_owner  # 郭志强的生日: the person the analyser named, one entity with one type
    else:
        if slot_lexicon().named_by(match["attribute"], "zh") is not None:
            # the words of an event's name (沿湖游徒乐趣多's 游徒, 医疗创新高峰会's 高峰会) name nothing of their own
            mentions[:] = [mention for mention in mentions
                           if not (match.start("owner") <= mention.start and mention.end <= match.end("owner"))]
        owner_type = _person_type(owner_text) if owner_text in gazetteer().person_nouns_zh else "Other"
        owner = Mention(owner_text, match.start("owner"), match.end("owner"), owner_type, confidence=0.75)
    named = [mention for mention in mentions if match.start("value") <= mention.start and mention.end <= match.end("value")]
    if len(named) == 1 and (named[0].start, named[0].end) == (match.start("value"), match.end("value")):
        value = named[0]
    else:
        # a quantity or a description (六千人, 展示精选模型作品…) is a value, not an entity
        value = Mention(value_text, match.start("value"), match.end("value"), None, confidence=0.6)
    fact = RawFact(f"has_{match['attribute']}", sentence[match.end("owner") : match.start("value")],
                   match.end("owner"), match.start("value"))
    fact.add_role("AGENT", owner)
    fact.add_role("PATIENT", value)
    return fact


def _assign_agents(facts: list[RawFact], state: _Clause, inherited: list[Mention]) -> None:
    """The clause's subject is the AGENT of its facts; a clause without one continues the previous subject."""
    subjects = state.subjects or inherited
    for fact in facts:
        if "AGENT" in fact.roles:
            continue
        if state.passive:
            fact.passive = True
            for subject in state.subjects:
                fact.add_role("PATIENT", subject)
            continue
        for subject in subjects:
            fact.add_role("AGENT", subject)
        if state.topic is not None and "PATIENT" not in fact.roles:
            fact.add_role("PATIENT", state.topic)


def _word_class(token: Token) -> str:
    if token.time_index is not None:
        return "time"
    if token.entity_type or token.flag in _NAME_FLAGS or token.flag in ("nper", "nplace"):
        return "name"
    if token.is_noun:
        return "noun"
    if token.is_verb:
        return "verb"
    return "other"


def _clauses(tokens: list[Token]):
    start = 0
    for index, token in enumerate(tokens):
        if token.text in _CLAUSE_BREAKS:
            if index > start:
                yield start, index
            start = index + 1
    if start < len(tokens):
        yield start, len(tokens)


def _clause(sentence: str, tokens: list[Token], start: int, end: int, state: _Clause):
    """The facts of one clause and its time tokens; fills `state` (subjects, mentions)."""
    words = chinese_words()
    table = lexicon()
    clause_text = sentence[: tokens[end - 1].end]
    boundaries = {token.end for token in tokens[start:end]}
    facts: list[RawFact] = []
    times: list[Token] = []
    index = start
    while index < end:
        token = tokens[index]
        text = token.text
        if token.time_index is not None:
            times.append(token)
            index += 1
            continue
        if token.flag == "t" or (text in words["stop_words"] and text not in _CLAUSE_KEEP
                                 and text not in words["negations"] and text not in words["modals"]):
            index += 1
            continue
        if text in words["negations"] or (text.startswith(("从来不", "从不", "从没")) and token.flag in ("d", "df")):
            state.negation = True
            state.modality = words["modals"].get(text, state.modality)
            index += 1
            continue
        if text.startswith(("不", "没")) and len(text) == 2 and (text[1:] in table.zh_words or text[1] in _SINGLE_VERBS):
            state.negation = True  # 不吃, 没去 as one token
            tokens[index] = token = Token(text[1:], "v", token.start + 1, token.end)
            text = token.text
        if text in words["modals"] and _verb_follows(tokens, index + 1, end):
            state.modality = words["modals"][text]
            state.negation = state.negation or text in ("不能", "无法", "没法", "不会")
            index += 1
            continue
        if text in _TRANSPARENT and _verb_follows(tokens, index + 1, end):
            index += 1
            continue
        if text in ("在", "于") and token.flag in ("p", "v") and not facts and index + 1 < end and not tokens[index + 1].is_verb:
            mention, index = _noun_phrase(tokens, index + 1, end, state.mentions)
            index = _skip_localizer(tokens, index, end)
            if mention:
                state.pending.setdefault("LOCATION", []).append(mention)
                state.pending.setdefault("_preposition", []).append("在")
            continue
        if (text in _PREPOSITION_ROLES or text in _COMITATIVES) and token.flag in ("p", "c", "v") and index + 1 < end:
            index = _preposition(tokens, index, end, state, facts)
            continue
        if text in _EVENT_VERBS and index + 1 < end:
            facts.append(_attend(sentence, tokens, index, end, state))
            break
        if _modifier_verb(tokens, index, end):
            index += 2
            continue
        if text in ("让", "令", "使") and index + 1 < end and tokens[index + 1].text.startswith("人"):
            break  # 真是让人心情都好起来: what it does to anyone, no one's event
        if text in _PIVOTS and index + 2 < end and _pivot(tokens, index, end, state, facts):
            index += 2
            continue
        verb_position = _verb_position(tokens, index, end)
        match = table.chinese_at(clause_text, token.start, boundaries) if verb_position else None
        if match is not None or (token.is_verb and verb_position):
            fact, index = _verb(sentence, tokens, index, end, match, state)
            if fact is not None:
                facts.append(fact)
            continue
        if not facts and (token.is_noun or token.flag == "r"):
            index = _subject(tokens, index, end, state)
            continue
        index += 1
    return facts, times


# Verbs whose object is an event's name: the rest of the clause, however jieba cut it (烹饪乐聚团建盛宴).
_EVENT_VERBS = frozenset({"参加", "参与", "出席"})
_EVENT_NAME_CHARS = 24


def _attend(sentence: str, tokens: list[Token], index: int, end: int, state: _Clause) -> RawFact:
    """我将要参加(的)海畔烧烤节: one attend fact whose PATIENT is the whole event name, never a verb cut out of it
    ("烧烤" → future 烧烤)."""
    token = tokens[index]
    fact = RawFact("attend", token.text, token.start, token.end, state.negation, state.modality, True)
    first = index + 1
    while first < end and tokens[first].text in ("了", "过", "的", "这个", "那个", "一个", "一场", "一次"):
        first += 1
    if first < end:
        name = sentence[tokens[first].start : tokens[end - 1].end]
        name_start, name_end = tokens[first].start, tokens[end - 1].end
        if len(name) <= _EVENT_NAME_CHARS:
            fact.add_role("PATIENT", Mention(name, name_start, name_end, "Other", confidence=0.75))
            # the words of the name (广州新兴产业峰会's 新兴产业) name nothing of their own
            state.mentions[:] = [mention for mention in state.mentions
                                 if not (name_start <= mention.start and mention.end <= name_end)]
    for role, mentions in state.pending.items():
        for mention in mentions if not role.startswith("_") else ():
            fact.add_role(role, mention)
    return fact


def _subject(tokens: list[Token], index: int, end: int, state: _Clause) -> int:
    token = tokens[index]
    following = tokens[index + 1] if index + 1 < end else None
    if token.flag == "r" and token.text in chinese_words()["pronouns"] and not (
        following is not None and (following.is_noun or following.text in ("的", "家", *_DEMONSTRATIVES))
    ):
        mention, after = _pronoun(token), index + 1
    else:
        mention, after = _noun_phrase(tokens, index, end, state.mentions)
        if mention is None:
            return index + 1
    if (mention.pronoun and mention.text in ("他", "她") and state.subjects and state.subjects[-1].entity_type == "Person"
            and state.subjects[-1].end == token.start):
        return after  # 我表哥他在杭州上班: 他 repeats the subject just named
    if state.subjects and state.topic is None and (mention.pronoun or mention.entity_type == "Person"):
        # 周杰伦的新歌我听了: the first noun phrase was a fronted object, the second is the subject.
        state.topic = state.subjects.pop()
    state.subjects.append(mention)
    return after


def _preposition(tokens: list[Token], index: int, end: int, state: _Clause, facts: list[RawFact]) -> int:
    """给/把/对/用/被 + noun phrase before the verb, and 和/跟 joining a second subject (我和妈妈)."""
    text = tokens[index].text
    role = _PREPOSITION_ROLES.get(text)
    if role is None and not state.subjects:
        return index + 1
    nested = tokens[index + 1]
    if nested.flag == "r" and nested.text in chinese_words()["pronouns"]:
        mention, after = _pronoun(nested), index + 2
    else:
        mention, after = _noun_phrase(tokens, index + 1, end, state.mentions)
    if text == "被":
        state.passive = True  # 车被刮了: the subject is what the event happened to
    if mention is None:
        return max(after, index + 1)
    if role is None:
        state.subjects.append(mention)
    else:
        state.pending.setdefault(role, []).append(mention)
        if role.startswith("_"):
            state.pending.setdefault("_preposition", []).append(text)
    return after


def _pivot(tokens: list[Token], index: int, end: int, state: _Clause, facts: list[RawFact]) -> bool:
    """让/请 + person + verb: a fact for the causative verb, and the person becomes the clause's subject."""
    person = tokens[index + 1]
    if not (person.flag == "r" or _entity_type_of([person]) == "Person") or not _verb_follows(tokens, index + 2, end):
        return False
    token = tokens[index]
    fact = RawFact(token.text, token.text, token.start, token.end, state.negation, state.modality)
    for subject in state.subjects:
        fact.add_role("AGENT", subject)
    facts.append(fact)
    state.subjects = [_pronoun(person) if person.flag == "r" else _mention([person], "Person")]
    return True


def _verb_follows(tokens: list[Token], index: int, end: int) -> bool:
    words = chinese_words()
    while index < end and (tokens[index].flag in ("d", "t") or tokens[index].time_index is not None
                           or tokens[index].text in words["negations"] or tokens[index].text.startswith("每")):
        index += 1
    if index >= end:
        return False
    token = tokens[index]
    return token.is_verb or token.text in lexicon().zh_words or token.text in ("在", "去", "给", "用", "把")


def _verb_position(tokens: list[Token], index: int, end: int) -> bool:
    token = tokens[index]
    if index > 0 and tokens[index - 1].text in ("的", "之") and index + 1 < end and tokens[index + 1].text in ("是", "为"):
        return False  # 我最喜欢的运动是…: after 的 and before 是, a lexicon verb names a thing
    if token.entity_type or token.flag in ("nr", "ns", "nt", "nprod", "nper", "nplace", "m", "q", "r", "p", "c", "u", "uj", "ul", "x"):
        return False
    if len(token.text) == 1 and not token.is_verb:
        return token.text in _SINGLE_VERBS and not (index + 1 < end and tokens[index + 1].text == "的")
    return True


def _modifier_verb(tokens: list[Token], index: int, end: int) -> bool:
    """A verb directly before 的 modifies a noun (生病的妈妈, 好吃的餐厅): not an event of its own. A clause-final 的
    modifies nothing (挺喜欢旅游的)."""
    return tokens[index].is_verb and index + 2 < end and tokens[index + 1].text == "的"


def _skip_localizer(tokens: list[Token], index: int, end: int) -> int:
    while index < end and (tokens[index].text in chinese_words()["localizers"] or tokens[index].text == "边"):
        index += 1
    return index


def _verb(sentence: str, tokens: list[Token], index: int, end: int, match, state: _Clause):
    """The fact of the verb at `index`, or None when the verb only introduces another one;
    returns it with the index after the verb phrase."""
    words = chinese_words()
    token = tokens[index]
    verb_end = match.end if match is not None else token.end
    raw = sentence[token.start : verb_end]
    predicate, role, from_lexicon = (match.entry.predicate, match.entry.role, True) if match else (None, "PATIENT", False)
    object_role = role if from_lexicon else ("LOCATION" if raw in words["motion_verbs"] else "PATIENT")
    for preposition, entry in lexicon().zh_frames.get(raw, ()):
        if preposition in state.pending.get("_preposition", ()):
            # 在腾讯工作 → work_at, 从复旦毕业 → graduate_from: the frame's role is the prepositional phrase's;
            # the verb's own object stays PATIENT.
            predicate, from_lexicon, object_role = entry.predicate, True, "PATIENT"
            for mention in state.pending.get("_source", ()) if preposition == "从" else ():
                state.pending.setdefault(entry.role, []).append(mention)
    after = index
    while after < end and tokens[after].start < verb_end:
        after += 1
    fact = RawFact(predicate or raw, raw, token.start, verb_end, state.negation, state.modality, from_lexicon)
    if match is not None and match.object_start is not None:
        object_text = sentence[match.object_start : match.object_end]
        fact.add_role(role, Mention(object_text, match.object_start, match.object_end,
                                    _object_type(object_text), confidence=0.8))
    if state.complement_of is not None:
        # 喜欢吃香菜, 学做蛋糕: the complement verb lends its object to the verb of liking and makes no fact.
        owner = state.complement_of
        object_mention, after = _object(tokens, after, end, object_role, state.mentions)
        if object_mention is not None:
            owner.add_role("LOCATION" if object_role == "LOCATION" else "PATIENT", object_mention)
        elif (match is not None and match.object_start is None or token.is_verb) and not fact.roles:
            owner.add_role("PATIENT", Mention(raw, token.start, verb_end, None, confidence=0.6))
        for role_name, fillers in fact.roles.items():
            for filler in fillers:
                owner.add_role(role_name, filler)
        return None, _trailing_location(tokens, after, end, owner, state.mentions)
    for pending_role, mentions in state.pending.items():
        if not pending_role.startswith("_"):
            for mention in mentions:
                fact.add_role(pending_role, mention)
    while after < end and tokens[after].text in words["aspect_particles"]:
        after += 1
    if predicate in _COMPLEMENT_TAKERS and _verb_follows(tokens, after, end):
        state.complement_of = fact
        return fact, after
    if raw.endswith("给") or (after < end and tokens[after].text == "给"):
        object_role = "RECIPIENT"  # 卖给同事, 送给了妹妹: the person after V给 receives
        after += 0 if raw.endswith("给") else 1
    object_mention, after = _object(tokens, after, end, object_role, state.mentions)
    if object_mention is not None and raw in ("是", "做", "当", "担任") and _names_a_job(object_mention):
        object_mention = Mention(object_mention.text, object_mention.start, object_mention.end, None,
                                 confidence=object_mention.confidence)  # 是硬件部的经理: a job, no person of its own
    if (object_mention is not None and raw in ("做", "当", "担任") and _names_a_job(object_mention)
            and state.pending.get("LOCATION")):
        # 在华为做工程师: working somewhere in a role is work_at, the role is not a thing acted on.
        fact.predicate, fact.from_lexicon = "work_at", True
        object_mention = None
    if object_mention is not None:
        fact.add_role(object_role, object_mention)
        if predicate is None:
            fact.predicate = fallback_predicate(raw, None if object_mention.pronoun else object_mention.text)
    after = _trailing_location(tokens, after, end, fact, state.mentions)
    # 去上海看演唱会 keeps both; 去参加婚礼: a motion verb with no place only introduces the next verb.
    if object_mention is None and raw in words["motion_verbs"] and _verb_follows(tokens, after, end):
        return None, after
    _carry_location(state, fact)
    return fact, after


def _names_a_job(mention: Mention) -> bool:
    """经理, 销售经理, 护士 after 是/当: what someone works as, not a name (王经理 keeps its surname's type)."""
    names = gazetteer()
    person_noun = mention.text.endswith((*names.person_nouns_zh, *names.occupation_nouns_zh, *_PERSON_SUFFIXES))
    return not mention.pronoun and person_noun and (
        _person_type(mention.text) is None or mention.text.endswith(tuple(_TITLE_NOUNS)) and mention.text[0] not in _SURNAMES)


def _carry_location(state: _Clause, fact: RawFact) -> None:
    """A place reached by one verb is where the next verb of the clause happens (去健身房跑步)."""
    if fact.roles.get("LOCATION"):
        state.pending["LOCATION"] = list(fact.roles["LOCATION"])
    for role in ("PATIENT", "RECIPIENT", "INSTRUMENT", "AGENT"):
        state.pending.pop(role, None)


def _object_type(text: str) -> str | None:
    """The type of an object the verb lexicon matched as written (搬到深圳): a name's, or None for a common
    noun."""
    alias = aliases().exact.get(text)
    if alias:
        return alias.entity_type
    if text in gazetteer().person_nouns_zh or text in gazetteer().occupation_nouns_zh:
        return _person_type(text)
    if normalize_text(text) in gazetteer().locations:
        return "Location"
    return _NAME_FLAGS.get(_pos_tokenizer().word_tag_tab.get(text, ""))


def _object(tokens: list[Token], index: int, end: int, role: str, sink: list[Mention]):
    words = chinese_words()
    while index < end and tokens[index].text in words["aspect_particles"]:
        index += 1
    if index >= end:
        return None, index
    token = tokens[index]
    if token.flag == "r" and token.text in words["pronouns"] and not (
        index + 1 < end and (tokens[index + 1].is_noun or tokens[index + 1].text == "的")
    ):
        return _pronoun(token), index + 1
    mention, after = _noun_phrase(tokens, index, end, sink)
    if mention is not None and role == "LOCATION":
        after = _skip_localizer(tokens, after, end)
    return mention, after


def _trailing_location(tokens: list[Token], index: int, end: int, fact: RawFact, sink: list[Mention]) -> int:
    """丢在出租车上, 出生在上海: 在 + place after the verb or its object."""
    while index < end and tokens[index].text in chinese_words()["aspect_particles"]:
        index += 1
    if index + 1 < end and tokens[index].text in ("在", "于", "到") and not tokens[index + 1].is_verb:
        mention, after = _noun_phrase(tokens, index + 1, end, sink)
        if mention is not None:
            # 感受到孩子们的快乐, 送到妈妈手里: a person reached is no place
            person = mention.entity_type == "Person" or mention.text in gazetteer().person_nouns_zh
            fact.add_role("PATIENT" if person else "LOCATION", mention)
            return _skip_localizer(tokens, after, end)
    return index
