"""`recall` over a long multilingual history: does it find the conversation, and at what cost?

A deterministic generator writes one person's history — conversations in 12 languages and
scripts (English, French, German, Spanish, Russian, Greek, Arabic, Hindi, Japanese,
Chinese, Korean, Thai), one a day or more over a year, each about a subject (budget,
hiring plan, …) for a qualifier (Lisbon, the mobile app, …), with a summary that also
mentions another subject — and questions whose answer conversation is known: each names
its conversation's subject and qualifier in that conversation's language (the question's
own grammar: Russian cases, Japanese particles, accents sometimes left out). Only the
answers have a subject and qualifier no other conversation shares; most conversations
share one or the other with many.

At each history size (10, 100, 1,000 and 2,000 conversations) the same questions go to:

- `index`: Orion's recall (app/learning/recall.py `search_homes`): one read of the
  person's search index, BM25, then the best k conversations (k = 5);
- `scan`: the keyword scan recall used before (kept below as the baseline, reading the
  person's home): read their conversation list (the profile), the newest 50
  conversations' summaries, match ASCII keywords.

Both run through the real store: GcsObjectStore against the GCS emulator
(fake-gcs-server on loopback), under the retention layer Orion uses (365 days). Reads are
counted by a layer over the store. CPU is `time.process_time()` of this process per
search — the storage client's request handling included (the emulator runs in its own
process) — and, for the index, also reading, parsing and ranking the index alone (the
k conversation reads left out). Also reported: the search index's size at 2,000
conversations beside the profile's (which lists them), the parse time of each (why they
are separate objects), and the CPU of one turn end's index update.

Run alone with `uv run python -m bench.recall_search [--quick]`.
"""

from __future__ import annotations

import asyncio
import random
import re
import statistics
import sys
import time
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from app.learning.conversation_record import ConversationOwner, ConversationRecord
from app.learning.profile import ConversationEntry, Profile
from app.learning.recall import search_homes
from app.learning.search_index import (
    SearchIndex,
    document_for,
    parse_search_index,
    render_search_index,
    with_documents,
)
from app.learning.search_ranking import rank
from app.learning.search_terms import query_terms
from app.learning.summary_file import Summary
from app.memory import secret_free_store
from app.memory.homes import person
from app.memory.retention import SessionRetention
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from bench.environment import benchmark_environment
from bench.stats import percentile_ms, print_table
from tests.fakes.gcs import GcsEmulator

K = 5
SEED = 24
RETENTION_DAYS = 365
NOW = datetime.now(UTC).replace(microsecond=0)
DM = "D0BENCH24"


def _forms(text: str) -> list[str]:
    return text.split(",")


# (subjects, qualifiers, title, summary, question) per language. A subject or qualifier
# is "form in the summary|form in the question" when the question's grammar changes it.
LANGUAGES: dict[str, tuple[list[str], list[str], str, str, str]] = {
    "en": (
        _forms(
            "budget|budgets,hiring plan,vendor contract|vendor contracts,product launch,"
            "security audit,customer churn,office move,pricing model,data migration,"
            "quarterly report"
        ),
        _forms(
            "Lisbon,Berlin team,mobile app,sales,marketing,third quarter,fourth quarter,"
            "partners,warehouse,support desk"
        ),
        "{S} for {Q}",
        "We went through the {s} for {q}. Decided to revisit the numbers next week and "
        "share a short note with the team. Also touched on the {o}.",
        "What did we decide about the {s} for {q}?",
    ),
    "fr": (
        _forms(
            "budget,plan de recrutement,contrat fournisseur,lancement produit,audit de sécurité,"
            "départ des clients,déménagement des bureaux,modèle de prix,migration des données,"
            "rapport trimestriel"
        ),
        _forms(
            "Lisbonne,équipe de Berlin,application mobile,ventes,marketing,troisième trimestre,"
            "quatrième trimestre,partenaires,entrepôt,service client"
        ),
        "{S} — {Q}",
        "Nous avons passé en revue le {s} pour {q}. Décision : revoir les chiffres la "
        "semaine prochaine et partager une note avec l'équipe. Nous avons aussi évoqué {o}.",
        "Qu'avons-nous décidé sur le {s} pour {q} ?",
    ),
    "de": (
        _forms(
            "Budget,Einstellungsplan,Lieferantenvertrag|Lieferantenverträge,Produkteinführung,"
            "Sicherheitsprüfung,Kundenabwanderung,Büroumzug,Preismodell,Datenmigration,"
            "Quartalsbericht"
        ),
        _forms(
            "Lissabon,Berliner Team,mobile App,Vertrieb,Marketing,"
            "drittes Quartal|dritten Quartal,viertes Quartal|vierten Quartal,"
            "Partner,Lager,Kundendienst"
        ),
        "{S}: {Q}",
        "Wir haben {s} für {q} besprochen. Wir prüfen die Zahlen nächste Woche noch einmal "
        "und schicken dem Team eine kurze Notiz. Außerdem ging es kurz um {o}.",
        "Was hatten wir zu {s} für {q} beschlossen?",
    ),
    "es": (
        _forms(
            "presupuesto,plan de contratación,contrato con proveedores,lanzamiento del producto,"
            "auditoría de seguridad,pérdida de clientes,mudanza de oficina,modelo de precios,"
            "migración de datos,informe trimestral"
        ),
        _forms(
            "Lisboa,equipo de Berlín,aplicación móvil,ventas,marketing,tercer trimestre,"
            "cuarto trimestre,socios,almacén,atención al cliente"
        ),
        "{S} — {Q}",
        "Revisamos el {s} para {q}. Decidimos revisar las cifras la próxima semana y "
        "compartir una nota con el equipo. También hablamos de {o}.",
        "¿Qué decidimos sobre el {s} para {q}?",
    ),
    "ru": (
        _forms(
            "бюджет|бюджете,план найма|плане найма,договор с поставщиком|договоре с поставщиком,"
            "запуск продукта|запуске продукта,аудит безопасности|аудите безопасности,"
            "отток клиентов|оттоке клиентов,переезд офиса|переезде офиса,"
            "модель ценообразования|модели ценообразования,миграция данных|миграции данных,"
            "квартальный отчёт|квартальном отчёте"
        ),
        _forms(
            "Лиссабон|Лиссабона,берлинская команда|берлинской команды,"
            "мобильное приложение|мобильного приложения,продажи|продаж,маркетинг|маркетинга,"
            "третий квартал|третьего квартала,четвёртый квартал|четвёртого квартала,"
            "партнёры|партнёров,склад|склада,служба поддержки|службы поддержки"
        ),
        "{S}: {Q}",
        "Обсудили {s} — {q}. Решили пересмотреть цифры на следующей неделе и отправить "
        "команде короткую записку. Также затронули тему: {o}.",
        "Что мы решили о {s} для {q}?",
    ),
    "el": (
        _forms(
            "προϋπολογισμός|προϋπολογισμό,σχέδιο προσλήψεων,σύμβαση προμηθευτή,"
            "κυκλοφορία προϊόντος,έλεγχος ασφαλείας|έλεγχο ασφαλείας,απώλεια πελατών,"
            "μετακόμιση γραφείου,μοντέλο τιμολόγησης,μετάπτωση δεδομένων,"
            "τριμηνιαία αναφορά"
        ),
        _forms(
            "Λισαβόνα|Λισαβόνα,ομάδα Βερολίνου,εφαρμογή κινητού,πωλήσεις,μάρκετινγκ,"
            "τρίτο τρίμηνο,τέταρτο τρίμηνο,συνεργάτες,αποθήκη,εξυπηρέτηση πελατών"
        ),
        "{S} — {Q}",
        "Συζητήσαμε: {s} για {q}. Αποφασίσαμε να ξαναδούμε τα νούμερα την επόμενη "
        "εβδομάδα και να στείλουμε ένα σημείωμα στην ομάδα. Αναφέραμε επίσης: {o}.",
        "Τι αποφασίσαμε για {s} για {q};",
    ),
    "ar": (
        _forms(
            "الميزانية,خطة التوظيف,عقد المورد,إطلاق المنتج,التدقيق الأمني,فقدان العملاء,"
            "نقل المكتب,نموذج التسعير,ترحيل البيانات,التقرير الفصلي"
        ),
        _forms(
            "لشبونة,فريق برلين,تطبيق الجوال,المبيعات,التسويق,الربع الثالث,الربع الرابع,"
            "الشركاء,المستودع,خدمة العملاء"
        ),
        "{S} — {Q}",
        "راجعنا {s} بخصوص {q}. قررنا مراجعة الأرقام الأسبوع المقبل وإرسال ملاحظة قصيرة "
        "إلى الفريق. تطرقنا أيضا إلى {o}.",
        "ماذا قررنا بشأن {s} بخصوص {q}؟",
    ),
    "hi": (
        _forms(
            "बजट,भर्ती योजना,आपूर्तिकर्ता अनुबंध,उत्पाद लॉन्च,सुरक्षा ऑडिट,ग्राहक हानि,"
            "कार्यालय स्थानांतरण,मूल्य निर्धारण मॉडल,डेटा माइग्रेशन,तिमाही रिपोर्ट"
        ),
        _forms(
            "लिस्बन,बर्लिन टीम,मोबाइल ऐप,बिक्री,मार्केटिंग,तीसरी तिमाही,चौथी तिमाही,साझेदार,"
            "गोदाम,ग्राहक सहायता"
        ),
        "{S} — {Q}",
        "हमने {q} के {s} की समीक्षा की। अगले सप्ताह आंकड़े फिर से देखने और टीम को एक "
        "छोटा नोट भेजने का निर्णय लिया। {o} पर भी थोड़ी बात हुई।",
        "{q} के {s} के बारे में हमने क्या तय किया था?",
    ),
    "ja": (
        _forms(
            "予算,採用計画,仕入先契約,製品発売,セキュリティ監査,顧客離れ,オフィス移転,価格モデル,"
            "データ移行,四半期報告"
        ),
        _forms(
            "リスボン,ベルリンチーム,モバイルアプリ,営業,マーケティング,第3四半期,第4四半期,"
            "パートナー,倉庫,サポート窓口"
        ),
        "{Q}の{S}",
        "{q}の{s}について確認しました。来週数字を見直し、チームに短いメモを共有することに"
        "しました。{o}についても少し話しました。",
        "{q}の{s}について何を決めましたか？",
    ),
    "zh": (
        _forms(
            "预算,招聘计划,供应商合同,产品发布,安全审计,客户流失,办公室搬迁,定价模型,数据迁移,"
            "季度报告"
        ),
        _forms("里斯本,柏林团队,移动应用,销售,市场营销,第三季度,第四季度,合作伙伴,仓库,客服中心"),
        "{Q}{S}",
        "我们讨论了{q}的{s}。决定下周重新核对数字，并给团队发一份简短说明。另外也谈到了{o}。",
        "我们关于{q}的{s}决定了什么？",
    ),
    "ko": (
        _forms(
            "예산,채용 계획,공급업체 계약,제품 출시,보안 감사,고객 이탈,사무실 이전,가격 모델,"
            "데이터 마이그레이션,분기 보고서"
        ),
        _forms("리스본,베를린 팀,모바일 앱,영업,마케팅,3분기,4분기,파트너,창고,고객 지원"),
        "{Q} {S}",
        "{q} {s}에 대해 검토했습니다. 다음 주에 수치를 다시 확인하고 팀에 짧은 메모를 "
        "공유하기로 했습니다. {o}에 대해서도 잠깐 이야기했습니다.",
        "{q} {s}에 대해 무엇을 결정했나요?",
    ),
    "th": (
        _forms(
            "งบประมาณ,แผนการจ้างงาน,สัญญาผู้จัดจำหน่าย,การเปิดตัวสินค้า,การตรวจสอบความปลอดภัย,"
            "การสูญเสียลูกค้า,การย้ายสำนักงาน,โมเดลราคา,การย้ายข้อมูล,รายงานรายไตรมาส"
        ),
        _forms(
            "ลิสบอน,ทีมเบอร์ลิน,แอปมือถือ,ฝ่ายขาย,การตลาด,ไตรมาสที่สาม,ไตรมาสที่สี่,พันธมิตร,คลังสินค้า,ฝ่ายบริการลูกค้า"
        ),
        "{S}{Q}",
        "เราทบทวน{s}ของ{q} ตัดสินใจตรวจตัวเลขอีกครั้งสัปดาห์หน้าและส่งบันทึกสั้นๆ ให้ทีม และพูดถึง{o}ด้วย",
        "เราตัดสินใจอะไรเรื่อง{s}ของ{q}",
    ),
}


@dataclass(frozen=True)
class Conversation:
    thread_ts: str
    language: str
    subject: int
    qualifier: int
    other: int
    updated: datetime

    def summary(self) -> Summary:
        subjects, qualifiers, title, body, _ = LANGUAGES[self.language]
        s, q = _said(subjects[self.subject]), _said(qualifiers[self.qualifier])
        o = _said(subjects[self.other])
        heading = title.format(S=s[:1].upper() + s[1:], Q=q)
        return Summary(heading, body.format(s=s, q=q, o=o), self.updated)


@dataclass(frozen=True)
class Question:
    text: str
    answer: str  # thread_ts
    # The topic's words alone, no question around them: recall without the help of the
    # question filler (the words that only ask), which knows the phrasing of `text`.
    topic: str


def _said(form: str) -> str:
    return form.split("|")[0]


def _asked(form: str) -> str:
    return form.split("|")[-1]


def _without_accents(text: str) -> str:
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if not 0x300 <= ord(c) <= 0x36F)
    return unicodedata.normalize("NFC", bare)


def history(size: int) -> tuple[list[Conversation], list[Question]]:
    """`size` conversations over a year, oldest first, and min(200, size) questions whose
    answers are spread over the whole history."""
    rng = random.Random(f"{SEED}:{size}")
    combos = [
        (language, s, q)
        for language in LANGUAGES
        for s in range(len(LANGUAGES[language][0]))
        for q in range(len(LANGUAGES[language][1]))
    ]
    rng.shuffle(combos)
    asked = min(200, size)
    answers = set(rng.sample(range(size), asked))
    unique, shared = combos[:asked], combos[asked:]
    step = timedelta(days=RETENTION_DAYS - 5) / size
    conversations, questions = [], []
    for n in range(size):
        language, s, q = unique.pop() if n in answers else rng.choice(shared)
        other = rng.choice([x for x in range(len(LANGUAGES[language][0])) if x != s])
        thread = f"{1_700_000_000 + n * 1_000}.{n:06d}"
        conversation = Conversation(thread, language, s, q, other, NOW - (size - n) * step)
        conversations.append(conversation)
        if n in answers:
            subjects, qualifiers, _, _, ask = LANGUAGES[language]
            text = ask.format(s=_asked(subjects[s]), q=_asked(qualifiers[q]))
            topic = f"{_asked(subjects[s])} {_asked(qualifiers[q])}"
            if rng.random() < 0.3:  # typed quickly: no accents, no capitals
                text, topic = _without_accents(text).lower(), _without_accents(topic).lower()
            questions.append(Question(text, thread, topic))
    return conversations, questions


class CountingStore(StoreLayer):
    """Counts reads, as a search would be billed for them."""

    reads = 0

    async def read(self, key: str) -> StoredObject | None:
        self.reads += 1
        return await super().read(key)


def _seed(emulator: GcsEmulator, bucket: str, user: str, conversations: list[Conversation]):
    """Each conversation's object (with its summary) in the person's home, the profile
    listing them and the search index; the profile's and the index's text."""
    home, owner = person(user), ConversationOwner(user, DM)
    profile, documents = Profile(), []
    for c in conversations:
        summary = c.summary()
        record = ConversationRecord(c.thread_ts, owner, c.updated).with_summary(summary)
        emulator.write(bucket, home.conversation_key(c.thread_ts), record.render())
        profile = profile.with_conversation(
            ConversationEntry(c.thread_ts, summary.title, c.updated, DM)
        )
        documents.append(
            document_for(c.thread_ts, summary.title, summary.body, [], c.updated, None, DM)
        )
    listed = profile.render()
    emulator.write(bucket, home.profile_key, listed)
    by_term = SearchIndex(complete=True)
    by_term.add(documents)
    search = render_search_index(by_term)
    emulator.write(bucket, home.search_key, search)
    return listed, search


# --- The baseline: recall's keyword scan before the search index (kept as it was) ------

_STOPWORD_TEXT = """
    a about again ago all an and any anything are as at be been before but by can could
    conversation conversations did discuss discussed discussing discussion do does earlier
    for from had has have how i in into is it its last me month my of on or our past
    previous recall remember said say session sessions should something talk talked
    talking tell that the there this those time to today us was we week were what when
    where which who why with would year yesterday you your"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")
MAX_SCANNED = 50


def _keywords(query: str) -> list[str]:
    found: list[str] = []
    for token in _TOKEN.findall(query.lower()):
        token = token.strip("'-")
        if token in _STOPWORDS or token in found:
            continue
        if len(token) >= 3 or any(ch.isdigit() for ch in token):
            found.append(token)
            if len(found) == 10:
                break
    return found


def _score(summary: Summary, words: list[str]) -> int:
    title, body, total = summary.title[:4000].lower(), summary.body[:4000].lower(), 0
    for word in words:
        literal = re.escape(word)
        pattern = re.compile(rf"{literal}(?<![a-z0-9]{literal})")
        if pattern.search(title):
            total += 2
        elif pattern.search(body):
            total += 1
    return total


async def keyword_scan(store: ObjectStore, user: str, query: str, limit: int) -> list[str]:
    home = person(user)
    listed = await store.read(home.profile_key)
    entries = Profile.parse(listed.content if listed else None).conversations[:MAX_SCANNED]
    gate = asyncio.Semaphore(8)

    async def load(entry: ConversationEntry) -> Summary | None:
        async with gate:
            stored = await store.read(home.conversation_key(entry.thread_ts))
        record = ConversationRecord.parse(stored.content) if stored is not None else None
        return record.summary if record is not None else None

    summaries = await asyncio.gather(*(load(e) for e in entries))
    words = _keywords(query)
    scored = [(e.thread_ts, _score(s, words)) for e, s in zip(entries, summaries, strict=True) if s]
    if words:
        scored = [hit for hit in scored if hit[1] > 0]
    scored.sort(key=lambda hit: hit[1], reverse=True)
    return [thread for thread, _ in scored[:limit]]


# --- Measuring -----------------------------------------------------------------------


@dataclass
class Tally:
    top1: int = 0
    top5: int = 0
    reads: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, found: list[str], answer: str, reads: int, cpu: float) -> None:
        self.top1 += found[:1] == [answer]
        self.top5 += answer in found[:K]
        self.reads.append(reads)
        self.cpu.append(cpu)


async def _measure(store: CountingStore, user: str, questions: list[Question]):
    index, scan, topic, rank_cpu = Tally(), Tally(), Tally(), []
    for question in questions:
        store.reads, started = 0, time.process_time()
        hits, _ = await search_homes(store, [person(user)], [question.topic], limit=K)
        topic.add([h.thread_ts for h in hits], question.answer, store.reads, _since(started))
        store.reads, started = 0, time.process_time()
        hits, _ = await search_homes(store, [person(user)], [question.text], limit=K)
        index.add([h.thread_ts for h in hits], question.answer, store.reads, _since(started))
        store.reads, started = 0, time.process_time()
        found = await keyword_scan(store, user, question.text, K)
        scan.add(found, question.answer, store.reads, _since(started))
        started = time.process_time()
        stored = await store.inner.read(person(user).search_key)
        assert stored is not None
        rank(parse_search_index(stored.content), query_terms(question.text), K)
        rank_cpu.append(_since(started))
    return index, scan, topic, rank_cpu


def _since(started: float) -> float:
    return time.process_time() - started


def _row(label: str, tally: Tally, asked: int) -> list[tuple[str, str]]:
    return [
        (f"{label}: recall@1 / recall@5", f"{tally.top1 / asked:.3f} / {tally.top5 / asked:.3f}"),
        (
            f"{label}: storage reads per search, median / max",
            f"{statistics.median(tally.reads):g} / {max(tally.reads)}",
        ),
        (
            f"{label}: CPU per search, p50 / p95 ms",
            f"{percentile_ms(tally.cpu, 50)} / {percentile_ms(tally.cpu, 95)}",
        ),
    ]


def _offline_costs(size: int, profile_json: str, search_json: str) -> list[tuple[str, str]]:
    def timed(work, runs: int = 20) -> list[float]:
        samples = []
        for _ in range(runs):
            started = time.process_time()
            work()
            samples.append(_since(started))
        return samples

    parse_conversations = timed(lambda: Profile.parse(profile_json))
    parse_search = timed(lambda: parse_search_index(search_json))
    document = document_for("1800000000.000001", "Budget", "A new summary. " * 40, [], NOW)
    turn_end = timed(lambda: with_documents(search_json, [document]))
    p = percentile_ms
    return [
        (
            f"{size} conversations: profile.json / search.json size, KB",
            f"{len(profile_json.encode()) // 1024} / {len(search_json.encode()) // 1024}",
        ),
        (
            f"{size} conversations: parse profile.json / search.json, p50 ms",
            f"{p(parse_conversations, 50)} / {p(parse_search, 50)}",
        ),
        (
            f"{size} conversations: turn end's index update (parse+add+render), p50 / p95 ms",
            f"{p(turn_end, 50)} / {p(turn_end, 95)}",
        ),
    ]


async def _run(quick: bool, emulator: GcsEmulator) -> list[tuple[str, str]]:
    sizes = [10, 100] if quick else [10, 100, 1000, 2000]
    bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    gcs = GcsObjectStore(bucket)
    store = CountingStore(secret_free_store.kept(gcs, SessionRetention(days=RETENTION_DAYS)))
    rows: list[tuple[str, str]] = []
    seeded: tuple[str, str] = ("", "")
    try:
        await gcs.connect()
        for size in sizes:
            user = f"U0BENCH{size}"
            conversations, questions = history(size)
            seeded = _seed(emulator, bucket, user, conversations)
            if quick:
                questions = questions[:20]
            index, scan, topic, rank_cpu = await _measure(store, user, questions)
            label = f"{size} conversations, {len(questions)} questions"
            rows += _row(f"{label}, index", index, len(questions))
            rows.append(
                (
                    f"{label}, index, the topic's words alone: recall@1 / recall@5",
                    f"{topic.top1 / len(questions):.3f} / {topic.top5 / len(questions):.3f}",
                )
            )
            rows += _row(f"{label}, scan (before)", scan, len(questions))
            rows.append(
                (
                    f"{label}, index: read + parse + rank (no summaries), p50 / p95 ms",
                    f"{percentile_ms(rank_cpu, 50)} / {percentile_ms(rank_cpu, 95)}",
                )
            )
        rows += _offline_costs(sizes[-1], *seeded)
    finally:
        await gcs.close()
    return rows


def run(quick: bool) -> list[tuple[str, str]]:
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        return asyncio.run(_run(quick, emulator))


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
