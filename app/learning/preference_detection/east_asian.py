"""Japanese, Chinese and Korean: no spaces between words, so the forms are anchored on the
particles and verb endings around a value (docs/memory-controls.md, "How preferences are
heard"); a value is a bounded run of characters that are not punctuation."""

from __future__ import annotations

from app.learning.preference_detection.grammar import Forms, Grammar, flags, openers, words

# A value between particles: a bounded run without spaces or punctuation.
_RUN = r"[^\s、。,，.!?！？「」『』]"
_TZ = r"(?P<value>[\w/+:.-]{2,40}?)"
_CJK_OPENER_END = r"[\s、，,:：]*"

# --- Japanese ---------------------------------------------------------------------------------

_JA_PLEASE = r"(?:ください|下さい|くれ|ね|ほしいです|欲しいです|ほしい|欲しい)?"
_JA_IS = r"(?:です|だ|でございます)?"

JAPANESE = Grammar(
    language="Japanese",
    forms=(
        Forms()
        .add(
            "name",
            r"(?:私のことは|僕のことは|わたしのことは|私を|僕を|わたしを)?"
            rf"(?P<value>(?:(?!を){_RUN}){{1,20}}?)(?:と|って)呼んで{_JA_PLEASE}",
        )
        .add("name", rf"(?:私の|僕の|わたしの)?名前は(?P<value>{_RUN}{{1,20}}?){_JA_IS}")
        .add("name", rf"(?:私は)?(?P<value>{_RUN}{{1,20}}?)と申します")
        .add("timezone", rf"(?:私の)?タイムゾーンは{_TZ}{_JA_IS}")
        .add(
            "team",
            rf"(?:私は)?(?P<value>{_RUN}{{1,30}}?)チーム(?:に所属しています|に所属してます"
            r"|の所属です|所属です|で働いています|にいます|の者です|です)",
        )
        .add(
            "team",
            rf"(?:私の)?(?:チーム|所属チーム|所属)は(?P<value>{_RUN}{{1,30}}?)(?:チーム)?{_JA_IS}",
        )
        .add(
            "language",
            rf"(?:いつも|常に|必ず)?(?P<value>{_RUN}{{1,10}}?)で(?:答えて|返事して|返信して"
            rf"|回答して|話して|書いて|返答して|応答して|お願いします){_JA_PLEASE}",
        )
        .add(
            "language", rf"(?:私の)?(?:言語|使用言語|希望言語)は(?P<value>{_RUN}{{1,10}}?){_JA_IS}"
        )
        .add(
            "prefers",
            r"(?P<value>.{1,60}?)(?:の方|のほう)が(?:好き|いい|良い)です"
            r"|(?P<other>.{1,60}?)を(?:好みます|希望します)",
            build=lambda m: m.group("value") or m.group("other"),
        )
        .add(
            "response_style",
            r"(?:回答|返事|返信|答え)は.{1,40}?(?:にしてください|でお願いします|にして|でお願い"
            r"|にしてほしいです)",
        )
        .add(
            "never",
            r"(?:絶対に|決して|二度と|絶対)、?.{2,}(?:ないでください|ないで下さい|ないでね"
            r"|ないでほしいです|ないこと)",
        )
        .add(
            "always",
            r"(?:いつも|常に|必ず|毎回)、?.{2,}(?:ください|下さい|してね|すること|てほしいです)",
        )
        .add("never", r".{2,}(?:ないでください|ないで下さい|ないでね)", durable_only=True)
        .add("always", r".{2,}(?:てください|でください|て下さい|してね)", durable_only=True)
    ),
    openers=openers(
        """
        こんにちは これからは 今後は 今後 次からは 以後 やっぱり ちなみに それから 実は いや
        えっと 覚えておいて
        """,
        end=_CJK_OPENER_END,
    ),
    fillers=("よろしくお願いします", "お願いします", "よろしく", "ありがとう"),
    durable=flags(r"今後|これから|次から|以後|今度から"),
    reported=r"と言った|と言って|って言った|って言って|と言われ|って言われ|と言う|と話して|そうです|らしい|と聞いた",
    asks=("か", "かな", "かしら", "でしょう", "だろう", "っけ", "の"),
    not_names=frozenset(),
    not_preferred=flags(r"(?:それ|これ|あれ|どれ|どちら)"),
    not_value=flags(r"ではな|じゃな|ません|ではあり"),
    style=flags(r"箇条書き|簡潔|短め|短く|手短|詳しく|詳細|丁寧|敬語|カジュアル|表形式|要点|結論"),
    filler_separators="、, ",
)

# --- Chinese ----------------------------------------------------------------------------------

_ZH_VERBS = "(?:{})".format(
    words(
        """
        用 使用 给 写 加 附上 标注 注明 引用 回答 回复 列出 提供 解释 说明 检查 包含 带上 说
        发 道歉 称呼 叫
        """
    )
)
_ZH_NAME = rf"(?P<value>(?![他她它你您们了])(?:(?![了过的吗呢]){_RUN}){{1,20}}?)"

CHINESE = Grammar(
    language="Chinese",
    forms=(
        Forms()
        .add(
            "name",
            rf"(?:你可以|您可以|以后|就)?(?:叫我|称呼我|喊我)(?:为)?{_ZH_NAME}"
            r"(?:吧|就好|就行|就好了|就可以了|就行了)?",
        )
        .add("name", rf"我(?:的名字)?叫{_ZH_NAME}")
        .add("name", rf"我的名字是{_ZH_NAME}")
        .add("timezone", rf"我的时区是{_TZ}")
        .add("timezone", rf"我在{_TZ}时区")
        .add(
            "team",
            rf"我(?:在|是)(?P<value>{_RUN}{{1,30}}?)(?:团队|小组|组|部门)(?:的)?(?:工作|成员|人)?",
        )
        .add("team", rf"我的(?:团队|小组|部门)是(?P<value>{_RUN}{{1,30}}?)(?:团队|组)?")
        .add(
            "language",
            rf"(?:请)?(?:总是|一直|始终|永远|都)?用(?P<value>{_RUN}{{1,8}}?)(?:回答|回复|回覆"
            r"|答复|跟我说|和我说|跟我聊|和我交流|跟我交流|写)(?:我)?(?:吧)?",
        )
        .add("language", rf"我的(?:首选|常用)?语言是(?P<value>{_RUN}{{1,8}}?)")
        .add(
            "language", rf"我(?:更)?(?:喜欢|希望)用(?P<value>{_RUN}{{1,8}}?)(?:交流|沟通|回答|聊天)"
        )
        .add("prefers", r"我(?:更喜欢|比较喜欢|偏好|更偏好|倾向于|更倾向于)(?P<value>.{1,60})")
        .add(
            "response_style",
            r"(?:回答|回复|答案)(?:请)?(?:要|尽量|都)?(?:简短|简洁|详细|简单|正式|随意|短一点"
            r"|详细一点|简洁一点)(?:一些|一点|些)?(?:吧)?",
        )
        .add("never", rf"(?:永远|绝对|千万|再也|以后都)(?:不要|别|不准|不许)(?:再)?{_ZH_VERBS}.*")
        # "总是要检查数字" is "one must always check the numbers": no "要" here.
        .add("always", rf"(?:总是|始终|每次都|一直|永远)(?:请)?{_ZH_VERBS}.*")
        .add("never", rf"(?:都)?(?:不要|别)(?:再)?{_ZH_VERBS}.*", durable_only=True)
        .add("always", rf"(?:请)?{_ZH_VERBS}.*", durable_only=True)
    ),
    openers=openers(
        """
        你好 您好 嗨 不对 请记住 记住 另外 还有 对了 顺便说一下 以后 今后
        从现在开始 从现在起 从今以后 往后 其实 请
        """,
        end=_CJK_OPENER_END,
    ),
    fillers=("谢谢", "谢谢你", "谢啦"),
    durable=flags(r"以后|今后|从现在开始|从现在起|从今以后|往后"),
    reported=r"他说|她说|他们说|说过|告诉我|据说|听说|跟我说过",
    asks=("吗", "嗎", "呢", "么", "麽"),
    not_preferred=flags(r"(?:这|那|它|不)"),
    not_value=flags(r"不是|没有"),
    style=flags(r"简短|简洁|详细|列表|要点|表格|正式|口语|语气|条目|示例|例子"),
    filler_separators="，、, ",
)

# --- Korean -----------------------------------------------------------------------------------

_KO_PLEASE = r"(?: ?주세요| ?줘| ?줘요| ?주십시오| ?주면 좋겠어요)"
_KO_IS = r"(?:입니다|이에요|예요|야|이야|이다)"

KOREAN = Grammar(
    language="Korean",
    forms=(
        Forms()
        .add(
            "name",
            rf"(?:저를 |절 |나를 |날 )?(?P<value>{_RUN}{{1,20}}?)(?:이)?라고 불러{_KO_PLEASE}",
        )
        .add("name", rf"(?:제|내|저의) 이름은 (?P<value>{_RUN}{{1,20}}?){_KO_IS}")
        .add("timezone", rf"(?:제|내|저의) 시간대는 {_TZ}{_KO_IS}")
        .add(
            "team",
            rf"(?:저는|나는) (?P<value>{_RUN}{{1,30}}?) ?팀(?: 소속)?"
            r"(?:입니다|이에요|이야|에서 일해요"
            r"|에서 일합니다|에 있어요|에 있습니다)",
        )
        .add("team", rf"(?:제|내|저의) 팀은 (?P<value>{_RUN}{{1,30}}?)(?: ?팀)?{_KO_IS}")
        .add(
            "language",
            rf"(?:항상 |늘 |앞으로 )?(?P<value>{_RUN}{{1,8}}?)로 (?:답해|대답해|답변해|말해|써"
            rf"|작성해|응답해){_KO_PLEASE}",
        )
        .add("language", rf"(?:제|내|저의) (?:선호 )?언어는 (?P<value>{_RUN}{{1,8}}?){_KO_IS}")
        .add("prefers", r"(?:저는|나는) (?P<value>.{1,60}?)(?:을|를)? 선호(?:합니다|해요|해)")
        .add(
            "response_style",
            r"(?:답변|대답|답)은 .{1,40}?(?:해 ?주세요|해줘|부탁해요|부탁합니다|해 ?줘요)",
        )
        .add("never", r"(?:절대|절대로|다시는) .{2,}(?:마세요|마|말아 ?주세요|말아요|마십시오)")
        .add("always", r"(?:항상|늘|언제나|꼭|매번) .{2,}(?:주세요|줘|줘요|주십시오|하세요|십시오)")
        .add("never", r".{2,}(?:지 마세요|지 마|지 말아 ?주세요)", durable_only=True)
        .add("always", r".{2,}(?:주세요|줘요|하세요)", durable_only=True)
    ),
    openers=openers(
        """
        안녕하세요 안녕 앞으로는 앞으로 이제부터 이제부터는 다음부터 다음부터는
        지금부터 그리고 참고로 아 사실 아니
        """
    ),
    fillers=("감사합니다", "고마워요", "고마워", "부탁해요", "부탁합니다"),
    durable=flags(r"앞으로|이제부터|다음부터|지금부터"),
    reported=r"라고 했|다고 했|라고 말했|다고 말했|라고 하더|래요|대요|했대|라더라",
    asks=("까", "까요", "니", "나요", "냐", "는지"),
    not_preferred=flags(r"(?:그것|이것|저것|그거|이거)"),
    not_value=flags(r"아니|않"),
    style=flags(r"요약|짧게|짧은|간결|자세히|자세한|글머리|표로|^표$|존댓말|반말|말투|목록"),
    filler_separators=", ",
)
