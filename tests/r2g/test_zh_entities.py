"""Issue 18, Chinese entities: names, not common nouns. Occupations, bare place and organisation nouns and things
stay words of their fact; organisation and place names that jieba cuts are one entity; a name is one entity with one
type. Sentences from MemDaily's tune split."""

from memctl.r2g.extract import analyze_turn, extract


def _entities(sentence):
    return [(entity.name, entity.type) for entity in extract(sentence, "zh", speaker="用户").entities]


def _facts(sentence):
    return [(fact.predicate, {role: [filler.text for filler in fillers] for role, fillers in fact.roles.items()})
            for fact in extract(sentence, "zh", speaker="用户").facts]


def test_occupations_and_common_nouns_are_words_of_the_fact_not_entities():
    assert _entities("我舅妈是大学教授。") == [("用户的舅妈", "Person")]
    assert _entities("我上司是硬件部的经理。") == [("用户的上司", "Person")]
    assert _entities("我的下属在银行工作，是个柜员。") == [("用户的下属", "Person")]
    assert _entities("我舅舅是做销售的，现在是销售经理。") == [("用户的舅舅", "Person")]
    assert _entities("我去公园跑步") == [("我", "Person")]
    assert _entities("我找了一个律师") == [("我", "Person")]  # 律师 is a person noun of the lexicon, but a job
    assert _facts("我去公园跑步") == [("go_to", {"LOCATION": ["公园"], "AGENT": ["我"]}),
                                      ("run", {"LOCATION": ["公园"], "AGENT": ["我"]})]
    slot = extract("我舅妈是大学教授。", "zh", speaker="用户").slots[0]
    assert (slot.slot, slot.value, slot.value_mention) == ("job_title", "大学教授", None)


def test_people_named_by_a_relation_or_a_title_stay_people():
    assert ("高中同学", "Person") in _entities("王芳是我的高中同学")
    assert _entities("王老师下周一给我们上课。")[0] == ("王老师", "Person")


def test_organisation_names_are_kept_whole():
    assert _entities("我下属的单位是青岛齐鲁银行支行。") == [("用户的下属", "Person"), ("青岛齐鲁银行支行", "Organization")]
    assert _entities("我上司的单位叫广州金鼎律师事务所。")[1] == ("广州金鼎律师事务所", "Organization")
    assert ("上海卓越营销集团", "Organization") in _entities("我在上海卓越营销集团上班")
    assert _entities("我表妹的单位是上海浦东新区第一中学。")[1] == ("上海浦东新区第一中学", "Organization")
    assert _entities("我表姐的单位叫江苏金陵速递服务有限公司。")[1] == ("江苏金陵速递服务有限公司", "Organization")
    # a kind of organisation is no name
    assert _entities("我叔叔在设计公司里头当总监呢。") == [("用户的叔叔", "Person")]
    assert _entities("深圳地区银行柜员主管") == [("深圳", "Location")]
    assert _entities("上海首席记者参加公司团建") == [("上海", "Location")]
    assert _entities("团队凝聚力拓展之旅的主要内容是参加广州公司团建") == [("团队凝聚力拓展之旅", "Other"), ("广州", "Location")]
    assert _entities("上海地区物流公司现场招聘") == [("上海地区", "Location")]
    assert _entities("我妈就喜欢听音乐会。") == [("用户的妈", "Person")]  # jieba's 音乐会/nt
    assert _entities("提升旅客满意度") == []  # jieba's 满意度/ns
    assert _entities("每次经过都是人山人海的") == []  # jieba's 人山人海/ns
    assert _entities("我逛街的时候经过的那个商场是万象城。") == [("万象城", "Location")]  # not a person 万象城


def test_place_names_are_kept_whole_and_brands_are_organisations():
    assert _entities("紫荆花园的环境真不错") == [("紫荆花园", "Location")]
    assert _entities("儿童公园真心是个充满活力和乐趣的地方") == [("儿童公园", "Location")]
    assert _entities("我穿的运动鞋是斯凯奇GoWalk5。") == [("斯凯奇", "Organization"), ("GoWalk5", "Product")]
    assert _entities("我超喜欢欧莱雅的那个奇焕润发精油。") == [("我", "Person"), ("欧莱雅", "Organization")]


def test_a_name_is_one_person_entity():
    assert _entities("郭志强的生日是在12月19日。") == [("郭志强", "Person")]
    assert _entities("孙悦婷的生日是在1月14日。") == [("孙悦婷", "Person")]
    assert _entities("刘子墨是我的下属，其教育背景是专科。")[0] == ("刘子墨", "Person")
    assert _entities("我同事是沈阳人。") == [("用户的同事", "Person"), ("沈阳", "Location")]
    assert _entities("感觉社区氛围特别温馨") == []  # jieba's 温馨/nr after a degree adverb
    assert _entities("医疗创新高峰会的持续时间是九个周。") == [("医疗创新高峰会", "Other")]  # no 高峰会 person
    assert _entities("我的下属是本科学历。") == [("用户的下属", "Person")]


def test_facts_keep_a_likings_object_and_drop_content_free_characters():
    assert _facts("我上司挺喜欢旅游的。") == [("like", {"AGENT": ["用户的上司"], "PATIENT": ["旅游"]})]
    assert _facts("我那个下属特别喜欢下棋。") == [("like", {"AGENT": ["用户的下属"], "PATIENT": ["下棋"]})]
    assert "超" not in [predicate for predicate, _ in _facts("我超喜欢欧莱雅的那个奇焕润发精油。")]
    assert "起来" not in [predicate for predicate, _ in _facts("我每天经过那，都好起来了。")]  # 好起来's 起来: no event
    assert _facts("我昨天回来了") == [("回来", {"AGENT": ["我"], "TIME": ["昨天"]})]
    assert _facts("我认为苹果的iPhone14真心好用") == []  # an opinion
    assert _facts("我每天经过那，真是让人心情都好起来。") == []  # what it does to anyone
    slot = extract("我的一个下属的生日是7月12日。", "zh", speaker="用户").slots[0]
    assert (slot.holder.canonical, slot.slot) == ("用户的下属", "birthday")


def test_a_habit_pointing_to_a_place_names_the_place_of_the_turn():
    turn = analyze_turn("荔枝公园真心不错，闹中取静的一个好地方。每天下班后去那里散步，感觉一天的疲劳都消失了。",
                        lang="zh", speaker="用户")
    assert [hit.object for _, extraction in turn.sentences for hit in extraction.preferences] == ["下班后去荔枝公园散步"]
    alone = extract("每天下班后去那里散步，感觉一天的疲劳都消失了。", "zh", speaker="用户")
    assert [hit.object for hit in alone.preferences] == ["下班后去那里散步"]  # the shared extraction is unchanged
