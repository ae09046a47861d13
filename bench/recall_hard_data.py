"""A hard evaluation set for `recall`, generated deterministically (templates and a seeded
random generator: no network, no model): people in long multi-session conversations with
Orion, where what is later asked about was said once, in passing, and is not in the
summary.

Each person talks in one language (English, French, German, Spanish or Japanese). Each
conversation is about a work topic (a budget, a hiring plan, a launch… for a team or a
city), held over two to four sessions on different days, and its summary speaks of that
topic only. Somewhere in it the person mentions one thing in passing — a pet's name, a
restaurant, a doctor, a gift, a trip… —, always with an occasion (the farewell lunch,
the cousin's wedding) that tells it from the same kind of thing said in other
conversations of theirs; a few conversations mention a vendor's quote or a meeting
point that a later conversation changes.

Questions, with the conversations that hold their answer (the evidence):
- `single`: about one thing said in passing, in other words than it was said in
  (a plural for a singular, a question's grammar), answered by one conversation;
- `two`: comparing two quotes, or a meeting point before and after a change: both
  conversations are needed;
- `date`: when something was said, and what was said about a kind of thing in a given
  month (the month as a time range, `within`, which only the new recall can use).

Frozen: the set was generated and written before any engine was measured on it
(bench/recall_hard.py), and is not tuned to one.
"""

# Template sentences read better whole than cut at 100 characters.
# ruff: noqa: E501

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

SEED = 38
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Message:
    role: str
    text: str
    at: datetime
    ts: str

    @property
    def sent_at(self) -> float:
        return self.at.timestamp()


@dataclass
class Conversation:
    thread_ts: str
    title: str
    summary: str
    messages: list[Message] = field(default_factory=list)

    @property
    def started(self) -> datetime:
        return self.messages[0].at

    @property
    def updated(self) -> datetime:
        return self.messages[-1].at


@dataclass(frozen=True)
class Question:
    kind: str  # single | two | date
    text: str
    evidence: tuple[str, ...]  # the threads that hold the answer
    month: tuple[datetime, datetime] | None = None  # a time range the question names


@dataclass
class Person:
    user_id: str
    language: str
    conversations: list[Conversation]
    questions: list[Question]


# Per language: topics (title, subject words), qualifiers, session openers, filler the
# person and Orion say, summary template, and the things said in passing:
# kind → (statement, question, date question, entities, occasions).
LANG: dict[str, dict] = {
    "en": {
        "topics": [
            "budget review",
            "hiring plan",
            "product launch",
            "office move",
            "quarterly report",
            "vendor contract",
            "training program",
            "customer survey",
            "security audit",
            "marketing campaign",
        ],
        "qualifiers": [
            "the Lisbon team",
            "the mobile app",
            "the Berlin office",
            "the sales team",
            "the new website",
            "the support desk",
        ],
        "person": [
            "Can we go over the {t} for {q} again?",
            "I need to send an update on the {t} to my manager today.",
            "The numbers for the {t} still look off to me.",
            "What would you change first in the {t}?",
            "I talked to the team about the {t} and they had a few concerns.",
            "Could you draft a short note about the {t} for {q}?",
            "The deadline for the {t} moved to next month.",
            "Let's pick up the {t} where we left off.",
        ],
        "orion": [
            "For the {t} of {q}, I would start with the biggest open question and list "
            "who decides it, by when, and what information is still missing.",
            "Here is a short draft about the {t}: the goal, the current status, the risks "
            "and the next two steps, each with an owner and a date.",
            "The {t} looks reasonable overall; the main risk is the timeline, so I would "
            "check the dependencies with {q} before committing.",
            "If the numbers look off, compare them with last quarter line by line and "
            "note every difference larger than five percent.",
        ],
        "summary": "Worked on the {t} for {q}: reviewed the status, the open questions "
        "and the next steps, and drafted an update.",
        "facts": {
            "pet": (
                "By the way, our {o} {x} chewed through my laptop cable again last night.",
                "What is the name of the {o} that keeps chewing my cables?",
                ["puppy", "kitten", "rabbit", "parrot", "hamster", "ferret"],
                [
                    "Biscuit",
                    "Pickles",
                    "Noodle",
                    "Waffles",
                    "Pepper",
                    "Ziggy",
                    "Mango",
                    "Tofu",
                    "Gizmo",
                    "Bramble",
                    "Clover",
                    "Muffin",
                ],
            ),
            "event": (
                "Sorry if I'm distracted, my {o} recital got moved to {x} evening.",
                "When is my {o} recital?",
                [
                    "daughter's piano",
                    "son's violin",
                    "niece's ballet",
                    "nephew's guitar",
                    "sister's cello",
                    "son's drum",
                ],
                ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
            ),
            "food": (
                "We ended up at {x} for the {o}, the food was great.",
                "Which restaurant did we go to for the {o}?",
                [
                    "farewell lunch",
                    "anniversary dinner",
                    "client breakfast",
                    "team offsite dinner",
                    "birthday brunch",
                    "board dinner",
                ],
                [
                    "Casa Lupita",
                    "Trattoria Nonna",
                    "The Copper Kettle",
                    "Sakura House",
                    "Le Petit Zinc",
                    "Bombay Spice",
                    "El Rancho",
                    "Blue Lagoon Grill",
                    "Taverna Kostas",
                    "Golden Dragon",
                    "Osteria Lucca",
                    "Kimchi Bros",
                ],
            ),
            "doctor": (
                "I finally booked the {o}, {x}, for next week.",
                "What's the name of the {o} I booked?",
                [
                    "dermatologist",
                    "dentist",
                    "physiotherapist",
                    "optician",
                    "allergist",
                    "orthodontist",
                ],
                [
                    "Dr. Okafor",
                    "Dr. Lindqvist",
                    "Dr. Haddad",
                    "Dr. Moreau",
                    "Dr. Tanaka",
                    "Dr. Kowalski",
                    "Dr. Ferreira",
                    "Dr. Nakamura",
                ],
            ),
            "gift": (
                "I bought {x} for my {o} birthday, hope it arrives in time.",
                "What did I buy for my {o} birthday?",
                ["sister's", "father's", "mother's", "brother's", "grandmother's", "partner's"],
                [
                    "a ceramic teapot",
                    "a hiking backpack",
                    "a vinyl turntable",
                    "a watercolor set",
                    "a leather journal",
                    "a telescope",
                    "a bread maker",
                    "a chess set",
                ],
            ),
            "trip": (
                "I'm flying to {x} for my {o} wedding, so I'll be off that week.",
                "Where am I flying for my {o} wedding?",
                ["cousin's", "best friend's", "colleague's", "brother's", "aunt's", "roommate's"],
                [
                    "Reykjavik",
                    "Marrakesh",
                    "Valparaiso",
                    "Tbilisi",
                    "Hobart",
                    "Ljubljana",
                    "Cartagena",
                    "Kyoto",
                    "Tallinn",
                    "Zanzibar",
                ],
            ),
            "book": (
                "On the {o} I started reading {x}, it's really gripping.",
                "Which book did I start reading on the {o}?",
                ["train", "flight", "ferry", "night bus", "beach holiday", "weekend"],
                [
                    "The Glass Orchard",
                    "Salt and Iron",
                    "The Last Cartographer",
                    "Winter Harbour",
                    "A Map of Embers",
                    "The Silent Quarry",
                    "Northern Lights",
                    "The Paper Garden",
                ],
            ),
            "car": (
                "The garage says the {o} needs new brake pads, about {x} euros.",
                "How much did the garage want for the brake pads on the {o}?",
                ["van", "old hatchback", "camper", "motorbike", "station wagon", "pickup"],
                ["180", "240", "310", "95", "420", "275", "150", "365"],
            ),
        },
        "quote": (
            "The quote from {x} for the {o} came in at {n} euros.",
            "{x} sent their quote for the {o} too: {n} euros.",
            "Which quote for the {o} was cheaper, {x} or {y}?",
            [
                "garden fence",
                "kitchen renovation",
                "roof repair",
                "office painting",
                "bathroom tiles",
                "new windows",
            ],
            [
                "Nordlys Builders",
                "Baker & Sons",
                "Apex Roofing",
                "GreenLeaf Co",
                "Hammer Brothers",
                "Summit Works",
                "Brightline",
                "Oakridge Crafts",
            ],
        ),
        "meet": (
            "For the {o} we planned to meet at {x}.",
            "Change of plan for the {o}: we now meet at {x} instead.",
            "Where did the meeting point for the {o} move from and to?",
            ["hiking trip", "book club", "team run", "charity walk", "pub quiz", "photo walk"],
            [
                "the old lighthouse",
                "the central station",
                "the north gate",
                "the harbour cafe",
                "the town library",
                "the market square",
            ],
        ),
        "when": "When did I tell you about the {o} {x}?",
        "month": "What did I mention about a {k} in {m}?",
        "kinds": {
            "pet": "pet",
            "food": "restaurant",
            "doctor": "doctor",
            "trip": "trip",
            "book": "book",
            "gift": "birthday gift",
            "event": "recital",
            "car": "garage",
        },
    },
    "fr": {
        "topics": [
            "revue budgétaire",
            "plan de recrutement",
            "lancement produit",
            "déménagement des bureaux",
            "rapport trimestriel",
            "contrat fournisseur",
        ],
        "qualifiers": [
            "l'équipe de Lyon",
            "l'application mobile",
            "le bureau de Nantes",
            "l'équipe commerciale",
            "le nouveau site",
        ],
        "person": [
            "On peut reprendre la {t} pour {q} ?",
            "Je dois envoyer un point sur la {t} à ma responsable aujourd'hui.",
            "Les chiffres de la {t} me paraissent toujours bizarres.",
            "Qu'est-ce que tu changerais d'abord dans la {t} ?",
            "J'ai parlé de la {t} avec l'équipe, ils ont quelques inquiétudes.",
            "Reprenons la {t} là où on s'était arrêtés.",
        ],
        "orion": [
            "Pour la {t} de {q}, je commencerais par la plus grosse question ouverte : "
            "qui décide, pour quand, et quelles informations manquent encore.",
            "Voici un court brouillon sur la {t} : l'objectif, l'état actuel, les risques "
            "et les deux prochaines étapes, chacune avec un responsable et une date.",
            "Si les chiffres semblent faux, compare-les ligne par ligne avec le trimestre "
            "précédent et note chaque écart de plus de cinq pour cent.",
        ],
        "summary": "Travail sur la {t} pour {q} : état des lieux, questions ouvertes et "
        "prochaines étapes, brouillon d'un point d'avancement.",
        "facts": {
            "pet": (
                "Au fait, notre {o} {x} a encore rongé le câble de mon ordinateur.",
                "Comment s'appelle le {o} qui ronge mes câbles ?",
                ["chiot", "chaton", "lapin", "perroquet", "hamster"],
                [
                    "Biscotte",
                    "Cornichon",
                    "Nouille",
                    "Gaufre",
                    "Poivre",
                    "Mangue",
                    "Praline",
                    "Caramel",
                ],
            ),
            "food": (
                "Finalement on est allés chez {x} pour le {o}, c'était délicieux.",
                "Dans quel restaurant sommes-nous allés pour le {o} ?",
                [
                    "déjeuner d'adieu",
                    "dîner d'anniversaire",
                    "petit-déjeuner client",
                    "dîner du séminaire",
                    "brunch d'anniversaire",
                ],
                [
                    "Chez Paulette",
                    "La Bonne Fourchette",
                    "Le Zinc Doré",
                    "Bistrot Marius",
                    "La Table d'Hugo",
                    "Le Comptoir Basque",
                    "Auberge du Lac",
                    "Le Petit Jardin",
                ],
            ),
            "doctor": (
                "J'ai enfin pris rendez-vous chez le {o}, {x}, pour la semaine prochaine.",
                "Comment s'appelle le {o} chez qui j'ai pris rendez-vous ?",
                ["dermatologue", "dentiste", "kinésithérapeute", "ophtalmologue", "allergologue"],
                ["Dr Okafor", "Dr Lindqvist", "Dr Haddad", "Dr Moreau", "Dr Tanaka", "Dr Kowalski"],
            ),
            "gift": (
                "J'ai acheté {x} pour l'anniversaire de ma {o}, j'espère qu'il arrivera à temps.",
                "Qu'est-ce que j'ai acheté pour l'anniversaire de ma {o} ?",
                ["sœur", "mère", "grand-mère", "cousine", "tante"],
                [
                    "une théière en céramique",
                    "un sac de randonnée",
                    "une platine vinyle",
                    "une boîte d'aquarelle",
                    "un carnet en cuir",
                    "un télescope",
                ],
            ),
            "trip": (
                "Je pars à {x} pour le mariage de mon {o}, je serai absent cette semaine-là.",
                "Où est-ce que je pars pour le mariage de mon {o} ?",
                ["cousin", "meilleur ami", "collègue", "frère", "oncle"],
                [
                    "Reykjavik",
                    "Marrakech",
                    "Valparaiso",
                    "Tbilissi",
                    "Ljubljana",
                    "Carthagène",
                    "Kyoto",
                    "Tallinn",
                ],
            ),
            "book": (
                "Dans le {o} j'ai commencé à lire {x}, c'est vraiment prenant.",
                "Quel livre ai-je commencé à lire dans le {o} ?",
                ["train", "avion", "ferry", "bus de nuit"],
                [
                    "Le Verger de verre",
                    "Sel et Fer",
                    "Le Dernier Cartographe",
                    "Port d'hiver",
                    "Une carte de braises",
                    "La Carrière silencieuse",
                ],
            ),
        },
        "quote": (
            "Le devis de {x} pour la {o} est arrivé : {n} euros.",
            "{x} a aussi envoyé son devis pour la {o} : {n} euros.",
            "Quel devis pour la {o} était le moins cher, {x} ou {y} ?",
            [
                "clôture du jardin",
                "rénovation de la cuisine",
                "réparation du toit",
                "peinture des bureaux",
            ],
            [
                "Bâtiments Dupont",
                "Martin et Fils",
                "Toitures Apex",
                "Feuille Verte",
                "Frères Marteau",
                "Atelier Sommet",
            ],
        ),
        "meet": (
            "Pour la {o}, on avait prévu de se retrouver à {x}.",
            "Changement de programme pour la {o} : on se retrouve maintenant à {x}.",
            "Où était le point de rendez-vous de la {o}, avant et après le changement ?",
            ["randonnée", "soirée lecture", "course d'équipe", "marche solidaire"],
            [
                "la gare centrale",
                "la porte nord",
                "la bibliothèque",
                "la place du marché",
                "le vieux phare",
            ],
        ),
        "when": "Quand est-ce que je t'ai parlé du {o} {x} ?",
        "month": "Qu'est-ce que j'ai dit à propos d'un {k} en {m} ?",
        "kinds": {
            "pet": "animal",
            "food": "restaurant",
            "doctor": "médecin",
            "trip": "voyage",
            "book": "livre",
            "gift": "cadeau",
        },
    },
    "de": {
        "topics": [
            "Budgetplanung",
            "Personalplanung",
            "Produkteinführung",
            "Büroumzug",
            "Quartalsbericht",
            "Lieferantenvertrag",
        ],
        "qualifiers": [
            "das Team in Hamburg",
            "die mobile App",
            "das Büro in Wien",
            "den Vertrieb",
            "die neue Website",
        ],
        "person": [
            "Können wir die {t} für {q} noch einmal durchgehen?",
            "Ich muss heute meiner Chefin ein Update zur {t} schicken.",
            "Die Zahlen in der {t} kommen mir immer noch komisch vor.",
            "Was würdest du an der {t} zuerst ändern?",
            "Ich habe mit dem Team über die {t} gesprochen, sie haben ein paar Bedenken.",
            "Lass uns bei der {t} weitermachen, wo wir aufgehört haben.",
        ],
        "orion": [
            "Für die {t} für {q} würde ich mit der größten offenen Frage anfangen: wer "
            "entscheidet, bis wann, und welche Informationen noch fehlen.",
            "Hier ein kurzer Entwurf zur {t}: Ziel, aktueller Stand, Risiken und die "
            "nächsten zwei Schritte, jeweils mit Verantwortlichem und Datum.",
            "Wenn die Zahlen nicht stimmen, vergleiche sie Zeile für Zeile mit dem "
            "letzten Quartal und notiere jede Abweichung über fünf Prozent.",
        ],
        "summary": "Arbeit an der {t} für {q}: Stand, offene Fragen und nächste Schritte "
        "besprochen, ein Update entworfen.",
        "facts": {
            "pet": (
                "Übrigens hat unser {o} {x} gestern schon wieder mein Ladekabel angeknabbert.",
                "Wie heißt der {o}, der meine Kabel anknabbert?",
                ["Welpe", "Kater", "Hase", "Papagei", "Hamster"],
                ["Keks", "Gurke", "Nudel", "Waffel", "Pfeffer", "Mango", "Brösel", "Strudel"],
            ),
            "food": (
                "Wir waren am Ende für das {o} im {x}, das Essen war großartig.",
                "In welchem Restaurant waren wir für das {o}?",
                [
                    "Abschiedsessen",
                    "Jubiläumsdinner",
                    "Kundenfrühstück",
                    "Teamabendessen",
                    "Geburtstagsbrunch",
                ],
                [
                    "Gasthaus Linde",
                    "Zum Goldenen Hirsch",
                    "Brauhaus Adler",
                    "Trattoria Sole",
                    "Haus am See",
                    "Alte Mühle",
                    "Schwarzer Bär",
                ],
            ),
            "doctor": (
                "Ich habe endlich einen Termin beim {o}, {x}, für nächste Woche.",
                "Wie heißt der {o}, bei dem ich einen Termin habe?",
                ["Hautarzt", "Zahnarzt", "Physiotherapeut", "Augenarzt", "Allergologen"],
                [
                    "Dr. Okafor",
                    "Dr. Lindqvist",
                    "Dr. Haddad",
                    "Dr. Moreau",
                    "Dr. Tanaka",
                    "Dr. Kowalski",
                ],
            ),
            "gift": (
                "Ich habe {x} zum Geburtstag meiner {o} gekauft, hoffentlich kommt es rechtzeitig.",
                "Was habe ich zum Geburtstag meiner {o} gekauft?",
                ["Schwester", "Mutter", "Großmutter", "Cousine", "Tante"],
                [
                    "eine Keramik-Teekanne",
                    "einen Wanderrucksack",
                    "einen Plattenspieler",
                    "einen Aquarellkasten",
                    "ein Lederjournal",
                    "ein Teleskop",
                ],
            ),
            "trip": (
                "Ich fliege zur Hochzeit meines {o} nach {x}, da bin ich die Woche weg.",
                "Wohin fliege ich zur Hochzeit meines {o}?",
                ["Cousins", "besten Freundes", "Kollegen", "Bruders", "Onkels"],
                [
                    "Reykjavik",
                    "Marrakesch",
                    "Valparaiso",
                    "Tiflis",
                    "Ljubljana",
                    "Cartagena",
                    "Kyoto",
                    "Tallinn",
                ],
            ),
            "book": (
                "Im {o} habe ich angefangen, {x} zu lesen, total spannend.",
                "Welches Buch habe ich im {o} angefangen zu lesen?",
                ["Zug", "Flugzeug", "Nachtbus", "Urlaub"],
                [
                    "Der gläserne Obstgarten",
                    "Salz und Eisen",
                    "Der letzte Kartograf",
                    "Winterhafen",
                    "Eine Karte aus Glut",
                    "Der stille Steinbruch",
                ],
            ),
        },
        "quote": (
            "Das Angebot von {x} für die {o} liegt bei {n} Euro.",
            "{x} hat auch ein Angebot für die {o} geschickt: {n} Euro.",
            "Welches Angebot für die {o} war günstiger, {x} oder {y}?",
            ["Gartenzaun", "Küchenrenovierung", "Dachreparatur", "Büroanstrich"],
            [
                "Nordbau GmbH",
                "Becker & Söhne",
                "Apex Dach",
                "Grünblatt",
                "Gebrüder Hammer",
                "Gipfelwerk",
            ],
        ),
        "meet": (
            "Für die {o} wollten wir uns am {x} treffen.",
            "Planänderung für die {o}: wir treffen uns jetzt am {x}.",
            "Wohin wurde der Treffpunkt für die {o} verlegt, und wo war er vorher?",
            ["Wanderung", "Lesegruppe", "Teamlauf", "Spendenlauf"],
            ["Hauptbahnhof", "Nordtor", "Leuchtturm", "Marktplatz", "Stadtarchiv"],
        ),
        "when": "Wann habe ich dir von dem {o} {x} erzählt?",
        "month": "Was habe ich im {m} über ein {k} erwähnt?",
        "kinds": {
            "pet": "Haustier",
            "food": "Restaurant",
            "doctor": "Arzttermin",
            "trip": "Reiseziel",
            "book": "Buch",
            "gift": "Geschenk",
        },
    },
    "es": {
        "topics": [
            "revisión del presupuesto",
            "plan de contratación",
            "lanzamiento del producto",
            "mudanza de la oficina",
            "informe trimestral",
            "contrato con el proveedor",
        ],
        "qualifiers": [
            "el equipo de Sevilla",
            "la aplicación móvil",
            "la oficina de Bilbao",
            "el equipo de ventas",
            "la nueva web",
        ],
        "person": [
            "¿Podemos repasar la {t} para {q} otra vez?",
            "Hoy tengo que mandarle a mi jefa una actualización sobre la {t}.",
            "Los números de la {t} me siguen pareciendo raros.",
            "¿Qué cambiarías primero en la {t}?",
            "Hablé de la {t} con el equipo y tienen algunas dudas.",
            "Sigamos con la {t} donde lo dejamos.",
        ],
        "orion": [
            "Para la {t} de {q}, empezaría por la pregunta abierta más grande: quién "
            "decide, para cuándo y qué información falta todavía.",
            "Aquí tienes un borrador corto sobre la {t}: el objetivo, el estado actual, "
            "los riesgos y los dos próximos pasos, cada uno con responsable y fecha.",
            "Si los números no cuadran, compáralos línea por línea con el trimestre "
            "anterior y anota cada diferencia de más del cinco por ciento.",
        ],
        "summary": "Trabajo sobre la {t} para {q}: estado, preguntas abiertas y próximos "
        "pasos, y un borrador de actualización.",
        "facts": {
            "pet": (
                "Por cierto, nuestro {o} {x} volvió a morder el cable de mi portátil.",
                "¿Cómo se llama el {o} que muerde mis cables?",
                ["cachorro", "gatito", "conejo", "loro", "hámster"],
                ["Galleta", "Pepinillo", "Fideo", "Gofre", "Pimienta", "Mango", "Churro", "Canela"],
            ),
            "food": (
                "Al final fuimos a {x} para la {o}, la comida estuvo genial.",
                "¿A qué restaurante fuimos para la {o}?",
                [
                    "comida de despedida",
                    "cena de aniversario",
                    "reunión con el cliente",
                    "cena del equipo",
                    "fiesta de cumpleaños",
                ],
                [
                    "Casa Lupita",
                    "El Rincón de Pepe",
                    "La Tasca Azul",
                    "Mesón del Río",
                    "Taberna Lola",
                    "El Faro Viejo",
                    "La Huerta",
                ],
            ),
            "doctor": (
                "Por fin pedí cita con el {o}, {x}, para la semana que viene.",
                "¿Cómo se llama el {o} con el que pedí cita?",
                ["dermatólogo", "dentista", "fisioterapeuta", "oftalmólogo", "alergólogo"],
                [
                    "Dr. Okafor",
                    "Dr. Lindqvist",
                    "Dr. Haddad",
                    "Dr. Moreau",
                    "Dr. Tanaka",
                    "Dr. Kowalski",
                ],
            ),
            "gift": (
                "Compré {x} para el cumpleaños de mi {o}, espero que llegue a tiempo.",
                "¿Qué compré para el cumpleaños de mi {o}?",
                ["hermana", "madre", "abuela", "prima", "tía"],
                [
                    "una tetera de cerámica",
                    "una mochila de montaña",
                    "un tocadiscos",
                    "una caja de acuarelas",
                    "un diario de cuero",
                    "un telescopio",
                ],
            ),
            "trip": (
                "Vuelo a {x} para la boda de mi {o}, así que esa semana no estaré.",
                "¿A dónde vuelo para la boda de mi {o}?",
                ["primo", "mejor amigo", "compañero", "hermano", "tío"],
                [
                    "Reikiavik",
                    "Marrakech",
                    "Valparaíso",
                    "Tiflis",
                    "Liubliana",
                    "Cartagena",
                    "Kioto",
                    "Tallin",
                ],
            ),
        },
        "quote": (
            "El presupuesto de {x} para la {o} llegó: {n} euros.",
            "{x} también mandó su presupuesto para la {o}: {n} euros.",
            "¿Qué presupuesto para la {o} era más barato, el de {x} o el de {y}?",
            [
                "valla del jardín",
                "reforma de la cocina",
                "reparación del tejado",
                "pintura de la oficina",
            ],
            [
                "Construcciones Norte",
                "Panadero e Hijos",
                "Tejados Ápice",
                "Hoja Verde",
                "Hermanos Martillo",
                "Obras Cumbre",
            ],
        ),
        "meet": (
            "Para la {o} habíamos quedado en {x}.",
            "Cambio de planes para la {o}: ahora quedamos en {x}.",
            "¿Dónde era el punto de encuentro de la {o} antes y después del cambio?",
            ["excursión", "club de lectura", "carrera del equipo", "marcha solidaria"],
            [
                "la estación central",
                "la puerta norte",
                "el faro viejo",
                "la plaza del mercado",
                "la biblioteca",
            ],
        ),
        "when": "¿Cuándo te hablé del {o} {x}?",
        "month": "¿Qué mencioné sobre un {k} en {m}?",
        "kinds": {
            "pet": "animal",
            "food": "restaurante",
            "doctor": "médico",
            "trip": "viaje",
            "gift": "regalo",
        },
    },
    "ja": {
        "topics": [
            "予算見直し",
            "採用計画",
            "製品発売",
            "オフィス移転",
            "四半期報告",
            "取引先契約",
        ],
        "qualifiers": ["大阪チーム", "モバイルアプリ", "名古屋支社", "営業部", "新しいサイト"],
        "person": [
            "{q}の{t}をもう一度確認できますか？",
            "今日中に{t}について上司に報告しないといけません。",
            "{t}の数字がまだおかしい気がします。",
            "{t}で最初に変えるとしたら何ですか？",
            "チームと{t}について話したら、いくつか懸念が出ました。",
            "{t}の続きをやりましょう。",
        ],
        "orion": [
            "{q}の{t}なら、まず一番大きな未解決の問題から始めて、誰がいつまでに決めるか、"
            "足りない情報は何かを整理します。",
            "{t}の短い下書きです：目的、現状、リスク、次の二つのステップと担当者と期日。",
            "数字が合わないときは、前の四半期と一行ずつ比べて、五パーセント以上の差を"
            "書き出してください。",
        ],
        "summary": "{q}の{t}について、現状、未解決の問題、次のステップを確認し、報告の下書きを作成。",
        "facts": {
            "pet": (
                "ところで、うちの{o}の{x}がまたパソコンのケーブルをかじりました。",
                "ケーブルをかじる{o}の名前は何ですか？",
                ["子犬", "子猫", "うさぎ", "インコ", "ハムスター"],
                ["モチ", "きなこ", "ポン太", "あんず", "こむぎ", "まめ", "ゆず", "たまご"],
            ),
            "food": (
                "{o}は結局{x}に行きました。料理がとてもおいしかったです。",
                "{o}にはどのレストランに行きましたか？",
                [
                    "送別ランチ",
                    "記念日ディナー",
                    "顧客との朝食会",
                    "チームの打ち上げ",
                    "誕生日ブランチ",
                ],
                [
                    "さくら亭",
                    "トラットリア・ソーレ",
                    "銀座バンブー",
                    "海辺のキッチン",
                    "炭火焼き大和",
                    "ビストロ青山",
                    "麺処一心",
                ],
            ),
            "doctor": (
                "やっと{o}の{x}の予約が取れました。来週です。",
                "予約した{o}の名前は何ですか？",
                ["皮膚科", "歯医者", "整体院", "眼科", "アレルギー科"],
                ["岡田先生", "林先生", "早川先生", "森先生", "田中先生", "小林先生"],
            ),
            "trip": (
                "{o}の結婚式で{x}に行くので、その週は休みます。",
                "{o}の結婚式でどこに行きますか？",
                ["いとこ", "親友", "同僚", "兄", "おじ"],
                [
                    "レイキャビク",
                    "マラケシュ",
                    "バルパライソ",
                    "トビリシ",
                    "リュブリャナ",
                    "カルタヘナ",
                    "タリン",
                ],
            ),
        },
        "quote": (
            "{o}の{x}の見積もりは{n}円でした。",
            "{x}からも{o}の見積もりが来ました：{n}円です。",
            "{o}の見積もりは{x}と{y}のどちらが安かったですか？",
            ["庭のフェンス", "キッチン改装", "屋根の修理", "オフィスの塗装"],
            ["北光建設", "山本工務店", "頂上ルーフ", "緑葉社", "ハンマー兄弟"],
        ),
        "meet": (
            "{o}の集合場所は{x}の予定でした。",
            "{o}の予定変更：集合場所は{x}になりました。",
            "{o}の集合場所は変更の前と後でどこでしたか？",
            ["ハイキング", "読書会", "チームラン", "チャリティーウォーク"],
            ["中央駅", "北門", "灯台", "市場の広場", "図書館"],
        ),
        "when": "{o}の{x}の話をしたのはいつですか？",
        "month": "{m}に{k}について何と言いましたか？",
        "kinds": {"pet": "ペット", "food": "レストラン", "doctor": "病院", "trip": "旅行"},
    },
}

MONTHS = {
    "en": [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    "fr": [
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ],
    "de": [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
    "es": [
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ],
    "ja": [f"{n}月" for n in range(1, 13)],
}


def _ts(moment: datetime, serial: int) -> str:
    return f"{int(moment.timestamp())}.{serial:06d}"


def _person(number: int, language: str, conversations: int, rng: random.Random) -> Person:
    lang = LANG[language]
    user = f"U0HARD{number:04d}"
    convs: list[Conversation] = []
    questions: list[Question] = []
    kinds = list(lang["facts"])
    # Each (kind, occasion) pair is used once per person: the occasion tells it apart.
    pairs = [(k, o) for k in kinds for o in lang["facts"][k][2]]
    rng.shuffle(pairs)
    spacing = 365 / conversations
    # Three pairs of conversations hold the two halves of a two-part question.
    plan = rng.sample(range(conversations), 6)
    two_parts = [tuple(sorted(plan[j : j + 2])) for j in (0, 2, 4)]
    part_of = {}
    for j, (a, b) in enumerate(two_parts):
        part_of[a] = (j, 0)
        part_of[b] = (j, 1)
    two_details = []
    for j in range(len(two_parts)):
        kind = "quote" if j % 2 == 0 else "meet"
        spec = lang[kind]
        occasion = spec[3][(number + j) % len(spec[3])]
        names = rng.sample(spec[4], 2)
        two_details.append(
            (kind, occasion, names, [rng.randrange(900, 9000, 10) for _ in range(2)])
        )
    fact_at: dict[str, tuple[str, str, str, datetime]] = {}
    whens: list[tuple[str, str, str, str]] = []
    for i in range(conversations):
        begin = START + timedelta(days=i * spacing + rng.random() * spacing * 0.3)
        topic = rng.choice(lang["topics"])
        qualifier = rng.choice(lang["qualifiers"])
        title = f"{topic} — {qualifier}" if language != "ja" else f"{qualifier}の{topic}"
        conv = Conversation(_ts(begin, i + 1), title, lang["summary"].format(t=topic, q=qualifier))
        sessions = rng.randint(2, 4)
        exchanges = [rng.randint(3, 5) for _ in range(sessions)]
        total = sum(exchanges)
        # Where the passing mention goes: a person's message somewhere in the middle.
        mention_at = rng.randrange(1, total)
        kind, occasion = pairs[i % len(pairs)]
        statement, question, _, entities = lang["facts"][kind]
        entity = rng.choice(entities)
        serial, exchange = 0, 0
        for session in range(sessions):
            moment = begin + timedelta(
                days=session * rng.randint(1, 3), minutes=rng.randint(0, 600)
            )
            for _ in range(exchanges[session]):
                said = rng.choice(lang["person"]).format(t=topic, q=qualifier)
                extra = ""
                if exchange == mention_at:
                    extra = statement.format(o=occasion, x=entity)
                    fact_at[f"{kind}|{occasion}"] = (conv.thread_ts, occasion, entity, moment)
                elif exchange == mention_at - 1 and i in part_of:
                    j, part = part_of[i]
                    k2, occ2, names, amounts = two_details[j]
                    extra = lang[k2][part].format(o=occ2, x=names[part], n=amounts[part])
                text = (
                    f"{said} {extra}".strip() if rng.random() < 0.5 else f"{extra} {said}".strip()
                )
                serial += 1
                conv.messages.append(Message("user", text, moment, _ts(moment, serial)))
                moment += timedelta(minutes=rng.randint(1, 4))
                answer = " ".join(
                    rng.choice(lang["orion"]).format(t=topic, q=qualifier)
                    for _ in range(rng.randint(1, 3))
                )
                serial += 1
                conv.messages.append(Message("assistant", answer, moment, _ts(moment, serial)))
                moment += timedelta(minutes=rng.randint(2, 30))
                exchange += 1
        convs.append(conv)
        # The single question about this conversation's passing mention.
        questions.append(Question("single", question.format(o=occasion), (conv.thread_ts,)))
        whens.append((kind, occasion, entity, conv.thread_ts))
    for j, (a, b) in enumerate(two_parts):
        k2, occ2, names, _ = two_details[j]
        text = lang[k2][2].format(o=occ2, x=names[0], y=names[1])
        questions.append(Question("two", text, (convs[a].thread_ts, convs[b].thread_ts)))
    # Date questions: when a thing was said; and a kind of thing in a month where the
    # person mentioned one of that kind only then.
    keys = sorted(fact_at)
    for key in rng.sample(keys, min(4, len(keys))):
        thread, occasion, entity, _ = fact_at[key]
        questions.append(Question("date", lang["when"].format(o=occasion, x=entity), (thread,)))
    by_month: dict[tuple[str, int], list[str]] = {}
    for key, (thread, _, _, moment) in fact_at.items():
        by_month.setdefault((key.split("|")[0], moment.month), []).append(thread)
    alone = sorted((k, m) for (k, m), threads in by_month.items() if len(threads) == 1)
    for kind, month in rng.sample(alone, min(3, len(alone))):
        if kind not in lang["kinds"]:
            continue
        first = datetime(2026, month, 1, tzinfo=UTC)
        last = datetime(2026 + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        text = lang["month"].format(k=lang["kinds"][kind], m=MONTHS[language][month - 1])
        questions.append(Question("date", text, tuple(by_month[(kind, month)]), (first, last)))
    if conversations > _distinct(language):
        # A long history says the same kind of thing for the same occasion again: its
        # questions name the thing too, and any conversation that said it answers.
        said_in: dict[tuple[str, str, str], list[str]] = {}
        for kind, occasion, entity, thread in whens:
            said_in.setdefault((kind, occasion, entity), []).append(thread)
        questions = [
            Question("date", lang["when"].format(o=o, x=x), tuple(said_in[(k, o, x)]))
            for k, o, x, _ in rng.sample(whens, 200)
        ]
    return Person(user, language, convs, questions)


PEOPLE_LANGUAGES = ["en", "en", "en", "en", "fr", "fr", "de", "de", "es", "es", "ja", "ja"]


def people(conversations: int = 40) -> list[Person]:
    """The evaluation set: 12 people in five languages, `conversations` each or as many
    as their language has distinct things to say in passing (20 to 40)."""
    rng = random.Random(SEED)
    return [
        _person(n, lang, min(conversations, _distinct(lang)), rng)
        for n, lang in enumerate(PEOPLE_LANGUAGES)
    ]


def _distinct(language: str) -> int:
    return sum(len(fact[2]) for fact in LANG[language]["facts"].values())


def long_history(conversations: int = 2_000) -> Person:
    """One person with a long history (2,000 conversations over a year), in English."""
    return _person(99, "en", conversations, random.Random(SEED + 1))
