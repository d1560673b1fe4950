"""Issue 18, Chinese: facts need a person holder, event names stay whole, a relative clause before 是 is no copula
fact, a resumptive 他 is not a second subject, 我喜欢的X是Y is a taste. Sentences from MemDaily's tune split."""

from memctl.r2g.extract import extract


def _facts(sentence):
    return [(fact.predicate, {role: [filler.text for filler in fillers] for role, fillers in fact.roles.items()})
            for fact in extract(sentence, "zh", speaker="用户").facts]


def test_reviews_of_things_give_no_fact_without_a_person_holder():
    assert _facts("美的电饭煲真好用，米饭做出来特别好吃，功能也全。") == []
    assert _facts("就是价格有点小贵，但算下来还是划算的！") == []
    assert _facts("就是嘛，如果再智能化一点，增加点操作选项，那就太完美了！") == []


def test_a_thing_the_speaker_owns_or_a_relative_still_holds_a_fact():
    assert _facts("我的蓝牙打不开了。") == [("fail_to_open", {"AGENT": ["蓝牙"]})]
    assert _facts("我表哥他去了北京。") == [("go_to", {"AGENT": ["用户的表哥"], "LOCATION": ["北京"]})]


def test_a_relative_of_the_speaker_is_named_as_the_slot_facts_name_them():
    """用户的舅妈: one entity per relative of one speaker, the one her slot facts hold; 王强的妻子 is not the speaker's."""
    result = extract("舅妈在广州上班。", "zh", speaker="用户")
    assert [(entity.name, entity.type) for entity in result.entities if entity.type == "Person"] == [("用户的舅妈", "Person")]
    assert _facts("王强的妻子是一名护士。") == [("be", {"AGENT": ["妻子"], "PATIENT": ["护士"]})]


def test_what_another_person_likes_is_their_slot_fact():
    likes = [(slot.subject, slot.slot, slot.value) for slot in extract("我同事特喜欢骑自行车出去玩。", "zh", speaker="用户").slots]
    assert likes == [("用户的同事", "likes", "骑自行车出去玩")]
    hobby = [(slot.subject, slot.slot, slot.value) for slot in extract("刘志宏特别爱好美食烹饪。", "zh", speaker="用户").slots]
    assert hobby == [("刘志宏", "hobby", "美食烹饪")]
    assert extract("我喜欢吃火锅。", "zh", speaker="用户").slots == []  # the speaker's own: a preference


def test_attending_an_event_keeps_the_whole_event_name():
    [(predicate, roles)] = _facts("我上周参加了烹饪乐聚团建盛宴。")
    assert (predicate, roles["PATIENT"], roles["AGENT"]) == ("attend", ["烹饪乐聚团建盛宴"], ["我"])
    [(predicate, roles)] = _facts("我将要参加的瓦工技艺创新分享会，它的规模是六百人。")
    assert (predicate, roles["PATIENT"]) == ("attend", ["瓦工技艺创新分享会"])
    [fact] = extract("我下周要去参加海畔烧烤节。", "zh", speaker="用户").facts
    assert (fact.modality, fact.roles["PATIENT"][0].text) == ("intention", "海畔烧烤节")


def test_is_after_a_verbs_relative_clause_gives_no_copula_fact():
    assert _facts("我参观的是一家口腔医院。") == []
    assert _facts("我的上司读的是专科。") == []
    assert _facts("王强的妻子是一名护士。") == [("be", {"AGENT": ["妻子"], "PATIENT": ["护士"]})]


def test_a_pronoun_repeating_the_subject_is_not_a_second_subject():
    [(predicate, roles)] = _facts("我表哥他去了北京。")
    assert (predicate, roles["AGENT"]) == ("go_to", ["用户的表哥"])


def test_the_thing_i_like_is_a_taste():
    [preference] = extract("我喜欢的手机是OPPOFindX3。", "zh", speaker="用户").preferences
    assert (preference.kind, preference.polarity, preference.object) == ("taste", 1, "OPPOFindX3")


def test_an_e_mail_address_holds_no_product_and_a_relative_mentioned_as_owner_is_the_speakers():
    result = extract("我表姐的邮箱是wangsiqi0117@jsld.com。", "zh", speaker="用户")
    assert [(entity.name, entity.type) for entity in result.entities] == [("用户的表姐", "Person")]


def test_a_place_or_thing_joined_to_the_speaker_as_agent_gives_no_fact():
    assert _facts("这次去海滨公园，真让我感受到了大自然的宁静和美。") == []
    assert _facts("就是我个人因为是内向的性格，要是它的颜色选择能更低调点就好了。") == []  # 我个人 is no possession


def test_a_relative_clause_before_is_gives_no_fact_of_its_subject():
    assert _facts("我参观的那家医院是专门看牙齿的，就是口腔医院。") == []
    assert _facts("我刚才经过的那个公园是中心公园。") == []


def test_leftover_characters_and_abbreviations_and_words_of_an_event_name_are_no_entities():
    def entities(sentence):
        return [(entity.name, entity.type) for entity in extract(sentence, "zh", speaker="用户").entities]

    assert entities("我特别钟爱新百伦的FreshFoam1080v10运动鞋。") == [("新百伦", "Organization"), ("FreshFoam1080v10", "Product")]  # not 伦
    assert entities("AI年终总结盛典的规模是六千人。") == [("AI年终总结盛典", "Other")]
    assert entities("我将要参加的广州新兴产业峰会，它的持续时间是三天。") == [("我", "Person"), ("广州新兴产业峰会", "Other")]
    assert entities("而且运行的时候特别安静，让厨房变得好舒服。") == []  # jieba's 安静/nr


def test_a_person_after_a_verbs_dao_is_reached_not_a_place_and_children_are_nobodys():
    [(predicate, roles)] = _facts("我每天经过那，都能感受到孩子们的欢声笑语。")
    assert (predicate, roles.get("PATIENT"), roles.get("LOCATION")) == ("感受", ["孩子"], None)


def test_the_speakers_pet_company_or_damaged_thing_holds_its_fact_in_its_own_clause_only():
    assert _facts("我们家狗狗昨天生病了，带它去了宠物医院。") == [("get_sick", {"AGENT": ["狗狗"], "TIME": ["昨天"]})]
    assert [predicate for predicate, _ in _facts("我们公司下个月搬到浦东新区。")] == ["move_to"]
    assert _facts("我的车在停车场被刮了。") == [("刮", {"LOCATION": ["停车场"], "PATIENT": ["车"]})]
