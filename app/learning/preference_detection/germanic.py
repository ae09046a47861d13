"""German and Dutch: the verb first in an instruction ("Nenn mich Camille", "Noem me Camille"),
"always" / "never" beside it, a statement about oneself starting with "ich" / "ik"; the verb
lists hold the imperatives (du, Sie) that make a sentence an instruction to Orion."""

from __future__ import annotations

from app.learning.preference_detection.grammar import (
    LANGUAGE_WORD,
    LATIN_NAME,
    TEAM,
    TIMEZONE,
    Forms,
    Grammar,
    flags,
    openers,
    phrases,
    word_set,
    words,
)

# --- German -----------------------------------------------------------------------------------

_DE_VERBS = words(
    """
    benutze benutz benutzen_Sie verwende verwend verwenden_Sie nutze nutz nutzen_Sie
    antworte antworten_Sie schreib schreibe schreiben_Sie gib geben_Sie setze setz setzen_Sie
    zitiere zitier zitieren_Sie nenne nenn nennen_Sie füge füg fügen_Sie mach mache
    machen_Sie erkläre erklär erklären_Sie fasse fass fassen_Sie prüfe prüf prüfen_Sie
    zeige zeig zeigen_Sie beginne beginn beginnen_Sie übersetze übersetz übersetzen_Sie
    vermeide vermeid vermeiden_Sie schicke schick schicken_Sie sende erwähne erwähn
    erwähnen_Sie sprich sprechen_Sie sei seien_Sie duze duz sieze siez runde rund
    formatiere formatier halte halt halten_Sie liste füge_hinzu
    """
)
_DE_NAME_CALL = r"(?:nenn|nenne|nennen sie|nennt)"

GERMAN = Grammar(
    language="German",
    forms=(
        Forms()
        .add("name", rf"{_DE_NAME_CALL} mich (?:lieber |einfach |doch |ruhig )?{LATIN_NAME}")
        .add(
            "name",
            r"(?:du kannst|sie können|ihr könnt) mich (?:gerne |gern |einfach |ruhig )?"
            rf"{LATIN_NAME} nennen",
        )
        .add("name", rf"ich hei(?:ß|ss)e {LATIN_NAME}")
        .add("name", rf"mein (?:vor)?name ist {LATIN_NAME}")
        .add("timezone", rf"meine zeitzone ist {TIMEZONE}")
        .add("timezone", rf"ich bin in der zeitzone {TIMEZONE}")
        # After an opener the verb comes second: "Eigentlich ist meine Zeitzone …".
        .add("timezone", rf"ist meine zeitzone {TIMEZONE}")
        .add("team", rf"ich (?:bin|arbeite) im team {TEAM}")
        .add("team", r"ich (?:bin|arbeite) im (?P<value>[\w&/]+)-team")
        .add("team", rf"ich gehöre zum team {TEAM}")
        .add("team", r"ich gehöre zum (?P<value>[\w&/]+)-team")
        .add("team", rf"mein team ist (?:das )?(?:team )?{TEAM}")
        .add(
            "language",
            r"(?:antworte|antworten sie|antwortet|schreib|schreibe|schreiben sie|sprich"
            r"|sprechen sie|rede)(?: mit mir| mir)?(?: bitte)?(?: immer)?(?: nur)? (?:auf|in) "
            rf"{LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"ich (?:hätte|möchte) (?:die )?antworten (?:lieber |gern |gerne |bitte )?(?:auf|in) "
            rf"{LANGUAGE_WORD}",
        )
        .add("language", rf"meine (?:bevorzugte )?sprache ist {LANGUAGE_WORD}")
        .add(
            "prefers",
            r"ich (?:bevorzuge|hätte lieber|mag lieber) (?P<value>(?:die|den|das|der|dem|eine?"
            r"|einen|kurze|lange|knappe|ausführliche|(?-i:[A-ZÄÖÜ])).{2,})",
        )
        .add("response_style", r"(?:halte|halt|halten sie) (?:deine |die |ihre )?antworten .+")
        .add("response_style", r"ich mag (?:kurze|knappe|lange|ausführliche|einfache) antworten")
        .add("never", rf"(?:{_DE_VERBS}) (?:[\w'-]+ )?(?:bitte )?(?:nie|niemals|nie wieder) .+")
        .add("never", rf"(?:{_DE_VERBS}) (?:bitte )?keine .+ mehr")
        .add("always", rf"(?:{_DE_VERBS}) (?:[\w'-]+ )?(?:bitte )?immer .+")
        .add("never", rf"(?:{_DE_VERBS}) (?:bitte )?(?:keine?n?|nicht) .+", durable_only=True)
        .add("always", rf"(?:{_DE_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
        bitte auch und also ach ok okay übrigens eigentlich ab_jetzt ab_sofort von_nun_an
        künftig zukünftig in_Zukunft merk_dir merk_dir_bitte merke_dir zur_Info hallo hi
        hey ähm danke außerdem lieber
        """,
        no_comma="nein",
    ),
    fillers=phrases("bitte danke ab_jetzt von_nun_an ab_sofort künftig in_zukunft"),
    marks=flags(r"\b(?:der|die|das|den|dem|immer|nie|niemals|keine|mir|bitte|auf)\b"),
    durable=flags(r"\b(?:ab jetzt|ab sofort|von nun an|künftig|zukünftig|in zukunft)\b"),
    reported=r"\b(?:sagte|sagt|sagten|meinte|meint|gesagt|laut (?:ihm|ihr|ihnen))\b",
    not_names=word_set(
        """
        nicht nie niemals morgen später wenn falls nachher heute jetzt gleich bald an
        zurück bitte mal doch montag dienstag mittwoch donnerstag freitag samstag sonntag
        der die das ein eine so wieder nennen
        """
    ),
    style=flags(
        r"\b(?:antworten|antwort|kurze?n?|knappe?n?|ausführliche?n?|listen|liste"
        r"|stichpunkte?n?|aufzählungen|tabellen?|ton|förmlich|locker|beispiele?"
        r"|zusammenfassungen?|absätze|emojis?)\b"
    ),
)

# --- Dutch ------------------------------------------------------------------------------------

_NL_VERBS = words(
    """
    gebruik antwoord schrijf geef zet citeer voeg maak leg vat controleer toon laat begin
    eindig vertaal vermijd stuur noem spreek praat wees rond vermeld houd hou
    """
)

DUTCH = Grammar(
    language="Dutch",
    forms=(
        Forms()
        .add("name", rf"noem (?:me|mij) (?:maar |gewoon |liever )?{LATIN_NAME}")
        .add(
            "name",
            rf"(?:je mag|u mag|je kunt|u kunt) (?:me|mij) (?:maar |gewoon )?{LATIN_NAME} noemen",
        )
        .add("name", rf"ik heet {LATIN_NAME}")
        .add("name", rf"mijn (?:voor)?naam is {LATIN_NAME}")
        .add("timezone", rf"mijn tijdzone is {TIMEZONE}")
        .add("timezone", rf"ik zit in de tijdzone {TIMEZONE}")
        .add("timezone", rf"is mijn tijdzone {TIMEZONE}")
        .add("team", rf"ik (?:zit|werk) (?:in|bij) (?:het )?team {TEAM}")
        .add("team", r"ik (?:zit|werk) (?:in|bij) het (?P<value>[\w&/]+)-team")
        .add("team", rf"ik hoor bij (?:het )?team {TEAM}")
        .add("team", rf"mijn team is (?:het )?(?:team )?{TEAM}")
        .add(
            "language",
            r"(?:antwoord|schrijf|spreek|praat)(?: me| mij| tegen me| met me)?(?: altijd)?"
            rf"(?: alleen)? in (?:het )?{LANGUAGE_WORD}(?: met me| met mij| tegen me| tegen mij)?",
        )
        .add("language", rf"(?:spreek|praat) {LANGUAGE_WORD} (?:met|tegen) (?:me|mij)")
        .add("language", rf"mijn (?:voorkeurs)?taal is (?:het )?{LANGUAGE_WORD}")
        .add(
            "language",
            rf"ik (?:heb|wil) (?:de )?antwoorden (?:liever |graag )?in (?:het )?{LANGUAGE_WORD}",
        )
        .add(
            "prefers",
            r"ik (?:heb liever|geef de voorkeur aan|prefereer) (?P<value>(?:de|het|een|korte"
            r"|lange|beknopte|(?=(?:tabellen|lijsten|voorbeelden|opsommingstekens)\b)"
            r"|(?-i:[A-Z])).{2,})",
        )
        .add("prefers", r"mijn voorkeur gaat uit naar (?P<value>.{2,})")
        .add("response_style", r"(?:houd|hou) (?:je |jouw |de |uw )?antwoorden .+")
        .add("response_style", r"ik hou van (?:korte|lange|beknopte|duidelijke) antwoorden")
        .add("never", rf"(?:{_NL_VERBS}) (?:me |mij )?(?:nooit|nooit meer) .+")
        .add("never", rf"(?:{_NL_VERBS}) (?:me |mij )?geen .+ meer")
        .add("always", rf"(?:{_NL_VERBS}) (?:me |mij )?altijd .+")
        .add("never", rf"(?:{_NL_VERBS}) (?:me |mij )?(?:geen|niet) .+", durable_only=True)
        .add("always", rf"(?:{_NL_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
        alsjeblieft alstublieft ook en dus oh ok oké trouwens eigenlijk vanaf_nu voortaan
        van_nu_af_aan in_de_toekomst onthoud onthoud_dat ter_info hoi hallo hey graag liever
        """,
        no_comma="nee",
    ),
    fillers=phrases(
        """
        alsjeblieft alstublieft graag bedankt dank_je vanaf_nu voortaan in_de_toekomst
        """
    ),
    marks=flags(r"\b(?:de|het|een|altijd|nooit|geen|je|mijn|in)\b"),
    durable=flags(r"\b(?:vanaf nu|voortaan|van nu af aan|in de toekomst)\b"),
    reported=r"\b(?:zei|zegt|zeiden|gezegd|volgens (?:hem|haar|hen))\b",
    not_names=word_set(
        """
        niet nooit morgen later als wanneer straks vandaag nu zo terug maar even
        maandag dinsdag woensdag donderdag vrijdag zaterdag zondag het een geen noemen
        """
    ),
    style=flags(
        r"\b(?:antwoorden|antwoord|korte|beknopte|uitgebreide|lijsten|lijst"
        r"|opsommingstekens|tabellen|toon|formeel|informeel|voorbeelden|samenvattingen)\b"
    ),
)
