"""Question phrasing: the words of a question that say how it is asked, not what it asks about.

Recall searches memories with a question's words. A memory states things ("I adopted a corgi in May"); the
question adds words a memory seldom holds and that match the wrong turns when it does: which kind of answer is
wanted, whether it is a yes/no question, how sure the asker is, that something was said. Each class below is
defined by what its words do in a question, in any conversation, not by a benchmark's templates; a word that
is as often the content of a memory ("times" as in Times Square, "May" the month, 通常, 一般) is left out. Many of these are already the index tokenizer's stop words (engine/text/data): they are
listed anyway, so that the list says on its own what question phrasing is.

English words are matched as whole words by surface form, case-insensitively, before stemming ("likely" goes,
"like" stays). Chinese words are matched as substrings, so only words of two or more characters are listed:
a single character (几, 哪, 吗, 呢) is part of too many other words (几乎, 哪怕), and recall already drops
single-character Chinese terms when a query has longer ones (memctl.recall.query.QueryTokenizer).
"""

from __future__ import annotations

# Interrogatives: they name the kind of answer wanted (a time, a place, a person), which the memory states as
# content ("in May", "at the beach"), never as the interrogative.
INTERROGATIVES = ("what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether")
INTERROGATIVES_ZH = ("什么", "哪里", "哪儿", "哪个", "哪些", "哪天", "哪年", "哪月", "多少", "多久", "多长", "怎么样",
                     "怎么", "怎样", "如何", "为什么", "为何", "何时", "几时")

# Auxiliaries and modals that open or carry a question ("Did Ann…", "Would Ben…"): grammar of the question.
# "may" is left out: it is also the month.
AUXILIARIES = ("do", "does", "did", "is", "are", "was", "were", "am", "be", "been", "has", "have", "had", "can",
               "could", "would", "will", "shall", "should", "might", "must")

# Yes/no frames of Chinese questions ("是否去过", "有没有说过"): the question's form, not its topic.
YES_NO_ZH = ("是否", "是不是", "有没有", "能不能", "会不会", "可不可以", "要不要")

# Hedges: how sure the asker is or how the answer is framed ("likely", "kind of", "would be considered").
HEDGES = ("likely", "probably", "possibly", "perhaps", "maybe", "ever", "consider", "considered", "kind", "kinds",
          "sort", "sorts", "type", "types")
HEDGES_ZH = ("大概", "大约", "可能")

# Quantity and frequency asks ("how many", "how much", "how often"): the memory holds the number, not the ask.
QUANTITY = ("many", "much", "often")

# Reference to the conversation itself ("what did Ann mention", "according to Ben", 提到): every memory was
# said; the words that say so only match turns that happen to quote someone.
CONVERSATION = ("mention", "mentions", "mentioned", "say", "says", "said", "tell", "tells", "told", "describe",
                "describes", "described", "according")
CONVERSATION_ZH = ("提到", "提过", "提起", "说过", "讲过", "聊过")

# Placeholders standing for the answer ("what things", "something he did").
PLACEHOLDERS = ("thing", "things", "something", "anything")

ENGLISH = frozenset(INTERROGATIVES + AUXILIARIES + HEDGES + QUANTITY + CONVERSATION + PLACEHOLDERS)
# Longest first: a pattern of alternatives takes the first that matches ("怎么样" before "怎么").
CHINESE = tuple(sorted(INTERROGATIVES_ZH + YES_NO_ZH + HEDGES_ZH + CONVERSATION_ZH, key=len, reverse=True))
