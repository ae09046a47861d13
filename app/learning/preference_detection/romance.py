"""French, Spanish, Portuguese and Italian: the imperative first ("appelle-moi Camille"), "always" /
"never" beside the verb, a rule kept as said. The verb lists hold the imperatives (and infinitives)
that make a sentence an instruction to Orion, not a remark ("nous utilisons toujours Jira")."""

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

# --- French ---------------------------------------------------------------------------------

_FR_VERBS = words(
    """
    utilise utilisez utiliser réponds répondez répondre écris écrivez écrire donne donnez
    donner mets mettez mettre cite citez citer inclus incluez inclure ajoute ajoutez ajouter
    fais faites faire sois soyez être parle parlez parler explique expliquez expliquer
    résume résumez résumer vérifie vérifiez vérifier indique indiquez indiquer montre
    montrez montrer précise précisez préciser commence commencez commencer termine terminez
    terminer propose proposez proposer garde gardez garder traduis traduisez traduire évite
    évitez éviter envoie envoyez envoyer tutoie tutoyez tutoyer vouvoie vouvoyez vouvoyer
    mentionne mentionnez mentionner signe signez signer arrondis arrondissez arrondir
    formate formatez formater ajoute-moi donne-moi écris-moi réponds-moi parle-moi
    """
)
_FR_ANSWERS = r"(?:réponses|messages)"

FRENCH = Grammar(
    language="French",
    forms=(
        Forms()
        .add("name", rf"(?:appelle|appelez)[- ]moi (?:plutôt |simplement )?{LATIN_NAME}")
        .add("name", rf"(?:tu peux|vous pouvez) m'appeler (?:plutôt |simplement )?{LATIN_NAME}")
        .add("name", rf"je m'appelle {LATIN_NAME}")
        .add("name", rf"mon (?:pré)?nom(?: complet)? (?:est|c'est) {LATIN_NAME}")
        .add("name", rf"je préfère (?:qu'on m'appelle|être appelée?) {LATIN_NAME}")
        .add("timezone", rf"mon fuseau(?: horaire)? (?:est|c'est) (?:le |l')?{TIMEZONE}")
        .add("timezone", rf"je suis sur le fuseau(?: horaire)? (?:de |d')?{TIMEZONE}")
        .add("team", rf"je (?:suis|travaille) dans l'équipe (?:de |d'|du )?{TEAM}")
        .add("team", rf"je fais partie de l'équipe (?:de |d'|du )?{TEAM}")
        .add("team", rf"mon équipe (?:est|c'est) (?:l'équipe )?(?:de |d'|du )?{TEAM}")
        .add(
            "language",
            r"(?:réponds|répondez|parle|parlez|écris|écrivez)(?:[- ]moi)?(?: toujours)?"
            rf"(?: uniquement| seulement)? en {LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"je préf[éè]r(?:e|erais) (?:parler |les réponses |des réponses |qu'on me réponde"
            rf" |que tu répondes |que tu me répondes )?en {LANGUAGE_WORD}",
        )
        .add("language", rf"ma langue(?: préférée)? (?:est|c'est) (?:le |l')?{LANGUAGE_WORD}")
        .add(
            "prefers",
            r"(?:je préf[éè]r(?:e|erais)|ma préférence va (?:à|aux|au)) (?P<value>(?:les?|la|l'"
            r"|des|du|un|une|mes|tes|vos|(?-i:[A-ZÀ-Ý])).{2,})",
        )
        .add(
            "response_style",
            rf"(?:garde|gardez|fais|faites) (?:tes |vos |les |des )?{_FR_ANSWERS} .+",
        )
        .add("response_style", rf"j'aime (?:les|mes|tes|vos|des) {_FR_ANSWERS} .+")
        .add("always", rf"(?:{_FR_VERBS}) (?:[\w'-]+ )?toujours .+")
        .add("always", rf"toujours (?:{_FR_VERBS}) .+")
        .add("never", rf"(?:ne |n')(?:me |m')?(?:{_FR_VERBS}) (?:jamais|plus) .+")
        .add("never", rf"ne (?:jamais|plus) (?:me |m')?(?:{_FR_VERBS}) .+")
        .add("never", rf"(?:ne |n')(?:me |m')?(?:{_FR_VERBS}) pas .+", durable_only=True)
        .add("always", rf"(?:{_FR_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
            s'il_te_plaît s'il_vous_plaît stp svp aussi et alors bon oh ok d'accord
            au_fait d'ailleurs en_fait désormais dorénavant à_partir_de_maintenant
            à_l'avenir pour_info pour_mémoire rappelle-toi_que retiens_que note_que
            n'oublie_pas_que souviens-toi_que salut bonjour coucou euh juste sinon
            par_contre eh_bien enfin
        """,
        no_comma="non",
    ),
    fillers=phrases(
        """
        s'il_te_plaît s'il_vous_plaît stp svp merci désormais dorénavant à_partir_de_maintenant
        à_l'avenir
        """
    ),
    marks=flags(r"\b(?:le|la|les|des|du|tes|vos|mes|et|pas|jamais|toujours|en)\b"),
    durable=flags(r"\b(?:désormais|dorénavant|à partir de maintenant|à l'avenir)\b"),
    reported=(
        r"\b(?:dit|disait|dira|racontait|raconte|selon (?:lui|elle|eux))\b"
        r"|\bd'après (?:lui|elle)\b"
    ),
    not_names=word_set(
        """
        quand si demain après avant plus tard ce soir dès que pas jamais encore maintenant
        lundi mardi mercredi jeudi vendredi samedi dimanche tout de suite vite bientôt
        plutôt le la les un une comme ça ici
        """
    ),
    style=flags(
        r"\b(?:réponses?|courte?s?|brèves?|bref|concise?s?|détaillée?s?|listes?|puces"
        r"|tableaux?|ton|formel(?:le)?|informel(?:le)?|décontracté|exemples?|résumés?"
        r"|markdown|emojis?|sources|titres|étapes|paragraphes?)\b"
    ),
)

# --- Spanish ----------------------------------------------------------------------------------

_ES_VERBS = words(
    """
    usa use uses utiliza utilice utilices responde responda respondas contesta conteste
    contestes escribe escriba escribas da dé des dame pon ponga pongas cita cite cites
    incluye incluya incluyas añade añada añadas agrega agregue agregues haz haga hagas
    explica explique expliques resume resuma resumas verifica verifique verifiques indica
    indique indiques muestra muestre muestres empieza empiece empieces termina termine
    termines traduce traduzca traduzcas evita evite evites envía envíe envíes menciona
    mencione menciones habla hable hables sé sea seas tutéame trátame usar utilizar
    responder contestar escribir dar poner citar incluir añadir agregar hacer explicar
    resumir verificar indicar mostrar empezar terminar traducir evitar enviar mencionar
    hablar ser respóndeme contéstame escríbeme háblame
    """
)

SPANISH = Grammar(
    language="Spanish",
    forms=(
        Forms()
        .add("name", rf"llámame (?:mejor |simplemente )?{LATIN_NAME}")
        .add("name", rf"(?:puedes|podéis|puede|pueden) llamarme (?:simplemente )?{LATIN_NAME}")
        .add("name", rf"me llamo {LATIN_NAME}")
        .add("name", rf"mi nombre es {LATIN_NAME}")
        .add("name", rf"prefiero que me llam(?:es|en) {LATIN_NAME}")
        .add("timezone", rf"mi (?:zona horaria|huso horario) es (?:el |la )?{TIMEZONE}")
        .add("timezone", rf"estoy en la zona horaria (?:de |del )?{TIMEZONE}")
        .add("team", rf"(?:estoy|trabajo) en el equipo (?:de |del )?{TEAM}")
        .add("team", rf"(?:formo|soy) parte del equipo (?:de |del )?{TEAM}")
        .add("team", rf"soy del equipo (?:de |del )?{TEAM}")
        .add("team", rf"mi equipo es (?:el )?(?:equipo )?(?:de |del )?{TEAM}")
        .add(
            "language",
            r"(?:respóndeme|responde|responda|contéstame|contesta|conteste|háblame|habla|hable"
            rf"|escríbeme|escribe|escriba)(?: siempre)?(?: solo| solamente)? en {LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"prefiero (?:las respuestas |respuestas |que me respondas |que me hables |hablar )?"
            rf"en {LANGUAGE_WORD}",
        )
        .add("language", rf"mi (?:idioma|lengua)(?: preferid[oa])? es (?:el )?{LANGUAGE_WORD}")
        .add(
            "prefers",
            r"(?:prefiero|preferiría|mi preferencia es) (?P<value>(?:el|la|los|las|un|una|unos"
            r"|unas|mis|(?-i:[A-ZÁÉÍÓÚÑ])).{2,})",
        )
        .add(
            "response_style",
            r"(?:prefiero|preferiría) (?P<value>(?:respuestas|tablas|listas|viñetas|ejemplos"
            r"|párrafos)\b.*)",
        )
        .add("response_style", r"(?:mantén|mantenga) (?:tus |sus |las )?respuestas .+")
        .add("response_style", r"me gustan (?:las )?respuestas .+")
        .add("always", rf"siempre (?:{_ES_VERBS}) .+")
        .add("always", rf"(?:{_ES_VERBS}) siempre .+")
        .add("never", rf"(?:nunca|jamás) (?:me )?(?:{_ES_VERBS}) .+")
        .add("never", rf"no (?:me )?(?:{_ES_VERBS}) (?:nunca|jamás|más) .+")
        .add("never", rf"no (?:me )?(?:{_ES_VERBS}) .+", durable_only=True)
        .add("always", rf"(?:{_ES_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
            por_favor también y además bueno oh ok vale de_hecho en_realidad por_cierto
            de_ahora_en_adelante a_partir_de_ahora desde_ahora en_adelante en_el_futuro
            recuerda_que ten_en_cuenta_que toma_nota hola perdón mejor pues eh
        """,
        no_comma="no",
    ),
    fillers=phrases(
        """
        por_favor gracias de_ahora_en_adelante a_partir_de_ahora desde_ahora en_adelante
        en_el_futuro
        """
    ),
    marks=flags(r"\b(?:el|los|las|tus|sus|del|y|con|siempre|nunca|jamás|en)\b"),
    durable=flags(
        r"\b(?:de ahora en adelante|a partir de ahora|desde ahora|en adelante|en el futuro)\b"
    ),
    reported=r"\b(?:dijo|dice|decía|dijeron|ha dicho|había dicho|según (?:él|ella|ellos))\b",
    not_names=word_set(
        """
        mañana luego después cuando si antes más tarde esta noche ahora pronto nunca
        no lunes martes miércoles jueves viernes sábado domingo ya el la los las un una
        por favor así
        """
    ),
    style=flags(
        r"\b(?:respuestas?|cortas?|breves?|concisas?|detalladas?|listas?|viñetas|tablas?"
        r"|tono|formal|informal|ejemplos?|resúmenes|resumen|párrafos?|emojis?)\b"
    ),
)

# --- Portuguese -------------------------------------------------------------------------------

_PT_VERBS = words(
    """
    use usa utilize utiliza responda responde escreva escreve dê dá coloque coloca ponha
    põe cite cita inclua inclui adicione adiciona faça faz explique explica resuma resume
    verifique verifica indique indica mostre mostra comece começa termine termina traduza
    traduz evite evita envie envia mencione menciona fale fala seja sê trate usar utilizar
    responder escrever dar colocar citar incluir adicionar fazer explicar resumir
    verificar indicar mostrar começar terminar traduzir evitar enviar mencionar falar ser
    """
)

PORTUGUESE = Grammar(
    language="Portuguese",
    forms=(
        Forms()
        .add("name", rf"(?:me chame|me chama|chama-me|chame-me) (?:só )?(?:de )?{LATIN_NAME}")
        .add(
            "name",
            rf"(?:(?:você )?pode|podes) (?:me chamar|chamar-me) (?:só )?(?:de )?{LATIN_NAME}",
        )
        .add("name", rf"(?:eu )?(?:me chamo|chamo-me) {LATIN_NAME}")
        .add("name", rf"(?:o )?meu nome é {LATIN_NAME}")
        .add("timezone", rf"(?:o )?meu fuso(?: horário)? é (?:o )?{TIMEZONE}")
        .add("timezone", rf"estou no fuso(?: horário)? (?:de |do |da )?{TIMEZONE}")
        .add(
            "team",
            rf"(?:eu )?(?:estou|trabalho|fico) n[ao] (?:equipe|time|equipa) (?:de |do |da )?{TEAM}",
        )
        .add(
            "team",
            rf"(?:eu )?(?:faço parte|sou) d[ao] (?:equipe|time|equipa) (?:de |do |da )?{TEAM}",
        )
        .add("team", rf"(?:a )?minha (?:equipe|equipa) é (?:a )?(?:de |do |da )?{TEAM}")
        .add("team", rf"(?:o )?meu time é (?:o )?(?:de |do |da )?{TEAM}")
        .add(
            "language",
            r"(?:responda|responde|responda-me|responde-me|me responda|fale|fala|fale comigo"
            r"|fala comigo|escreva|escreve|escreva-me|me escreva)(?: sempre)?(?: só| somente)?"
            rf" em {LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"(?:eu )?prefiro (?:respostas |as respostas |que você responda |que me respondas"
            rf" |falar )?em {LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"(?:o meu|meu|a minha|minha) (?:idioma|língua)(?: preferid[oa])? é "
            rf"(?:o )?{LANGUAGE_WORD}",
        )
        .add(
            "prefers",
            r"(?:eu )?(?:prefiro|preferiria) (?P<value>(?:(?:o|a|os|as|um|uma|uns|umas) "
            r"|(?-i:[A-ZÁÉÍÓÚÂÊÔÃÕÇ])).{2,})",
        )
        .add(
            "response_style",
            r"(?:eu )?(?:prefiro|preferiria) (?P<value>(?:respostas|tabelas|listas|tópicos"
            r"|exemplos|parágrafos)\b.*)",
        )
        .add("response_style", r"(?:mantenha|mantém) (?:suas |tuas |as )?respostas .+")
        .add("response_style", r"(?:eu )?gosto de respostas .+")
        .add("always", rf"sempre (?:{_PT_VERBS}) .+")
        .add("always", rf"(?:{_PT_VERBS}) sempre .+")
        .add("never", rf"(?:nunca|jamais) (?:me )?(?:{_PT_VERBS}) .+")
        .add("never", rf"não (?:me )?(?:{_PT_VERBS}) (?:nunca|jamais|mais) .+")
        .add("never", rf"não (?:me )?(?:{_PT_VERBS}) .+", durable_only=True)
        .add("always", rf"(?:{_PT_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
            por_favor também e além_disso bom ok tá certo na_verdade aliás a_propósito
            daqui_em_diante daqui_para_a_frente a_partir_de_agora de_agora_em_diante
            no_futuro doravante lembre-se_que lembre-se_de_que lembra_que anote olá oi
            obrigado obrigada então
        """,
        no_comma="não",
    ),
    fillers=phrases(
        """
        por_favor obrigado obrigada daqui_em_diante daqui_para_a_frente a_partir_de_agora
        de_agora_em_diante no_futuro
        """
    ),
    marks=flags(
        r"\b(?:o|os|as|um|uma|do|da|dos|das|na|no|nas|nos|suas|seus|sempre|nunca|não|você"
        r"|em)\b"
    ),
    durable=flags(
        r"\b(?:daqui em diante|daqui para a frente|a partir de agora|de agora em diante"
        r"|no futuro|doravante)\b"
    ),
    reported=r"\b(?:disse|diz|dizia|disseram|falou|segundo (?:ele|ela|eles))\b",
    not_names=word_set(
        """
        amanhã depois quando se antes mais tarde hoje agora logo nunca não segunda terça
        quarta quinta sexta sábado domingo já o a os as um uma por favor assim
        """
    ),
    style=flags(
        r"\b(?:respostas?|curtas?|breves?|concisas?|detalhadas?|listas?|marcadores|tópicos"
        r"|tabelas?|tom|formal|informal|exemplos?|resumos?|parágrafos?|emojis?)\b"
    ),
)

# --- Italian ----------------------------------------------------------------------------------

_IT_VERBS = words(
    """
    usa usi utilizza utilizzi rispondi risponda scrivi scriva dai dammi metti metta cita
    citi includi includa aggiungi aggiunga fai faccia spiega spieghi riassumi riassuma
    verifica verifichi indica indichi mostra mostri inizia inizi termina termini traduci
    traduca evita eviti invia invii menziona menzioni parla parli sii sia dammi usare
    utilizzare rispondere scrivere dare mettere citare includere aggiungere fare spiegare
    riassumere verificare indicare mostrare iniziare terminare tradurre evitare inviare
    menzionare parlare essere rispondimi scrivimi parlami
    """
)

ITALIAN = Grammar(
    language="Italian",
    forms=(
        Forms()
        .add("name", rf"chiamami (?:pure |semplicemente )?{LATIN_NAME}")
        .add("name", rf"(?:puoi|può|potete) chiamarmi (?:pure |semplicemente )?{LATIN_NAME}")
        .add("name", rf"(?:io )?mi chiamo {LATIN_NAME}")
        .add("name", rf"il mio nome è {LATIN_NAME}")
        .add("name", rf"preferisco essere chiamat[oa] {LATIN_NAME}")
        .add("timezone", rf"il mio fuso orario è (?:il |l')?{TIMEZONE}")
        .add("timezone", rf"sono nel fuso orario (?:di |del )?{TIMEZONE}")
        .add("team", rf"(?:sono|lavoro) nel (?:team|gruppo) (?:di |del )?{TEAM}")
        .add("team", rf"(?:sono|lavoro) nella squadra (?:di |del )?{TEAM}")
        .add("team", rf"faccio parte del (?:team|gruppo) (?:di |del )?{TEAM}")
        .add("team", rf"il mio (?:team|gruppo) è (?:il )?{TEAM}")
        .add("team", rf"la mia squadra è (?:la )?{TEAM}")
        .add(
            "language",
            r"(?:rispondimi|rispondi|risponda|rispondetemi|parlami|parla|parli|scrivimi|scrivi"
            rf"|scriva)(?: sempre)?(?: solo| soltanto)? in {LANGUAGE_WORD}",
        )
        .add(
            "language",
            r"preferisco (?:le risposte |risposte |parlare |che tu risponda )?in "
            rf"{LANGUAGE_WORD}",
        )
        .add("language", rf"la mia lingua(?: preferita)? è (?:il |l')?{LANGUAGE_WORD}")
        .add(
            "prefers",
            r"(?:io )?(?:preferisco|preferirei) (?P<value>(?:il|lo|la|i|gli|le|l'|un|una|uno"
            r"|dei|delle|(?-i:[A-ZÀ-Ý])).{2,})",
        )
        .add(
            "response_style",
            r"(?:io )?(?:preferisco|preferirei) (?P<value>(?:risposte|tabelle|elenchi|esempi"
            r"|paragrafi)\b.*)",
        )
        .add("response_style", r"(?:mantieni|tieni|mantenga) (?:le |tue |le tue )?risposte .+")
        .add("response_style", r"mi piacciono (?:le )?risposte .+")
        .add("always", rf"(?:{_IT_VERBS}) (?:[\w'-]+ )?sempre .+")
        .add("always", rf"sempre (?:{_IT_VERBS}) .+")
        .add("never", rf"non (?:mi )?(?:{_IT_VERBS}) (?:mai|più) .+")
        .add("never", rf"mai (?:{_IT_VERBS}) .+")
        .add("never", rf"non (?:mi )?(?:{_IT_VERBS}) .+", durable_only=True)
        .add("always", rf"(?:{_IT_VERBS}) .+", durable_only=True)
    ),
    openers=openers(
        """
            per_favore per_piacere anche e inoltre allora beh ok va_bene in_realtà
            a_proposito comunque d'ora_in_poi da_ora_in_poi da_adesso_in_poi
            d'ora_in_avanti in_futuro ricorda_che ricordati_che tieni_presente_che ciao
            salve grazie anzi
        """,
        no_comma="no",
    ),
    fillers=phrases(
        """
        per_favore per_piacere grazie d'ora_in_poi da_ora_in_poi da_adesso_in_poi in_futuro
        """
    ),
    marks=flags(r"\b(?:il|gli|lo|le|della|delle|dei|tue|sempre|mai|non|in)\b"),
    durable=flags(r"\b(?:d'ora in poi|da ora in poi|da adesso in poi|d'ora in avanti|in futuro)\b"),
    reported=r"\b(?:detto|disse|dice|diceva|dicevano|secondo (?:lui|lei|loro))\b",
    not_names=word_set(
        """
        domani dopo quando se prima più tardi stasera adesso ora presto mai non lunedì
        martedì mercoledì giovedì venerdì sabato domenica già il lo la i gli le un una
        per favore così
        """
    ),
    style=flags(
        r"\b(?:risposte|risposta|brevi|breve|concise|dettagliate|elenchi|elenco|punti"
        r"|tabelle|tono|formale|informale|esempi|riassunti|paragrafi|emoji)\b"
    ),
)
