"""A second frozen evaluation set for `recall` (issue 45), with room left in it: the
answer is not where the question's words are.

Generated deterministically (templates and a seeded random generator: no network, no
model) and written once to bench/data/recall_passages.json.gz before any engine was
measured on it; bench/recall_hard.py reads that file, never this generator, so the set
stays as it was measured. `uv run python -m bench.recall_passages_data --check` tells
whether the generator still makes the same file.

Fifteen people (three per language: English, French, German, Spanish, Japanese — Japanese is
written without spaces), 40 conversations each over a year, each held over two or three
sessions about a work topic (its summary speaks of that topic only), with Orion's
replies greeting the person by name and the person naming colleagues now and then. Into
the conversations go short exchanges, and each question comes with its evidence: the
conversations and the messages (by ts) that hold the answer, and the answer's words.

- `reply`: the answer is in the message next to the one holding the question's words —
  Orion's suggestion after "what should I bring to the barbecue?", the person's answer
  after Orion asks "which one?", or a code said one message before "it's for the
  storage room";
- `paraphrase`: the question shares few or no words with the message that answers it
  ("what's the new dog called?" — "we adopted a greyhound and named her Luna");
- `span`: a personal project whose parts were settled in two to four conversations,
  asked about at once ("the contractor, the tiles and the finish date"), with other
  conversations mentioning the project without settling anything; each question also
  carries its parts, as Claude would split it;
- `before_after`: something that changed ("which gym did I go to before the climbing
  hall?"): the earlier conversation holds the answer, the later one the change; both
  are the evidence;
- `date`: a question naming a month, in half of them the month something happens in
  rather than the month it was said in ("where am I going in May?", said in March).
"""

# Template sentences read better whole than cut at 100 characters.
# ruff: noqa: E501

from __future__ import annotations

import gzip
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.recall_hard_data import LANG as FILLER
from bench.recall_hard_data import MONTHS

SEED = 45
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CONVERSATIONS = 40
PER_LANGUAGE = 3
PATH = Path(__file__).parent / "data" / "recall_passages.json.gz"

# Per language: the person's and colleagues' names, greetings, and the exchanges.
# An exchange is a list of (role, text) with `*` before the text of the evidence
# message; `{slot}` fields are filled from the template's slots.
SCENES: dict[str, dict[str, Any]] = {
    "en": {
        "names": ["Mira", "Tom", "Ruth"],
        "colleagues": ["Dana", "Sam", "Priya", "Lukas"],
        "greet_orion": [
            "Good morning, {n}! ",
            "Thanks, {n}! ",
            "Happy to help, {n}. ",
            "Hi {n}, ",
        ],
        "greet_person": [
            "Thanks Orion! ",
            "Hi Orion, ",
            "{c} says thanks for the last draft. ",
            "{c} and I looked at it together. ",
        ],
        "reply": [
            {
                "said": [
                    (
                        "user",
                        "My {rel} asked what I should bring to the {event} on Saturday. Any idea?",
                    ),
                    ("assistant", "*{item} would be easy to carry and everyone likes it."),
                    ("user", "Perfect, let's go with that."),
                ],
                "ask": "What was I going to bring to the {event}?",
                "answer": "{item}",
                "slots": {
                    "rel": ["sister", "neighbour", "cousin", "friend Ana"],
                    "event": [
                        "barbecue at the lake",
                        "school fair",
                        "housewarming party",
                        "garden picnic",
                        "street party",
                        "book club evening",
                    ],
                    "item": [
                        "A lemon tart",
                        "A big couscous salad",
                        "Homemade lemonade",
                        "A cheese board",
                        "Banana bread",
                        "Grilled vegetable skewers",
                    ],
                },
            },
            {
                "said": [
                    ("user", "I still have to book the {thing} for the {event}."),
                    ("assistant", "Which one are you leaning towards?"),
                    ("user", "*{name}, the one near {place}."),
                ],
                "ask": "Which {thing} did I pick for the {event}?",
                "answer": "{name}",
                "slots": {
                    "thing": ["hotel", "photographer", "caterer", "minibus company"],
                    "event": [
                        "sales kickoff",
                        "wedding anniversary",
                        "team retreat",
                        "family reunion",
                        "product demo day",
                    ],
                    "name": [
                        "Villa Serena",
                        "Studio Kestrel",
                        "Harbour Lights",
                        "Greenfield & Co",
                        "Maple Court",
                        "Blue Heron",
                    ],
                    "place": ["the old harbour", "the train station", "the river", "the cathedral"],
                },
            },
            {
                "said": [
                    ("user", "*{col} gave me the new code: {code}."),
                    ("user", "It's for the {room}, I keep forgetting it."),
                    ("assistant", "Noted. Want me to remind you next time you ask?"),
                ],
                "ask": "What's the code for the {room}?",
                "answer": "{code}",
                "slots": {
                    "col": ["Dana", "Sam", "Priya", "Lukas"],
                    "code": ["4471", "9082", "3316", "7754", "2209", "6148"],
                    "room": [
                        "storage room",
                        "bike shed",
                        "server cabinet",
                        "rooftop door",
                        "archive room",
                    ],
                },
            },
        ],
        "paraphrase": [
            {
                "said": [
                    ("user", "*We finally adopted a {breed} from the shelter and named her {name}.")
                ],
                "ask": "What's the new dog called?",
                "answer": "{name}",
                "slots": {
                    "breed": ["greyhound", "beagle", "whippet", "collie mix"],
                    "name": ["Luna", "Poppy", "Maple", "Juno", "Olive"],
                },
            },
            {
                "said": [
                    (
                        "user",
                        "*The physio told me to skip running for {n} weeks because of my knee.",
                    )
                ],
                "ask": "How long am I not allowed to jog?",
                "answer": "{n}",
                "slots": {"n": ["three", "four", "five", "six"]},
            },
            {
                "said": [
                    ("user", "*I moved all my savings to {bank}, their interest rate is better.")
                ],
                "ask": "Which bank holds my money now?",
                "answer": "{bank}",
                "slots": {"bank": ["Nordfin", "Helvia", "Caspian Trust", "Orbis"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*{col2} from accounting is leaving at the end of the month; her farewell drinks are at {bar}.",
                    )
                ],
                "ask": "Where is the goodbye party for the colleague who is quitting?",
                "answer": "{bar}",
                "slots": {
                    "col2": ["Helen", "Marta", "Grace", "Ines"],
                    "bar": ["The Fox and Lantern", "Bar Alma", "The Rusty Anchor", "Café Nova"],
                },
            },
        ],
        "span": [
            {
                "project": "move to the new flat",
                "parts": [
                    (
                        [
                            ("user", "We booked a removal company for the move to the new flat."),
                            ("assistant", "Which one did you choose?"),
                            ("user", "*{a}, they also take the piano."),
                        ],
                        "{a}",
                        "removal company move",
                    ),
                    (
                        [
                            ("user", "The landlord confirmed when we can move into the new flat."),
                            ("user", "*{b}, keys at nine in the morning."),
                        ],
                        "{b}",
                        "moving day new flat",
                    ),
                ],
                "ask": "For the move to the new flat: which removal company, and on what day?",
                "distractors": ["Half the new flat is still in boxes in my head already."],
                "slots": {
                    "a": ["Swift Movers", "Atlas Removals", "Careful Hands"],
                    "b": ["Friday the 3rd", "The last Saturday of the month", "Monday the 12th"],
                },
            },
            {
                "project": "kitchen renovation",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "For the kitchen renovation we signed with a contractor at last.",
                            ),
                            ("assistant", "Great, who did you go with?"),
                            ("user", "*{a}, they had the best references."),
                        ],
                        "{a}",
                        "kitchen renovation contractor",
                    ),
                    (
                        [
                            ("user", "We chose the tiles for the kitchen yesterday."),
                            ("user", "*{b}, it looks warmer than the grey ones."),
                        ],
                        "{b}",
                        "kitchen tiles",
                    ),
                    (
                        [
                            ("user", "The builders gave us a finish date for the kitchen."),
                            ("assistant", "When is it?"),
                            ("user", "*{c}, if the worktop arrives on time."),
                        ],
                        "{c}",
                        "kitchen finish date",
                    ),
                    (
                        [("user", "*The kitchen renovation will cost {d} euros in the end.")],
                        "{d}",
                        "kitchen renovation cost",
                    ),
                ],
                "ask": "Remind me what we settled for the kitchen renovation: the contractor, the tiles, the finish date and the cost.",
                "distractors": [
                    "The kitchen renovation is making the whole flat dusty.",
                    "We ate at my parents' again because of the kitchen work.",
                ],
                "slots": {
                    "a": ["Nordbau", "Carter & Sons", "Brightline Builders"],
                    "b": ["Green terracotta", "White zellige", "Blue cement tiles"],
                    "c": ["The 14th of March", "Mid-April", "The first week of May"],
                    "d": ["18,500", "22,000", "16,900"],
                },
            },
            {
                "project": "sister's wedding",
                "parts": [
                    (
                        [
                            ("user", "My sister finally chose where the wedding will be."),
                            ("user", "*{a}, up in the hills."),
                        ],
                        "{a}",
                        "wedding venue",
                    ),
                    (
                        [
                            ("user", "For my sister's wedding they booked a band."),
                            ("assistant", "Which band?"),
                            ("user", "*{b}, they play swing and soul."),
                        ],
                        "{b}",
                        "wedding band",
                    ),
                    (
                        [("user", "*I'm giving a speech at the wedding and I'll open with {c}.")],
                        "{c}",
                        "wedding speech",
                    ),
                ],
                "ask": "What do I know so far about my sister's wedding: the place, the band and how my speech starts?",
                "distractors": [
                    "My sister keeps sending me wedding dress pictures.",
                    "The wedding is all my family talks about.",
                ],
                "slots": {
                    "a": ["Quinta do Vale", "Rosewood Barn", "Castle Ardmore"],
                    "b": ["The Velvet Tones", "Brass Lanterns", "Sunday Static"],
                    "c": [
                        "the story of the lost ferry ticket",
                        "a poem by our grandmother",
                        "the camping trip in Wales",
                    ],
                },
            },
        ],
        "before_after": [
            {
                "first": [("user", "*I signed up at {a}, it's right next to the office.")],
                "second": [("user", "I cancelled my gym membership and joined {b} instead.")],
                "ask": "Which gym was I going to before {b}?",
                "answer": "{a}",
                "slots": {
                    "a": ["FitBox", "Ironworks Gym", "Pulse Studio"],
                    "b": ["the climbing hall", "the swimming club", "the boxing club"],
                },
            },
            {
                "first": [("user", "*For now {a} is leading our team while we look for someone.")],
                "second": [("user", "{b} took over as our team lead this week.")],
                "ask": "Who led the team before {b}?",
                "answer": "{a}",
                "slots": {"a": ["Yusuf", "Chiara", "Bram"], "b": ["Dana", "Sam", "Priya"]},
            },
        ],
        "date": [
            {
                "said": [
                    (
                        "user",
                        "*In {month} I'm going to {city} for a conference, so block that week.",
                    )
                ],
                "ask": "Where am I travelling in {month}?",
                "answer": "{city}",
                "shift": 2,
                "slots": {"city": ["Lisbon", "Krakow", "Valencia", "Tallinn"]},
            },
            {
                "said": [("user", "*Yesterday we had the board dinner at {place}.")],
                "ask": "Where did we have the board dinner in {month}?",
                "answer": "{place}",
                "shift": 0,
                "slots": {
                    "place": ["Osteria Lucca", "The Glasshouse", "Sakura House", "Le Petit Zinc"]
                },
            },
        ],
    },
    "fr": {
        "names": ["Claire", "Hugo", "Inès"],
        "colleagues": ["Julie", "Karim", "Léa", "Marc"],
        "greet_orion": ["Bonjour {n} ! ", "Merci {n} ! ", "Avec plaisir, {n}. ", "Salut {n}, "],
        "greet_person": [
            "Merci Orion ! ",
            "Salut Orion, ",
            "{c} te remercie pour le dernier brouillon. ",
            "{c} et moi l'avons relu ensemble. ",
        ],
        "reply": [
            {
                "said": [
                    (
                        "user",
                        "Ma {rel} m'a demandé ce que je devrais apporter au {event} samedi. Une idée ?",
                    ),
                    ("assistant", "*{item}, c'est facile à transporter et tout le monde aime ça."),
                    ("user", "Parfait, on part là-dessus."),
                ],
                "ask": "Qu'est-ce que je devais apporter au {event} ?",
                "answer": "{item}",
                "slots": {
                    "rel": ["sœur", "voisine", "cousine", "amie Ana"],
                    "event": [
                        "barbecue au lac",
                        "marché de l'école",
                        "pique-nique du jardin",
                        "repas de quartier",
                        "club de lecture",
                    ],
                    "item": [
                        "Une tarte au citron",
                        "Une grande salade de couscous",
                        "De la citronnade maison",
                        "Un plateau de fromages",
                        "Un cake à la banane",
                    ],
                },
            },
            {
                "said": [
                    ("user", "Il faut encore que je réserve le {thing} pour le {event}."),
                    ("assistant", "Lequel as-tu en tête ?"),
                    ("user", "*{name}, celui près de {place}."),
                ],
                "ask": "Quel {thing} ai-je choisi pour le {event} ?",
                "answer": "{name}",
                "slots": {
                    "thing": ["hôtel", "photographe", "traiteur"],
                    "event": [
                        "séminaire commercial",
                        "anniversaire de mariage",
                        "séminaire d'équipe",
                        "déjeuner de famille",
                    ],
                    "name": [
                        "Villa Serena",
                        "Studio Crécerelle",
                        "Les Lumières du Port",
                        "Maison Verdier",
                        "Le Héron Bleu",
                    ],
                    "place": ["vieux port", "la gare", "la rivière", "la cathédrale"],
                },
            },
            {
                "said": [
                    ("user", "*{col} m'a donné le nouveau code : {code}."),
                    ("user", "C'est pour le {room}, je l'oublie tout le temps."),
                    ("assistant", "C'est noté. Je te le rappelle la prochaine fois ?"),
                ],
                "ask": "Quel est le code du {room} ?",
                "answer": "{code}",
                "slots": {
                    "col": ["Julie", "Karim", "Léa", "Marc"],
                    "code": ["4471", "9082", "3316", "7754", "2209"],
                    "room": [
                        "local à vélos",
                        "local d'archives",
                        "placard serveur",
                        "local de stockage",
                    ],
                },
            },
        ],
        "paraphrase": [
            {
                "said": [
                    ("user", "*On a enfin adopté une {breed} au refuge et on l'a appelée {name}.")
                ],
                "ask": "Comment s'appelle la nouvelle chienne ?",
                "answer": "{name}",
                "slots": {
                    "breed": ["lévrier", "beagle", "whippet", "petite bâtarde"],
                    "name": ["Luna", "Praline", "Noisette", "Joy"],
                },
            },
            {
                "said": [
                    (
                        "user",
                        "*Le kiné m'a dit d'arrêter la course pendant {n} semaines à cause de mon genou.",
                    )
                ],
                "ask": "Combien de temps je n'ai pas le droit de faire du jogging ?",
                "answer": "{n}",
                "slots": {"n": ["trois", "quatre", "cinq", "six"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*J'ai transféré toute mon épargne chez {bank}, leur taux est meilleur.",
                    )
                ],
                "ask": "Dans quelle banque est mon argent maintenant ?",
                "answer": "{bank}",
                "slots": {"bank": ["Nordfin", "Helvia", "Caspian Trust", "Orbis"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*{col2} de la compta part à la fin du mois ; son pot de départ est au {bar}.",
                    )
                ],
                "ask": "Où a lieu la fête d'au revoir de la collègue qui démissionne ?",
                "answer": "{bar}",
                "slots": {
                    "col2": ["Hélène", "Marta", "Inès", "Sophie"],
                    "bar": ["Renard et Lanterne", "Bar Alma", "Café Nova", "Comptoir du Canal"],
                },
            },
        ],
        "span": [
            {
                "project": "déménagement",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "On a réservé une entreprise pour le déménagement dans le nouvel appartement.",
                            ),
                            ("assistant", "Laquelle as-tu choisie ?"),
                            ("user", "*{a}, ils prennent aussi le piano."),
                        ],
                        "{a}",
                        "entreprise déménagement",
                    ),
                    (
                        [
                            (
                                "user",
                                "Le propriétaire a confirmé quand on peut entrer dans le nouvel appartement.",
                            ),
                            ("user", "*{b}, remise des clés à neuf heures."),
                        ],
                        "{b}",
                        "jour emménagement nouvel appartement",
                    ),
                ],
                "ask": "Pour le déménagement dans le nouvel appartement : quelle entreprise, et quel jour ?",
                "distractors": [
                    "Dans ma tête, le nouvel appartement est déjà à moitié en cartons."
                ],
                "slots": {
                    "a": ["Déménag'Express", "Atlas Transports", "Mains Soigneuses"],
                    "b": ["Le vendredi 3", "Le dernier samedi du mois", "Le lundi 12"],
                },
            },
            {
                "project": "rénovation de la cuisine",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "Pour la rénovation de la cuisine, on a enfin signé avec une entreprise.",
                            ),
                            ("assistant", "Super, laquelle ?"),
                            ("user", "*{a}, ils avaient les meilleures références."),
                        ],
                        "{a}",
                        "rénovation cuisine entreprise",
                    ),
                    (
                        [
                            ("user", "On a choisi le carrelage de la cuisine hier."),
                            ("user", "*{b}, c'est plus chaleureux que le gris."),
                        ],
                        "{b}",
                        "carrelage cuisine",
                    ),
                    (
                        [
                            (
                                "user",
                                "Les ouvriers nous ont donné une date de fin pour la cuisine.",
                            ),
                            ("assistant", "C'est quand ?"),
                            ("user", "*{c}, si le plan de travail arrive à temps."),
                        ],
                        "{c}",
                        "date de fin cuisine",
                    ),
                    (
                        [("user", "*La rénovation de la cuisine coûtera {d} euros au final.")],
                        "{d}",
                        "coût rénovation cuisine",
                    ),
                ],
                "ask": "Rappelle-moi ce qu'on a fixé pour la rénovation de la cuisine : l'entreprise, le carrelage, la date de fin et le coût.",
                "distractors": [
                    "La rénovation de la cuisine met de la poussière partout.",
                    "On a encore mangé chez mes parents à cause des travaux de la cuisine.",
                ],
                "slots": {
                    "a": ["Nordbau", "Martin et Fils", "Bâticlair"],
                    "b": [
                        "De la terre cuite verte",
                        "Du zellige blanc",
                        "Des carreaux de ciment bleus",
                    ],
                    "c": ["Le 14 mars", "Mi-avril", "La première semaine de mai"],
                    "d": ["18 500", "22 000", "16 900"],
                },
            },
            {
                "project": "mariage de ma sœur",
                "parts": [
                    (
                        [
                            ("user", "Ma sœur a enfin choisi le lieu du mariage."),
                            ("user", "*{a}, dans les collines."),
                        ],
                        "{a}",
                        "lieu du mariage",
                    ),
                    (
                        [
                            ("user", "Pour le mariage de ma sœur, ils ont réservé un groupe."),
                            ("assistant", "Quel groupe ?"),
                            ("user", "*{b}, ils jouent du swing et de la soul."),
                        ],
                        "{b}",
                        "groupe du mariage",
                    ),
                    (
                        [("user", "*Je fais un discours au mariage et je commencerai par {c}.")],
                        "{c}",
                        "discours mariage",
                    ),
                ],
                "ask": "Qu'est-ce que je sais déjà du mariage de ma sœur : le lieu, le groupe et le début de mon discours ?",
                "distractors": [
                    "Ma sœur m'envoie sans arrêt des photos de robes de mariée.",
                    "Toute ma famille ne parle que du mariage.",
                ],
                "slots": {
                    "a": ["Quinta do Vale", "Domaine des Roses", "Château d'Ardmore"],
                    "b": ["Les Voix de Velours", "Lanternes de Cuivre", "Dimanche Statique"],
                    "c": [
                        "l'histoire du billet de ferry perdu",
                        "un poème de notre grand-mère",
                        "le camping au pays de Galles",
                    ],
                },
            },
        ],
        "before_after": [
            {
                "first": [("user", "*Je me suis inscrit à {a}, c'est juste à côté du bureau.")],
                "second": [
                    (
                        "user",
                        "J'ai résilié mon abonnement à la salle de sport et je me suis inscrit {b} à la place.",
                    )
                ],
                "ask": "À quelle salle de sport j'allais avant {b} ?",
                "answer": "{a}",
                "slots": {
                    "a": ["FitBox", "Ironworks Gym", "Pulse Studio"],
                    "b": ["à la salle d'escalade", "au club de natation", "au club de boxe"],
                },
            },
            {
                "first": [
                    (
                        "user",
                        "*Pour l'instant c'est {a} qui dirige notre équipe, le temps de trouver quelqu'un.",
                    )
                ],
                "second": [("user", "{b} a repris la direction de notre équipe cette semaine.")],
                "ask": "Qui dirigeait l'équipe avant {b} ?",
                "answer": "{a}",
                "slots": {"a": ["Yusuf", "Chiara", "Bram"], "b": ["Julie", "Karim", "Léa"]},
            },
        ],
        "date": [
            {
                "said": [
                    (
                        "user",
                        "*En {month} je pars à {city} pour une conférence, bloque cette semaine.",
                    )
                ],
                "ask": "Où est-ce que je voyage en {month} ?",
                "answer": "{city}",
                "shift": 2,
                "slots": {"city": ["Lisbonne", "Cracovie", "Valence", "Tallinn"]},
            },
            {
                "said": [("user", "*Hier on a fait le dîner du conseil au {place}.")],
                "ask": "Où a eu lieu le dîner du conseil en {month} ?",
                "answer": "{place}",
                "shift": 0,
                "slots": {
                    "place": ["Osteria Lucca", "Jardin d'Hiver", "Sakura House", "Petit Zinc"]
                },
            },
        ],
    },
    "de": {
        "names": ["Anna", "Jonas", "Petra"],
        "colleagues": ["Katrin", "Felix", "Sabine", "Deniz"],
        "greet_orion": [
            "Guten Morgen, {n}! ",
            "Danke, {n}! ",
            "Gern geschehen, {n}. ",
            "Hallo {n}, ",
        ],
        "greet_person": [
            "Danke Orion! ",
            "Hallo Orion, ",
            "{c} bedankt sich für den letzten Entwurf. ",
            "{c} und ich haben es zusammen angeschaut. ",
        ],
        "reply": [
            {
                "said": [
                    (
                        "user",
                        "Meine {rel} hat gefragt, was ich am Samstag zum {event} mitbringen soll. Eine Idee?",
                    ),
                    ("assistant", "*{item} lässt sich leicht transportieren und schmeckt allen."),
                    ("user", "Perfekt, so machen wir es."),
                ],
                "ask": "Was wollte ich zum {event} mitbringen?",
                "answer": "{item}",
                "slots": {
                    "rel": ["Schwester", "Nachbarin", "Cousine", "Freundin Ana"],
                    "event": [
                        "Grillen am See",
                        "Schulfest",
                        "Gartenpicknick",
                        "Straßenfest",
                        "Lesekreis",
                    ],
                    "item": [
                        "Eine Zitronentarte",
                        "Ein großer Couscoussalat",
                        "Selbstgemachte Limonade",
                        "Eine Käseplatte",
                        "Ein Bananenbrot",
                    ],
                },
            },
            {
                "said": [
                    ("user", "Ich muss noch das {thing} für das {event} buchen."),
                    ("assistant", "Zu welchem tendierst du?"),
                    ("user", "*{name}, das in der Nähe vom {place}."),
                ],
                "ask": "Welches {thing} habe ich für das {event} ausgesucht?",
                "answer": "{name}",
                "slots": {
                    "thing": ["Hotel", "Fotostudio", "Busunternehmen"],
                    "event": [
                        "Vertriebs-Kickoff",
                        "Teamwochenende",
                        "Familientreffen",
                        "Jubiläumsfest",
                    ],
                    "name": [
                        "Villa Serena",
                        "Studio Falke",
                        "Hafenlicht",
                        "Haus Ahorn",
                        "Blauer Reiher",
                    ],
                    "place": ["alten Hafen", "Bahnhof", "Fluss", "Dom"],
                },
            },
            {
                "said": [
                    ("user", "*{col} hat mir den neuen Code gegeben: {code}."),
                    ("user", "Der ist für den {room}, ich vergesse ihn ständig."),
                    ("assistant", "Notiert. Soll ich dich beim nächsten Mal daran erinnern?"),
                ],
                "ask": "Wie lautet der Code für den {room}?",
                "answer": "{code}",
                "slots": {
                    "col": ["Katrin", "Felix", "Sabine", "Deniz"],
                    "code": ["4471", "9082", "3316", "7754", "2209"],
                    "room": ["Fahrradkeller", "Serverschrank", "Archivraum", "Lagerraum"],
                },
            },
        ],
        "paraphrase": [
            {
                "said": [
                    (
                        "user",
                        "*Wir haben endlich einen {breed} aus dem Tierheim adoptiert und sie {name} genannt.",
                    )
                ],
                "ask": "Wie heißt die neue Hündin?",
                "answer": "{name}",
                "slots": {
                    "breed": ["Windhund", "Beagle", "Whippet", "Mischling"],
                    "name": ["Luna", "Frieda", "Motte", "Juno"],
                },
            },
            {
                "said": [
                    (
                        "user",
                        "*Die Physiotherapeutin sagt, ich soll wegen meines Knies {n} Wochen nicht laufen gehen.",
                    )
                ],
                "ask": "Wie lange darf ich nicht joggen?",
                "answer": "{n}",
                "slots": {"n": ["drei", "vier", "fünf", "sechs"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*Ich habe mein ganzes Erspartes zu {bank} verschoben, die Zinsen sind besser.",
                    )
                ],
                "ask": "Bei welchem Geldinstitut liegt mein Vermögen jetzt?",
                "answer": "{bank}",
                "slots": {"bank": ["Nordfin", "Helvia", "Caspian Trust", "Orbis"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*{col2} aus der Buchhaltung hört Ende des Monats auf; ihr Ausstand ist im {bar}.",
                    )
                ],
                "ask": "Wo findet die Abschiedsfeier der Kollegin statt, die kündigt?",
                "answer": "{bar}",
                "slots": {
                    "col2": ["Helene", "Marta", "Ines", "Jutta"],
                    "bar": ["Fuchs und Laterne", "Bar Alma", "Café Nova", "Rostiger Anker"],
                },
            },
        ],
        "span": [
            {
                "project": "Umzug",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "Wir haben eine Umzugsfirma für den Umzug in die neue Wohnung gebucht.",
                            ),
                            ("assistant", "Welche habt ihr genommen?"),
                            ("user", "*{a}, die nehmen auch das Klavier mit."),
                        ],
                        "{a}",
                        "Umzugsfirma",
                    ),
                    (
                        [
                            (
                                "user",
                                "Der Vermieter hat bestätigt, wann wir in die neue Wohnung können.",
                            ),
                            ("user", "*{b}, Schlüsselübergabe um neun Uhr."),
                        ],
                        "{b}",
                        "Einzug neue Wohnung Tag",
                    ),
                ],
                "ask": "Zum Umzug in die neue Wohnung: welche Umzugsfirma, und an welchem Tag?",
                "distractors": ["In Gedanken ist die neue Wohnung schon halb in Kartons."],
                "slots": {
                    "a": ["Flink Umzüge", "Atlas Transporte", "Sorgsame Hände"],
                    "b": ["Freitag, der 3.", "Der letzte Samstag im Monat", "Montag, der 12."],
                },
            },
            {
                "project": "Küchenrenovierung",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "Für die Küchenrenovierung haben wir endlich eine Firma unterschrieben.",
                            ),
                            ("assistant", "Super, welche?"),
                            ("user", "*{a}, die hatten die besten Referenzen."),
                        ],
                        "{a}",
                        "Küchenrenovierung Firma",
                    ),
                    (
                        [
                            ("user", "Wir haben gestern die Fliesen für die Küche ausgesucht."),
                            ("user", "*{b}, das wirkt wärmer als das Grau."),
                        ],
                        "{b}",
                        "Küche Fliesen",
                    ),
                    (
                        [
                            (
                                "user",
                                "Die Handwerker haben uns einen Fertigstellungstermin für die Küche genannt.",
                            ),
                            ("assistant", "Wann denn?"),
                            ("user", "*{c}, wenn die Arbeitsplatte rechtzeitig kommt."),
                        ],
                        "{c}",
                        "Küche Fertigstellung Termin",
                    ),
                    (
                        [("user", "*Die Küchenrenovierung kostet am Ende {d} Euro.")],
                        "{d}",
                        "Küchenrenovierung Kosten",
                    ),
                ],
                "ask": "Erinnere mich, was wir für die Küchenrenovierung festgelegt haben: Firma, Fliesen, Fertigstellung und Kosten.",
                "distractors": [
                    "Die Küchenrenovierung macht die ganze Wohnung staubig.",
                    "Wegen der Küche haben wir wieder bei meinen Eltern gegessen.",
                ],
                "slots": {
                    "a": ["Nordbau", "Müller & Söhne", "Hellbau"],
                    "b": ["Grüne Terrakotta", "Weiße Zellige", "Blaue Zementfliesen"],
                    "c": ["Der 14. März", "Mitte April", "Die erste Maiwoche"],
                    "d": ["18.500", "22.000", "16.900"],
                },
            },
            {
                "project": "Hochzeit meiner Schwester",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "Meine Schwester hat endlich den Ort für die Hochzeit ausgesucht.",
                            ),
                            ("user", "*{a}, oben in den Hügeln."),
                        ],
                        "{a}",
                        "Hochzeit Ort",
                    ),
                    (
                        [
                            (
                                "user",
                                "Für die Hochzeit meiner Schwester haben sie eine Band gebucht.",
                            ),
                            ("assistant", "Welche Band?"),
                            ("user", "*{b}, die spielen Swing und Soul."),
                        ],
                        "{b}",
                        "Hochzeit Band",
                    ),
                    (
                        [("user", "*Ich halte eine Rede auf der Hochzeit und fange mit {c} an.")],
                        "{c}",
                        "Hochzeit Rede",
                    ),
                ],
                "ask": "Was weiß ich schon über die Hochzeit meiner Schwester: Ort, Band und wie meine Rede anfängt?",
                "distractors": [
                    "Meine Schwester schickt mir ständig Fotos von Brautkleidern.",
                    "Meine ganze Familie redet nur noch von der Hochzeit.",
                ],
                "slots": {
                    "a": ["Quinta do Vale", "Rosenhof", "Burg Ardmore"],
                    "b": ["Die Samtstimmen", "Messinglaternen", "Sonntagsrauschen"],
                    "c": [
                        "der Geschichte vom verlorenen Fährticket",
                        "einem Gedicht unserer Großmutter",
                        "dem Zeltausflug nach Wales",
                    ],
                },
            },
        ],
        "before_after": [
            {
                "first": [
                    ("user", "*Ich habe mich bei {a} angemeldet, das ist direkt neben dem Büro.")
                ],
                "second": [
                    (
                        "user",
                        "Ich habe mein Fitnessstudio gekündigt und bin stattdessen {b} beigetreten.",
                    )
                ],
                "ask": "In welches Fitnessstudio bin ich vor {b} gegangen?",
                "answer": "{a}",
                "slots": {
                    "a": ["FitBox", "Ironworks Gym", "Pulse Studio"],
                    "b": ["der Kletterhalle", "dem Schwimmverein", "dem Boxclub"],
                },
            },
            {
                "first": [("user", "*Vorerst leitet {a} unser Team, bis wir jemanden finden.")],
                "second": [("user", "{b} hat diese Woche die Leitung unseres Teams übernommen.")],
                "ask": "Wer hat das Team vor {b} geleitet?",
                "answer": "{a}",
                "slots": {"a": ["Yusuf", "Chiara", "Bram"], "b": ["Katrin", "Felix", "Sabine"]},
            },
        ],
        "date": [
            {
                "said": [
                    (
                        "user",
                        "*Im {month} fahre ich zu einer Konferenz nach {city}, blockier bitte die Woche.",
                    )
                ],
                "ask": "Wohin reise ich im {month}?",
                "answer": "{city}",
                "shift": 2,
                "slots": {"city": ["Lissabon", "Krakau", "Valencia", "Tallinn"]},
            },
            {
                "said": [("user", "*Gestern hatten wir das Vorstandsessen im {place}.")],
                "ask": "Wo war das Vorstandsessen im {month}?",
                "answer": "{place}",
                "shift": 0,
                "slots": {"place": ["Osteria Lucca", "Glashaus", "Sakura House", "Zum Löwen"]},
            },
        ],
    },
    "es": {
        "names": ["Lucía", "Diego", "Elena"],
        "colleagues": ["Carmen", "Pablo", "Nuria", "Andrés"],
        "greet_orion": ["¡Buenos días, {n}! ", "¡Gracias, {n}! ", "Con gusto, {n}. ", "Hola {n}, "],
        "greet_person": [
            "¡Gracias Orion! ",
            "Hola Orion, ",
            "{c} te da las gracias por el último borrador. ",
            "{c} y yo lo revisamos juntos. ",
        ],
        "reply": [
            {
                "said": [
                    (
                        "user",
                        "Mi {rel} me preguntó qué debería llevar a la {event} del sábado. ¿Alguna idea?",
                    ),
                    ("assistant", "*{item} es fácil de llevar y le gusta a todo el mundo."),
                    ("user", "Perfecto, vamos con eso."),
                ],
                "ask": "¿Qué iba a llevar a la {event}?",
                "answer": "{item}",
                "slots": {
                    "rel": ["hermana", "vecina", "prima", "amiga Ana"],
                    "event": [
                        "barbacoa del lago",
                        "feria del colegio",
                        "fiesta de inauguración",
                        "merienda en el jardín",
                        "fiesta del barrio",
                    ],
                    "item": [
                        "Una tarta de limón",
                        "Una ensalada grande de cuscús",
                        "Limonada casera",
                        "Una tabla de quesos",
                        "Un bizcocho de plátano",
                    ],
                },
            },
            {
                "said": [
                    ("user", "Todavía tengo que reservar el {thing} para el {event}."),
                    ("assistant", "¿Cuál tienes en mente?"),
                    ("user", "*{name}, el que está cerca de {place}."),
                ],
                "ask": "¿Qué {thing} elegí para el {event}?",
                "answer": "{name}",
                "slots": {
                    "thing": ["hotel", "fotógrafo", "catering"],
                    "event": [
                        "arranque de ventas",
                        "aniversario de boda",
                        "retiro del equipo",
                        "reencuentro familiar",
                    ],
                    "name": [
                        "Villa Serena",
                        "Estudio Cernícalo",
                        "Luces del Puerto",
                        "Casa Arce",
                        "Garza Azul",
                    ],
                    "place": ["el puerto viejo", "la estación", "el río", "la catedral"],
                },
            },
            {
                "said": [
                    ("user", "*{col} me dio el código nuevo: {code}."),
                    ("user", "Es para el {room}, siempre se me olvida."),
                    ("assistant", "Anotado. ¿Te lo recuerdo la próxima vez?"),
                ],
                "ask": "¿Cuál es el código del {room}?",
                "answer": "{code}",
                "slots": {
                    "col": ["Carmen", "Pablo", "Nuria", "Andrés"],
                    "code": ["4471", "9082", "3316", "7754", "2209"],
                    "room": ["cuarto de bicicletas", "armario del servidor", "archivo", "almacén"],
                },
            },
        ],
        "paraphrase": [
            {
                "said": [
                    (
                        "user",
                        "*Por fin adoptamos una {breed} en la protectora y la llamamos {name}.",
                    )
                ],
                "ask": "¿Cómo se llama la perrita nueva?",
                "answer": "{name}",
                "slots": {
                    "breed": ["galga", "beagle", "whippet", "mestiza"],
                    "name": ["Luna", "Canela", "Trufa", "Nala"],
                },
            },
            {
                "said": [
                    ("user", "*El fisio me dijo que no corra durante {n} semanas por la rodilla.")
                ],
                "ask": "¿Cuánto tiempo no puedo salir a trotar?",
                "answer": "{n}",
                "slots": {"n": ["tres", "cuatro", "cinco", "seis"]},
            },
            {
                "said": [("user", "*Pasé todos mis ahorros a {bank}, el interés es mejor.")],
                "ask": "¿En qué banco está mi dinero ahora?",
                "answer": "{bank}",
                "slots": {"bank": ["Nordfin", "Helvia", "Caspian Trust", "Orbis"]},
            },
            {
                "said": [
                    (
                        "user",
                        "*{col2} de contabilidad se va a final de mes; su copa de despedida es en {bar}.",
                    )
                ],
                "ask": "¿Dónde es la fiesta de adiós de la compañera que renuncia?",
                "answer": "{bar}",
                "slots": {
                    "col2": ["Elena", "Marta", "Inés", "Rocío"],
                    "bar": ["El Zorro y la Linterna", "Bar Alma", "Café Nova", "El Ancla Oxidada"],
                },
            },
        ],
        "span": [
            {
                "project": "mudanza",
                "parts": [
                    (
                        [
                            ("user", "Reservamos una empresa para la mudanza al piso nuevo."),
                            ("assistant", "¿Cuál elegisteis?"),
                            ("user", "*{a}, también se llevan el piano."),
                        ],
                        "{a}",
                        "empresa mudanza",
                    ),
                    (
                        [
                            ("user", "El casero confirmó cuándo podemos entrar en el piso nuevo."),
                            ("user", "*{b}, entrega de llaves a las nueve."),
                        ],
                        "{b}",
                        "día entrar piso nuevo",
                    ),
                ],
                "ask": "Para la mudanza al piso nuevo: ¿qué empresa y qué día?",
                "distractors": ["En mi cabeza, el piso nuevo ya está medio en cajas."],
                "slots": {
                    "a": ["Mudanzas Veloz", "Transportes Atlas", "Manos Cuidadosas"],
                    "b": ["El viernes 3", "El último sábado del mes", "El lunes 12"],
                },
            },
            {
                "project": "reforma de la cocina",
                "parts": [
                    (
                        [
                            (
                                "user",
                                "Para la reforma de la cocina por fin firmamos con una empresa.",
                            ),
                            ("assistant", "¡Genial! ¿Con cuál?"),
                            ("user", "*{a}, tenían las mejores referencias."),
                        ],
                        "{a}",
                        "reforma cocina empresa",
                    ),
                    (
                        [
                            ("user", "Ayer elegimos los azulejos de la cocina."),
                            ("user", "*{b}, queda más cálido que el gris."),
                        ],
                        "{b}",
                        "azulejos cocina",
                    ),
                    (
                        [
                            ("user", "Los obreros nos dieron una fecha de fin para la cocina."),
                            ("assistant", "¿Cuándo?"),
                            ("user", "*{c}, si la encimera llega a tiempo."),
                        ],
                        "{c}",
                        "fecha fin cocina",
                    ),
                    (
                        [("user", "*La reforma de la cocina costará {d} euros al final.")],
                        "{d}",
                        "coste reforma cocina",
                    ),
                ],
                "ask": "Recuérdame lo que acordamos para la reforma de la cocina: la empresa, los azulejos, la fecha de fin y el coste.",
                "distractors": [
                    "La reforma de la cocina llena todo el piso de polvo.",
                    "Volvimos a comer en casa de mis padres por las obras de la cocina.",
                ],
                "slots": {
                    "a": ["Nordbau", "García e Hijos", "Obras Claras"],
                    "b": ["Terracota verde", "Zellige blanco", "Baldosa hidráulica azul"],
                    "c": ["El 14 de marzo", "A mediados de abril", "La primera semana de mayo"],
                    "d": ["18.500", "22.000", "16.900"],
                },
            },
            {
                "project": "boda de mi hermana",
                "parts": [
                    (
                        [
                            ("user", "Mi hermana por fin eligió el sitio de la boda."),
                            ("user", "*{a}, arriba en las colinas."),
                        ],
                        "{a}",
                        "lugar boda",
                    ),
                    (
                        [
                            ("user", "Para la boda de mi hermana reservaron un grupo."),
                            ("assistant", "¿Qué grupo?"),
                            ("user", "*{b}, tocan swing y soul."),
                        ],
                        "{b}",
                        "grupo boda",
                    ),
                    (
                        [("user", "*Voy a dar un discurso en la boda y empezaré con {c}.")],
                        "{c}",
                        "discurso boda",
                    ),
                ],
                "ask": "¿Qué sé hasta ahora de la boda de mi hermana: el sitio, el grupo y cómo empieza mi discurso?",
                "distractors": [
                    "Mi hermana no para de mandarme fotos de vestidos de novia.",
                    "Mi familia solo habla de la boda.",
                ],
                "slots": {
                    "a": ["Quinta do Vale", "Finca Los Rosales", "Castillo de Ardmore"],
                    "b": ["Las Voces de Terciopelo", "Faroles de Latón", "Domingo Estático"],
                    "c": [
                        "la historia del billete de ferry perdido",
                        "un poema de nuestra abuela",
                        "la acampada en Gales",
                    ],
                },
            },
        ],
        "before_after": [
            {
                "first": [("user", "*Me apunté a {a}, está justo al lado de la oficina.")],
                "second": [("user", "Me di de baja del gimnasio y me apunté {b}.")],
                "ask": "¿A qué gimnasio iba antes {b}?",
                "answer": "{a}",
                "slots": {
                    "a": ["FitBox", "Ironworks Gym", "Pulse Studio"],
                    "b": ["al rocódromo", "al club de natación", "al club de boxeo"],
                },
            },
            {
                "first": [
                    ("user", "*Por ahora {a} dirige nuestro equipo mientras buscamos a alguien.")
                ],
                "second": [("user", "{b} asumió la dirección de nuestro equipo esta semana.")],
                "ask": "¿Quién dirigía el equipo antes de {b}?",
                "answer": "{a}",
                "slots": {"a": ["Yusuf", "Chiara", "Bram"], "b": ["Carmen", "Pablo", "Nuria"]},
            },
        ],
        "date": [
            {
                "said": [
                    ("user", "*En {month} me voy a {city} a una conferencia, bloquea esa semana.")
                ],
                "ask": "¿A dónde viajo en {month}?",
                "answer": "{city}",
                "shift": 2,
                "slots": {"city": ["Lisboa", "Cracovia", "Oporto", "Tallin"]},
            },
            {
                "said": [("user", "*Ayer tuvimos la cena del consejo en {place}.")],
                "ask": "¿Dónde fue la cena del consejo en {month}?",
                "answer": "{place}",
                "shift": 0,
                "slots": {
                    "place": ["Osteria Lucca", "El Invernadero", "Sakura House", "Casa Pepa"]
                },
            },
        ],
    },
    "ja": {
        "names": ["さくら", "健太", "美咲"],
        "colleagues": ["田中さん", "佐藤さん", "鈴木さん", "高橋さん"],
        "greet_orion": [
            "おはようございます、{n}さん。",
            "ありがとうございます、{n}さん。",
            "どういたしまして、{n}さん。",
            "{n}さん、",
        ],
        "greet_person": [
            "ありがとう、Orion。",
            "Orion、",
            "{c}が前回の下書きのお礼を言っていました。",
            "{c}と一緒に見ました。",
        ],
        "reply": [
            {
                "said": [
                    (
                        "user",
                        "{rel}に土曜日の{event}に何を持っていけばいいか聞かれました。何かいい案はありますか？",
                    ),
                    ("assistant", "*{item}なら持ち運びやすくて、みんなに喜ばれますよ。"),
                    ("user", "いいですね、それにします。"),
                ],
                "ask": "{event}には何を持っていくことになっていましたか？",
                "answer": "{item}",
                "slots": {
                    "rel": ["姉", "隣の人", "いとこ", "友達のアナ"],
                    "event": [
                        "湖でのバーベキュー",
                        "学校のバザー",
                        "新居祝い",
                        "庭のピクニック",
                        "読書会",
                    ],
                    "item": [
                        "レモンタルト",
                        "クスクスのサラダ",
                        "手作りレモネード",
                        "チーズの盛り合わせ",
                        "バナナブレッド",
                    ],
                },
            },
            {
                "said": [
                    ("user", "{event}の{thing}をまだ予約しないといけません。"),
                    ("assistant", "どこにするか考えていますか？"),
                    ("user", "*{name}です。{place}の近くのところ。"),
                ],
                "ask": "{event}の{thing}はどこを選びましたか？",
                "answer": "{name}",
                "slots": {
                    "thing": ["ホテル", "写真スタジオ", "ケータリング"],
                    "event": ["営業キックオフ", "結婚記念日", "チーム合宿", "家族の集まり"],
                    "name": [
                        "ヴィラ・セレーナ",
                        "スタジオ隼",
                        "港の灯",
                        "メープルコート",
                        "青鷺館",
                    ],
                    "place": ["古い港", "駅", "川", "大聖堂"],
                },
            },
            {
                "said": [
                    ("user", "*{col}から新しい暗証番号をもらいました：{code}。"),
                    ("user", "{room}のです。いつも忘れてしまいます。"),
                    ("assistant", "メモしました。次に聞かれたらお伝えしますね。"),
                ],
                "ask": "{room}の番号は何でしたっけ？",
                "answer": "{code}",
                "slots": {
                    "col": ["田中さん", "佐藤さん", "鈴木さん", "高橋さん"],
                    "code": ["4471", "9082", "3316", "7754", "2209"],
                    "room": ["自転車置き場", "サーバーラック", "書庫", "倉庫"],
                },
            },
        ],
        "paraphrase": [
            {
                "said": [("user", "*保護施設から{breed}を迎えて、{name}と名付けました。")],
                "ask": "新しいワンちゃんの呼び名は？",
                "answer": "{name}",
                "slots": {
                    "breed": ["グレーハウンド", "ビーグル", "ウィペット", "雑種の子"],
                    "name": ["ルナ", "こはく", "もみじ", "ハナ"],
                },
            },
            {
                "said": [
                    (
                        "user",
                        "*膝のせいで、理学療法士に{n}週間はランニングを控えるよう言われました。",
                    )
                ],
                "ask": "ジョギングはどれくらい禁止ですか？",
                "answer": "{n}",
                "slots": {"n": ["三", "四", "五", "六"]},
            },
            {
                "said": [("user", "*貯金を全部{bank}に移しました。金利がいいので。")],
                "ask": "私のお金は今どの銀行にありますか？",
                "answer": "{bank}",
                "slots": {"bank": ["ノルドフィン", "ヘルビア", "カスピアン信託", "オルビス"]},
            },
            {
                "said": [("user", "*経理の{col2}が月末で退職します。送別会は{bar}です。")],
                "ask": "辞める同僚のお別れパーティーの場所は？",
                "answer": "{bar}",
                "slots": {
                    "col2": ["山口さん", "中村さん", "小川さん", "松本さん"],
                    "bar": ["狐と灯", "バー・アルマ", "カフェ・ノヴァ", "錆びた錨"],
                },
            },
        ],
        "span": [
            {
                "project": "引っ越し",
                "parts": [
                    (
                        [
                            ("user", "新しい部屋への引っ越し業者を予約しました。"),
                            ("assistant", "どこにしましたか？"),
                            ("user", "*{a}です。ピアノも運んでくれます。"),
                        ],
                        "{a}",
                        "引っ越し 業者",
                    ),
                    (
                        [
                            ("user", "大家さんから新しい部屋に入れる日の連絡がありました。"),
                            ("user", "*{b}です。鍵の受け渡しは朝九時。"),
                        ],
                        "{b}",
                        "新しい部屋 入居日",
                    ),
                ],
                "ask": "新しい部屋への引っ越しは、どの業者で、何日ですか？",
                "distractors": ["新しい部屋のことを考えると、頭の中はもう段ボールだらけです。"],
                "slots": {
                    "a": ["スピード引越センター", "アトラス運送", "まごころ便"],
                    "b": ["三日の金曜日", "月末の土曜日", "十二日の月曜日"],
                },
            },
            {
                "project": "キッチンのリフォーム",
                "parts": [
                    (
                        [
                            ("user", "キッチンのリフォームで、やっと業者と契約しました。"),
                            ("assistant", "よかったですね、どこにしたんですか？"),
                            ("user", "*{a}です。評判が一番よかったので。"),
                        ],
                        "{a}",
                        "キッチン リフォーム 業者",
                    ),
                    (
                        [
                            ("user", "昨日キッチンのタイルを選びました。"),
                            ("user", "*{b}にしました。グレーより温かい感じです。"),
                        ],
                        "{b}",
                        "キッチン タイル",
                    ),
                    (
                        [
                            ("user", "職人さんからキッチンの完成予定日を聞きました。"),
                            ("assistant", "いつですか？"),
                            ("user", "*{c}です。天板が間に合えばですが。"),
                        ],
                        "{c}",
                        "キッチン 完成予定日",
                    ),
                    (
                        [("user", "*キッチンのリフォームは最終的に{d}円かかります。")],
                        "{d}",
                        "キッチン リフォーム 費用",
                    ),
                ],
                "ask": "キッチンのリフォームで決めたこと（業者、タイル、完成予定日、費用）を教えてください。",
                "distractors": [
                    "キッチンのリフォームで家中がほこりっぽいです。",
                    "キッチンの工事のせいで、また実家でご飯を食べました。",
                ],
                "slots": {
                    "a": ["北光建設", "山本工務店", "明和ビルド"],
                    "b": ["緑のテラコッタ", "白いゼリージュ", "青いセメントタイル"],
                    "c": ["三月十四日", "四月の中旬", "五月の第一週"],
                    "d": ["185万", "220万", "169万"],
                },
            },
            {
                "project": "姉の結婚式",
                "parts": [
                    (
                        [
                            ("user", "姉がやっと結婚式の会場を決めました。"),
                            ("user", "*{a}です。丘の上のところ。"),
                        ],
                        "{a}",
                        "結婚式 会場",
                    ),
                    (
                        [
                            ("user", "姉の結婚式でバンドを予約したそうです。"),
                            ("assistant", "どのバンドですか？"),
                            ("user", "*{b}です。スウィングとソウルを演奏します。"),
                        ],
                        "{b}",
                        "結婚式 バンド",
                    ),
                    (
                        [("user", "*結婚式でスピーチをするので、{c}から始めます。")],
                        "{c}",
                        "結婚式 スピーチ",
                    ),
                ],
                "ask": "姉の結婚式について、会場、バンド、私のスピーチの出だしで今わかっていることは？",
                "distractors": [
                    "姉がウェディングドレスの写真をずっと送ってきます。",
                    "家族はみんな結婚式の話ばかりしています。",
                ],
                "slots": {
                    "a": ["キンタ・ド・ヴァレ", "ローズウッド邸", "アードモア城"],
                    "b": ["ベルベットトーンズ", "真鍮ランタン", "サンデースタティック"],
                    "c": ["なくしたフェリーの切符の話", "祖母の詩", "ウェールズでのキャンプの話"],
                },
            },
        ],
        "before_after": [
            {
                "first": [("user", "*{a}に入会しました。会社のすぐ隣です。")],
                "second": [("user", "ジムの会員をやめて、代わりに{b}に入りました。")],
                "ask": "{b}の前はどのジムに通っていましたか？",
                "answer": "{a}",
                "slots": {
                    "a": ["フィットボックス", "アイアンワークス", "パルススタジオ"],
                    "b": ["クライミングジム", "スイミングクラブ", "ボクシングジム"],
                },
            },
            {
                "first": [("user", "*後任が見つかるまで、今は{a}がチームをまとめています。")],
                "second": [("user", "今週から{b}がチームリーダーになりました。")],
                "ask": "{b}の前は誰がチームを率いていましたか？",
                "answer": "{a}",
                "slots": {
                    "a": ["ユスフさん", "キアラさん", "ブラムさん"],
                    "b": ["田中さん", "佐藤さん", "鈴木さん"],
                },
            },
        ],
        "date": [
            {
                "said": [
                    ("user", "*{month}は学会で{city}に行くので、その週は空けておいてください。")
                ],
                "ask": "{month}はどこに出張しますか？",
                "answer": "{city}",
                "shift": 2,
                "slots": {"city": ["リスボン", "クラクフ", "バレンシア", "タリン"]},
            },
            {
                "said": [("user", "*昨日、{place}で役員会の夕食がありました。")],
                "ask": "{month}の役員会の夕食はどこでしたか？",
                "answer": "{place}",
                "shift": 0,
                "slots": {
                    "place": ["オステリア・ルッカ", "グラスハウス", "さくら亭", "炭火焼き大和"]
                },
            },
        ],
    },
}

LANGUAGES = ["en", "fr", "de", "es", "ja"]


def _ts(moment: datetime, serial: int) -> str:
    return f"{int(moment.timestamp())}.{serial:06d}"


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values) if "{" in text else text


def _pick(
    rng: random.Random, slots: dict[str, list[str]], used: set[tuple[str, str]]
) -> dict[str, str]:
    """A value for each slot, preferring values this person has not had yet (so that two
    questions of one template ask about different things)."""
    values = {}
    for name, options in slots.items():
        fresh = [o for o in options if (name, o) not in used] or options
        values[name] = rng.choice(fresh)
        used.add((name, values[name]))
    return values


class _Builder:
    """One person's conversations: filler sessions about work topics, with the exchanges
    of the questions placed into them."""

    def __init__(self, language: str, number: int, rng: random.Random) -> None:
        self.language, self.rng = language, rng
        self.user_id = f"U0PASS{number:04d}"
        scenes = SCENES[language]
        self.name = scenes["names"][number // len(LANGUAGES)]
        self.inserts: dict[int, list[list[tuple[str, str]]]] = {}
        spacing = 365 / CONVERSATIONS
        self.begins = [
            START + timedelta(days=i * spacing + rng.random() * spacing * 0.3)
            for i in range(CONVERSATIONS)
        ]

    def place(self, at: int, exchange: list[tuple[str, str]]) -> None:
        self.inserts.setdefault(at, []).append(exchange)

    def build(self) -> tuple[list[dict[str, Any]], dict[tuple[int, int, int], str]]:
        """The conversations, and where each placed exchange's messages landed:
        (conversation, exchange, message) → ts."""
        filler, scenes, rng = FILLER[self.language], SCENES[self.language], self.rng
        conversations, where = [], {}
        for i, begin in enumerate(self.begins):
            topic = rng.choice(filler["topics"])
            qualifier = rng.choice(filler["qualifiers"])
            title = f"{topic} — {qualifier}" if self.language != "ja" else f"{qualifier}の{topic}"
            messages: list[dict[str, str]] = []
            sessions = rng.randint(2, 3)
            rounds = [rng.randint(3, 4) for _ in range(sessions)]
            total = sum(rounds)
            placed = self.inserts.get(i, [])
            slots = sorted(rng.sample(range(1, total), min(len(placed), total - 1)))
            serial, round_no = 0, 0
            for session in range(sessions):
                moment = begin + timedelta(
                    days=session * rng.randint(1, 3), minutes=rng.randint(0, 600)
                )
                for _ in range(rounds[session]):
                    if round_no in slots:
                        n = slots.index(round_no)
                        for m, (role, text) in enumerate(placed[n]):
                            serial += 1
                            ts = _ts(moment, serial)
                            where[(i, n, m)] = ts
                            messages.append(
                                {"role": role, "text": text, "at": moment.isoformat(), "ts": ts}
                            )
                            moment += timedelta(minutes=rng.randint(1, 3))
                    said = rng.choice(filler["person"]).format(t=topic, q=qualifier)
                    if rng.random() < 0.35:
                        said = (
                            rng.choice(scenes["greet_person"]).format(
                                c=rng.choice(scenes["colleagues"])
                            )
                            + said
                        )
                    serial += 1
                    messages.append(
                        {
                            "role": "user",
                            "text": said,
                            "at": moment.isoformat(),
                            "ts": _ts(moment, serial),
                        }
                    )
                    moment += timedelta(minutes=rng.randint(1, 4))
                    answer = " ".join(
                        rng.choice(filler["orion"]).format(t=topic, q=qualifier)
                        for _ in range(rng.randint(1, 2))
                    )
                    if rng.random() < 0.5:
                        answer = rng.choice(scenes["greet_orion"]).format(n=self.name) + answer
                    serial += 1
                    messages.append(
                        {
                            "role": "assistant",
                            "text": answer,
                            "at": moment.isoformat(),
                            "ts": _ts(moment, serial),
                        }
                    )
                    moment += timedelta(minutes=rng.randint(2, 30))
                    round_no += 1
            conversations.append(
                {
                    "thread_ts": _ts(begin, i + 1),
                    "title": title,
                    "summary": filler["summary"].format(t=topic, q=qualifier),
                    "messages": messages,
                }
            )
        return conversations, where


def _exchange(
    said: list[tuple[str, str]], values: dict[str, str]
) -> tuple[list[tuple[str, str]], list[int]]:
    """The exchange's messages filled in, and which of them are evidence (`*`)."""
    messages, evidence = [], []
    for m, (role, text) in enumerate(said):
        if text.startswith("*"):
            evidence.append(m)
            text = text[1:]
        messages.append((role, _fill(text, values)))
    return messages, evidence


def _person(language: str, number: int, rng: random.Random) -> dict[str, Any]:
    scenes = SCENES[language]
    builder = _Builder(language, number, rng)
    free = list(range(CONVERSATIONS))
    rng.shuffle(free)
    # Each question: (kind, text, parts, [(conversation, exchange placed, message, answer)], month)
    pending: list[
        tuple[str, str, list[str], list[tuple[int, int, int, str]], tuple[int, int] | None]
    ] = []
    used: set[tuple[str, str]] = set()

    def put(
        conversation: int, said: list[tuple[str, str]], values: dict[str, str]
    ) -> list[tuple[int, int, int]]:
        messages, evidence = _exchange(said, values)
        builder.place(conversation, messages)
        n = len(builder.inserts[conversation]) - 1
        return [(conversation, n, m) for m in evidence]

    def conversation_for(earliest: int = 0, latest: int = CONVERSATIONS - 1) -> int:
        for at in free:
            if earliest <= at <= latest:
                free.remove(at)
                return at
        return rng.randint(earliest, latest)  # shared with another exchange

    for template in scenes["reply"]:
        for _ in range(2):
            values = _pick(rng, template["slots"], used)
            places = put(conversation_for(), template["said"], values)
            answer = _fill(template["answer"], values)
            pending.append(
                ("reply", _fill(template["ask"], values), [], [(*p, answer) for p in places], None)
            )
    for template in scenes["paraphrase"]:
        values = _pick(rng, template["slots"], used)
        places = put(conversation_for(), template["said"], values)
        answer = _fill(template["answer"], values)
        pending.append(
            ("paraphrase", _fill(template["ask"], values), [], [(*p, answer) for p in places], None)
        )
    for template in scenes["span"]:
        values = _pick(rng, template["slots"], used)
        parts = template["parts"]
        evidence = []
        for said, answer, _ in parts:
            places = put(conversation_for(), said, values)
            evidence += [(*p, _fill(answer, values)) for p in places]
        for text in template["distractors"]:
            builder.place(conversation_for(), [("user", text)])
        ask = template["ask"]
        pending.append(("span", ask, [query for _, _, query in parts], evidence, None))
    for template in scenes["before_after"]:
        values = _pick(rng, template["slots"], used)
        first = conversation_for(0, CONVERSATIONS // 2 - 1)
        second = conversation_for(CONVERSATIONS // 2, CONVERSATIONS - 1)
        answer = _fill(template["answer"], values)
        evidence = [(*p, answer) for p in put(first, template["first"], values)]
        changed = [
            (*p, _fill(template["second"][0][1], values))
            for p in put(second, [("user", "*" + template["second"][0][1])], values)
        ]
        pending.append(
            ("before_after", _fill(template["ask"], values), [], evidence + changed, None)
        )
    for template in scenes["date"]:
        months: set[int] = set()
        for _ in range(2):
            values = _pick(rng, template["slots"], used)
            # Two questions of a template never name the same month.
            at = next(
                (
                    a
                    for a in free
                    if 1 <= a <= CONVERSATIONS - 8 and builder.begins[a].month not in months
                ),
                None,
            )
            if at is None:
                continue
            free.remove(at)
            months.add(builder.begins[at].month)
            month = (builder.begins[at].month - 1 + template["shift"]) % 12
            values["month"] = MONTHS[language][month]
            places = put(at, template["said"], values)
            answer = _fill(template["answer"], values)
            year = 2026 + (builder.begins[at].month - 1 + template["shift"]) // 12
            first = datetime(year, month + 1, 1, tzinfo=UTC)
            last = datetime(year + (month + 1) // 12, (month + 1) % 12 + 1, 1, tzinfo=UTC)
            span = (int(first.timestamp()), int(last.timestamp()))
            kind = "date" if template["shift"] == 0 else "date_ahead"
            pending.append(
                (kind, _fill(template["ask"], values), [], [(*p, answer) for p in places], span)
            )
    conversations, where = builder.build()
    questions = []
    for kind, text, parts, evidence, month in pending:
        questions.append(
            {
                "kind": kind,
                "text": text,
                "parts": parts,
                "evidence": [
                    {
                        "thread": conversations[c]["thread_ts"],
                        "ts": where[(c, n, m)],
                        "answer": answer,
                    }
                    for c, n, m, answer in evidence
                ],
                "month": list(month) if month else None,
            }
        )
    return {
        "user_id": builder.user_id,
        "language": language,
        "name": builder.name,
        "conversations": conversations,
        "questions": questions,
    }


def generate() -> dict[str, Any]:
    rng = random.Random(SEED)
    people = [
        _person(language, n * len(LANGUAGES) + i, rng)
        for n in range(PER_LANGUAGE)
        for i, language in enumerate(LANGUAGES)
    ]
    return {"seed": SEED, "people": people}


def render(data: dict[str, Any]) -> bytes:
    text = json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True)
    return gzip.compress(text.encode(), mtime=0)


def load() -> dict[str, Any]:
    """The frozen set, as it was written before measuring."""
    loaded: dict[str, Any] = json.loads(gzip.decompress(PATH.read_bytes()))
    return loaded


if __name__ == "__main__":
    made = render(generate())
    if "--write" in sys.argv:
        PATH.parent.mkdir(exist_ok=True)
        PATH.write_bytes(made)
        print(f"wrote {PATH} ({len(made)} bytes)")
    else:
        same = PATH.exists() and gzip.decompress(PATH.read_bytes()) == gzip.decompress(made)
        print(
            "the generator makes the frozen set"
            if same
            else "the generator and the frozen set differ"
        )
        sys.exit(0 if same else 1)
