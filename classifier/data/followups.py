"""How conversations continue: terse follow-ups per intent (English and native), and the canned
assistant replies between turns, mostly in the conversation's language."""

from __future__ import annotations

from classifier.data.pools import PARAGRAPHS, VOICES, lint_output, test_output, traceback
from classifier.data.rand import Rand
from classifier.data.templates_multi import JA_PARAGRAPHS, PT_PARAGRAPHS, RU_PARAGRAPHS, ZH_PARAGRAPHS

FOLLOWUPS: dict[str, list[str]] = {
    "coding": [
        "fix it",
        "still failing, same error",
        "again, with the linter output:\n{lint}",
        "now add tests for that",
        "ok that broke something else:\n{trace}",
        "can you make it async too",
        "doesnt compile",
        "apply the same fix to the other handler",
        "and the diff?",
        "ci is red again\n{test}",
    ],
    "tools": [
        "yes go ahead",
        "do it",
        "ok book it",
        "send it",
        "try again with tomorrow instead",
        "also check the other one",
        "cancel that and do next week",
        "yes, use the first result",
    ],
    "instruction": [
        "now as JSON",
        "shorter",
        "only the labels please",
        "make it a table",
        "same for this one: {para}",
        "in bullet points",
        "remove the explanations, just the output",
        "again but in lowercase",
    ],
    "math": [
        "that's wrong, redo the integral carefully",
        "now prove it for general n",
        "exact value, not a decimal",
        "what if the exponent is {k} instead",
        "show the induction step",
        "give the answer mod {k}",
    ],
    "reasoning": [
        "are you sure? re-check the third clue",
        "what if the second statement is false instead",
        "walk me through the case where A lies",
        "ok but consider the opposite incentive",
        "that assumption seems wrong, redo the analysis",
    ],
    "writing": [
        "make it longer, ~1500 words, more playful",
        "punchier intro please, keep the rest",
        "rewrite it in our brand voice: {voice}",
        "add a section on sustainability and a stronger ending",
        "now the German version of the whole post",
        "more emotional, it's for her 60th",
    ],
}


# Terse follow-ups in the language of the templated user turn, written for each language (not
# translated from FOLLOWUPS). Same ownership rule: follow-up i belongs to source i % len(SOURCES),
# so 6 per intent give every source one per language. {para} is a pasted paragraph in that
# language where there is a pool of them (see fill_followup).
NATIVE_FOLLOWUPS: dict[str, dict[str, list[str]]] = {
    "zh": {
        "coding": [
            "还是报错",
            "还是不行，这次报这个：\n{trace}",
            "顺便把测试也写了",
            "lint 又挂了：\n{lint}",
            "改成异步的吧",
            "把 diff 发我看看",
        ],
        "tools": [
            "好的，就这么办",
            "确认，发吧",
            "换成明天再查一次",
            "第一个就行",
            "算了，取消，改到下周",
            "另一个也帮我查一下",
        ],
        "instruction": [
            "改成 JSON 输出",
            "再短一点",
            "只要标签，别的都不要",
            "整理成表格",
            "这条也一样处理：{para}",
            "去掉解释，只给结果",
        ],
        "math": [
            "不对吧，积分再仔细算一遍",
            "推广到一般的 n 并证明",
            "要精确值，不要小数",
            "如果指数换成 {k} 呢？",
            "归纳那一步写详细点",
            "结果对 {k} 取模是多少",
        ],
        "reasoning": [
            "那如果A说的是假话呢？",
            "你确定吗？第三个条件再核对一下",
            "这个假设站不住，重新分析",
            "反过来想呢？如果激励正好相反",
            "把每种情况都列出来",
            "所以最后到底选哪个？给个明确结论",
        ],
        "writing": [
            "再煽情一点",
            "开头再抓人一点，其他不变",
            "写长一点，1500 字左右，轻松一些",
            "加一段讲可持续发展的，结尾再有力一点",
            "换成正式一点的语气",
            "太像广告了，自然一点",
        ],
    },
    "ja": {
        "coding": [
            "まだエラーが出ます",
            "テストも書いて",
            "今度はこれが落ちました：\n{test}",
            "linterに怒られてます：\n{lint}",
            "同じ修正を他のハンドラにもお願い",
            "コンパイル通らないです",
        ],
        "tools": [
            "はい、お願いします",
            "それで予約して",
            "送っておいてください",
            "明日の分でもう一回調べて",
            "やっぱりキャンセルで、来週にして",
            "一番上のでいいです",
        ],
        "instruction": [
            "JSONで出して",
            "もっと短く",
            "ラベルだけでいいです",
            "表にして",
            "これも同じようにお願い：{para}",
            "説明はいらないので結果だけ",
        ],
        "math": [
            "それ違いませんか？積分をもう一度丁寧に",
            "一般の n で証明して",
            "小数じゃなくて厳密な値で",
            "指数が {k} だったら？",
            "帰納法のステップを詳しく",
            "答えを {k} で割った余りは？",
        ],
        "reasoning": [
            "本当に？3つ目の条件をもう一度確認して",
            "Aが嘘をついている場合は？",
            "その前提はおかしい気がします。分析し直して",
            "逆の立場から考えるとどうなりますか",
            "場合分けを全部書き出して",
            "で、結論はどっち？",
        ],
        "writing": [
            "もう少しエモくして",
            "書き出しをもっと引きのある感じに",
            "もっと長く、2000字くらいで",
            "堅すぎるので、もう少しくだけた感じに",
            "最後の段落をもっと力強く",
            "広告っぽさを消して",
        ],
    },
    "ru": {
        "coding": [
            "всё ещё падает",
            "та же ошибка:\n{trace}",
            "теперь допиши тесты",
            "линтер опять ругается:\n{lint}",
            "не компилируется",
            "а дифф покажешь?",
        ],
        "tools": [
            "да, давай",
            "отправляй",
            "бронируй",
            "попробуй на завтра",
            "отмени и перенеси на следующую неделю",
            "бери первый вариант",
        ],
        "instruction": [
            "теперь в JSON",
            "короче",
            "только метки, без пояснений",
            "сделай таблицей",
            "и с этим так же: {para}",
            "убери объяснения, только результат",
        ],
        "math": [
            "неверно, пересчитай интеграл аккуратно",
            "а теперь докажи для произвольного n",
            "нужно точное значение, не десятичная дробь",
            "а если показатель {k}?",
            "распиши шаг индукции подробнее",
            "дай ответ по модулю {k}",
        ],
        "reasoning": [
            "а если предположить обратное?",
            "уверен? перепроверь третье условие",
            "а если второе утверждение ложно?",
            "это допущение неверное, переделай анализ",
            "разбери случай, когда A лжёт",
            "так что в итоге выбрать? дай однозначный ответ",
        ],
        "writing": [
            "сделай короче и живее",
            "добавь эмоций",
            "перепиши вступление, чтобы цепляло",
            "слишком официально, попроще",
            "добавь абзац про экологию и сильную концовку",
            "длиннее, слов на полторы тысячи",
        ],
    },
    "pt": {
        "coding": [
            "continua dando erro",
            "mesmo erro:\n{trace}",
            "agora escreve os testes",
            "o lint reclamou:\n{lint}",
            "nao compila",
            "o CI quebrou de novo\n{test}",
        ],
        "tools": [
            "pode mandar",
            "sim, faz isso",
            "reserva",
            "tenta pra amanhã",
            "cancela e joga pra semana que vem",
            "pega o primeiro",
        ],
        "instruction": [
            "agora em JSON",
            "mais curto",
            "só os rótulos",
            "põe numa tabela",
            "faz o mesmo com esse: {para}",
            "tira as explicações, só o resultado",
        ],
        "math": [
            "acho que tá errado, refaz a integral com calma",
            "agora prova pra n qualquer",
            "quero o valor exato, não decimal",
            "e se o expoente for {k}?",
            "detalha o passo da indução",
            "e o resultado mod {k}?",
        ],
        "reasoning": [
            "e se a Ana estiver mentindo?",
            "tem certeza? confere a terceira pista",
            "e se for o contrário?",
            "essa premissa tá furada, refaz a análise",
            "lista todos os casos",
            "tá, mas qual você escolheria? fecha uma resposta",
        ],
        "writing": [
            "mais curto e com mais emoção",
            "deixa a abertura mais impactante",
            "tá muito formal, deixa mais leve",
            "aumenta pra umas 1500 palavras",
            "tira o tom de propaganda",
            "coloca um final mais forte",
        ],
    },
    "de": {
        "coding": [
            "immer noch derselbe Fehler",
            "jetzt noch Tests dazu",
            "der Linter meckert:\n{lint}",
            "kompiliert nicht",
            "jetzt kommt das:\n{trace}",
            "mach das auch asynchron",
        ],
        "tools": [
            "ja, mach",
            "abschicken",
            "buch das",
            "versuch's mit morgen",
            "storniere das und nimm nächste Woche",
            "nimm das erste Ergebnis",
        ],
        "instruction": [
            "jetzt als JSON",
            "kürzer",
            "nur die Labels bitte",
            "als Tabelle",
            "dasselbe hierfür: {para}",
            "ohne Erklärung, nur das Ergebnis",
        ],
        "math": [
            "das stimmt nicht, rechne das Integral nochmal sorgfältig",
            "jetzt für allgemeines n beweisen",
            "exakter Wert, keine Dezimalzahl",
            "und wenn der Exponent {k} ist?",
            "zeig den Induktionsschritt",
            "Ergebnis modulo {k}?",
        ],
        "reasoning": [
            "bist du sicher? prüf die dritte Bedingung nochmal",
            "und wenn A lügt?",
            "die Annahme passt nicht, analysier das neu",
            "was, wenn die Anreize umgekehrt sind?",
            "geh alle Fälle durch",
            "und was empfiehlst du jetzt konkret?",
        ],
        "writing": [
            "kürzer und lebendiger",
            "emotionaler bitte",
            "der Einstieg muss packender sein",
            "zu förmlich, lockerer",
            "länger, so 1500 Wörter",
            "mach den Schluss stärker",
        ],
    },
    "fr": {
        "coding": [
            "toujours la même erreur",
            "ajoute les tests maintenant",
            "le linter râle :\n{lint}",
            "ça compile pas",
            "maintenant j'ai ça :\n{trace}",
            "applique la même correction à l'autre handler",
        ],
        "tools": [
            "oui vas-y",
            "envoie",
            "réserve",
            "essaie pour demain",
            "annule et décale à la semaine prochaine",
            "prends le premier",
        ],
        "instruction": [
            "maintenant en JSON",
            "plus court",
            "juste les étiquettes",
            "sous forme de tableau",
            "pareil pour celui-ci : {para}",
            "sans explication, juste le résultat",
        ],
        "math": [
            "c'est faux, refais l'intégrale proprement",
            "démontre-le pour n quelconque",
            "valeur exacte, pas de décimales",
            "et si l'exposant vaut {k} ?",
            "détaille l'étape de récurrence",
            "le résultat modulo {k} ?",
        ],
        "reasoning": [
            "tu es sûr ? revérifie le troisième indice",
            "et si A ment ?",
            "cette hypothèse ne tient pas, refais l'analyse",
            "et si on prend le point de vue inverse ?",
            "liste tous les cas",
            "bon, et tu recommandes quoi au final ?",
        ],
        "writing": [
            "plus court et plus vivant",
            "plus d'émotion stp",
            "l'accroche doit être plus forte",
            "trop formel, plus détendu",
            "plus long, environ 1500 mots",
            "une fin plus percutante",
        ],
    },
    "es": {
        "coding": [
            "sigue fallando",
            "ahora añade tests",
            "el linter se queja:\n{lint}",
            "no compila",
            "ahora sale esto:\n{trace}",
            "hazlo asíncrono también",
        ],
        "tools": [
            "sí, dale",
            "envíalo",
            "resérvalo",
            "prueba con mañana",
            "cancela y pásalo a la semana que viene",
            "el primero",
        ],
        "instruction": [
            "ahora en JSON",
            "más corto",
            "solo las etiquetas",
            "en una tabla",
            "lo mismo con este: {para}",
            "sin explicaciones, solo el resultado",
        ],
        "math": [
            "está mal, rehaz la integral con cuidado",
            "ahora demuéstralo para n general",
            "valor exacto, no decimal",
            "¿y si el exponente es {k}?",
            "detalla el paso inductivo",
            "¿el resultado módulo {k}?",
        ],
        "reasoning": [
            "¿seguro? revisa la tercera pista",
            "¿y si A miente?",
            "esa suposición no se sostiene, rehaz el análisis",
            "¿y si lo miras al revés?",
            "enumera todos los casos",
            "vale, ¿y qué recomiendas al final?",
        ],
        "writing": [
            "más corto y con más vida",
            "más emotivo",
            "el arranque tiene que enganchar más",
            "demasiado formal, más cercano",
            "más largo, unas 1500 palabras",
            "un cierre más fuerte",
        ],
    },
}
# A native conversation still switches to English now and then ("fix it" after a Chinese request).
NATIVE_FOLLOWUP_RATE = 0.85
NATIVE_REPLY_RATE = 0.9
LANG_PARAGRAPHS = {"zh": ZH_PARAGRAPHS, "ja": JA_PARAGRAPHS, "ru": RU_PARAGRAPHS, "pt": PT_PARAGRAPHS}


def fill_followup(r: Rand, text: str, lang: str = "en") -> str:
    return text.format(
        lint=lint_output(r),
        trace=traceback(r),
        test=test_output(r),
        para=r.p(LANG_PARAGRAPHS.get(lang, PARAGRAPHS)),
        k=r.n(3, 9),
        voice=r.p(VOICES),
    )


# Canned assistant replies in the conversation's language, same shape as ASSISTANT_BY_INTENT.
_FIX = "\n```python\ndef apply_discount(order, code):\n    rate = DISCOUNTS.get(code, 0)\n    return order.total * (1 - rate)\n```"
_STUB = "\n```python\ndef f(x):\n    return x\n```"
NATIVE_REPLIES: dict[str, dict[str, list[str]]] = {
    "zh": {
        "coding": [
            "好的，修复如下：" + _FIX,
            "我改了 `src/billing/invoice.py`，本地测试已经通过。",
            "问题出在 handler 里少了 None 判断，补丁如下。",
        ],
        "tools": [
            "找到 3 条匹配结果，要继续吗？",
            "订单正在配送中，需要我给客户发邮件吗？",
            "可以创建这个日程，时间再确认一下？",
        ],
        "instruction": [
            '{"name": "王磊", "company": "Kite Analytics"}',
            "正面\n负面\n中性",
            "- 预算已批准\n- 第三季度开业\n- 五月开始招聘",
        ],
        "math": ["分部积分两次，得到 2 - 5/e。", "由容斥原理，总数是 4320。", "通项公式为 a_n = 2^n + 3n。"],
        "reasoning": [
            "情况一：假设 A 是骑士，那么 B 一定是骗子……",
            "权衡下来：从团队规模看单体更合适，但是……",
            "漏洞在于把相关性当成了因果。",
        ],
        "writing": [
            "这是初稿：\n\n# 为什么小团队交付更快\n\n每一个好产品的起点……",
            "新闻稿草稿：\n\n【即时发布】……",
            "很久很久以前，在世界尽头的一座灯塔里……",
        ],
    },
    "ja": {
        "coding": [
            "修正版はこちらです：" + _FIX,
            "`src/billing/invoice.py` を修正し、ローカルでテストが通りました。",
            "ハンドラで None チェックが抜けていたのが原因です。パッチは以下の通りです。",
        ],
        "tools": [
            "該当する結果が3件見つかりました。進めてよろしいですか？",
            "ご注文は配送中です。お客様にメールしましょうか？",
            "予定を作成できます。この時間でよろしいですか？",
        ],
        "instruction": [
            '{"name": "佐藤 健", "company": "Lumen Bank"}',
            "ポジティブ\nネガティブ\nニュートラル",
            "- 予算承認済み\n- 第3四半期に開設\n- 5月から採用開始",
        ],
        "math": [
            "部分積分を2回行うと 2 - 5/e になります。",
            "包除原理より、求める数は 4320 通りです。",
            "一般項は a_n = 2^n + 3n です。",
        ],
        "reasoning": [
            "場合1：Aが騎士だと仮定すると、Bは悪党でなければならず……",
            "トレードオフを整理すると、チーム規模の点ではモノリスが有利ですが……",
            "この議論の欠陥は、相関から因果を導いている点です。",
        ],
        "writing": [
            "初稿です：\n\n# 小さなチームが速く出荷できる理由\n\nすべての優れたプロダクトは……",
            "プレスリリース案：\n\n報道関係者各位……",
            "むかしむかし、世界の果ての灯台に……",
        ],
    },
    "ru": {
        "coding": [
            "Вот исправление:" + _FIX,
            "Поправил `src/billing/invoice.py`, локально тесты проходят.",
            "Ошибка в том, что в обработчике нет проверки на None; патч ниже.",
        ],
        "tools": [
            "Нашёл 3 подходящих результата. Продолжить?",
            "Заказ в пути. Написать клиенту?",
            "Могу создать встречу. Подтвердите время?",
        ],
        "instruction": [
            '{"name": "Ольга Смирнова", "company": "Nimbus"}',
            "позитивный\nнегативный\nнейтральный",
            "- Бюджет утверждён\n- Открытие в III квартале\n- Найм с мая",
        ],
        "math": [
            "Дважды интегрируя по частям, получаем 2 - 5/e.",
            "По формуле включений-исключений получается 4320.",
            "Общий член: a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Случай 1: пусть A рыцарь. Тогда B обязан быть лжецом...",
            "Если взвесить компромиссы: по размеру команды выигрывает монолит, но...",
            "Ошибка в переходе от корреляции к причинности.",
        ],
        "writing": [
            "Вот первый вариант:\n\n# Почему маленькие команды релизят быстрее\n\nЛюбой хороший продукт начинается...",
            "Черновик пресс-релиза:\n\nДЛЯ НЕМЕДЛЕННОЙ ПУБЛИКАЦИИ...",
            "Давным-давно, на маяке на краю света...",
        ],
    },
    "pt": {
        "coding": [
            "Aqui está a correção:" + _FIX,
            "Atualizei `src/billing/invoice.py` e os testes passam localmente.",
            "O bug é a falta de checagem de None no handler; segue o patch.",
        ],
        "tools": [
            "Encontrei 3 resultados. Posso seguir?",
            "O pedido está em trânsito. Quer que eu mande um e-mail pro cliente?",
            "Posso criar o evento. Confirma o horário?",
        ],
        "instruction": [
            '{"name": "Mariana Costa", "company": "Verde Outdoor"}',
            "positiva\nnegativa\nneutra",
            "- Orçamento aprovado\n- Escritório abre no 3º tri\n- Contratações a partir de maio",
        ],
        "math": [
            "Integrando por partes duas vezes, obtemos 2 - 5/e.",
            "Por inclusão-exclusão, o total é 4320.",
            "A forma fechada é a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Caso 1: suponha que A é cavaleiro. Então B tem que ser mentiroso...",
            "Pesando os trade-offs: pelo tamanho do time o monólito ganha, mas...",
            "A falha está em tirar causalidade de uma correlação.",
        ],
        "writing": [
            "Aqui vai um primeiro rascunho:\n\n# Por que times pequenos entregam mais rápido\n\nTodo grande produto começa...",
            "Rascunho do press release:\n\nPARA DIVULGAÇÃO IMEDIATA...",
            "Era uma vez, num farol no fim do mundo...",
        ],
    },
    "de": {
        "coding": [
            "Hier ist der Fix:" + _FIX,
            "Ich habe `src/billing/invoice.py` angepasst, die Tests laufen lokal durch.",
            "Der Fehler ist die fehlende None-Prüfung im Handler; Patch unten.",
        ],
        "tools": [
            "Ich habe 3 passende Ergebnisse gefunden. Soll ich weitermachen?",
            "Die Bestellung ist unterwegs. Soll ich dem Kunden mailen?",
            "Ich kann den Termin anlegen. Passt die Uhrzeit?",
        ],
        "instruction": [
            '{"name": "Jonas Weber", "company": "Acme Robotics"}',
            "positiv\nnegativ\nneutral",
            "- Budget genehmigt\n- Eröffnung in Q3\n- Einstellungen ab Mai",
        ],
        "math": [
            "Zweimal partiell integriert ergibt sich 2 - 5/e.",
            "Mit Inklusion-Exklusion kommt man auf 4320.",
            "Die geschlossene Form ist a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Fall 1: Angenommen, A ist ein Ritter. Dann muss B ein Schurke sein...",
            "Abwägung: bei der Teamgröße spricht viel für den Monolithen, aber...",
            "Der Fehler ist der Schluss von Korrelation auf Kausalität.",
        ],
        "writing": [
            "Hier ein erster Entwurf:\n\n# Warum kleine Teams schneller liefern\n\nJedes großartige Produkt beginnt...",
            "Entwurf der Pressemitteilung:\n\nZUR SOFORTIGEN VERÖFFENTLICHUNG...",
            "Es war einmal ein Leuchtturm am Ende der Welt...",
        ],
    },
    "fr": {
        "coding": [
            "Voici le correctif :" + _FIX,
            "J'ai modifié `src/billing/invoice.py`, les tests passent en local.",
            "Le bug vient de l'absence de test sur None dans le handler ; patch ci-dessous.",
        ],
        "tools": [
            "J'ai trouvé 3 résultats. Je continue ?",
            "La commande est en cours de livraison. Je préviens le client par e-mail ?",
            "Je peux créer l'événement. Tu confirmes l'heure ?",
        ],
        "instruction": [
            '{"name": "Amélie Durand", "company": "Oakline Furniture"}',
            "positif\nnégatif\nneutre",
            "- Budget approuvé\n- Ouverture au T3\n- Recrutement dès mai",
        ],
        "math": [
            "Deux intégrations par parties donnent 2 - 5/e.",
            "Par inclusion-exclusion, on obtient 4320.",
            "La forme close est a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Cas 1 : supposons que A soit chevalier. Alors B doit être un fripon...",
            "En pesant le pour et le contre : côté taille d'équipe, le monolithe l'emporte, mais...",
            "La faille, c'est de passer de la corrélation à la causalité.",
        ],
        "writing": [
            "Voici un premier jet :\n\n# Pourquoi les petites équipes livrent plus vite\n\nTout grand produit commence...",
            "Projet de communiqué :\n\nPOUR DIFFUSION IMMÉDIATE...",
            "Il était une fois, dans un phare au bout du monde...",
        ],
    },
    "es": {
        "coding": [
            "Aquí tienes el arreglo:" + _FIX,
            "He actualizado `src/billing/invoice.py` y los tests pasan en local.",
            "El fallo es que falta comprobar None en el handler; parche abajo.",
        ],
        "tools": [
            "Encontré 3 resultados. ¿Sigo?",
            "El pedido está en camino. ¿Le escribo al cliente?",
            "Puedo crear el evento. ¿Confirmas la hora?",
        ],
        "instruction": [
            '{"name": "Carlos Ruiz", "company": "Lumen Bank"}',
            "positiva\nnegativa\nneutra",
            "- Presupuesto aprobado\n- Apertura en el T3\n- Contrataciones desde mayo",
        ],
        "math": [
            "Integrando por partes dos veces se obtiene 2 - 5/e.",
            "Por inclusión-exclusión, el total es 4320.",
            "La forma cerrada es a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Caso 1: supongamos que A es caballero. Entonces B tiene que ser bribón...",
            "Sopesando: por tamaño de equipo gana el monolito, pero...",
            "El fallo está en pasar de correlación a causalidad.",
        ],
        "writing": [
            "Aquí va un primer borrador:\n\n# Por qué los equipos pequeños entregan más rápido\n\nTodo gran producto empieza...",
            "Borrador de nota de prensa:\n\nPARA DIFUSIÓN INMEDIATA...",
            "Érase una vez, en un faro en el fin del mundo...",
        ],
    },
}
NATIVE_FILLERS: dict[str, list[str]] = {
    "zh": ["好的，改动如下：" + _STUB, "这是初稿，看看哪里需要调整。", "完成了，还有别的吗？"],
    "ja": [
        "修正内容はこちらです：" + _STUB,
        "初稿を用意しました。調整したい点があれば教えてください。",
        "完了しました。他に何かありますか？",
    ],
    "ru": ["Вот что я поменял:" + _STUB, "Вот черновик. Скажите, что поправить.", "Готово. Что-нибудь ещё?"],
    "pt": [
        "Beleza, olha o que eu mudei:" + _STUB,
        "Segue um primeiro rascunho. Me diz o que ajustar.",
        "Pronto. Mais alguma coisa?",
    ],
    "de": [
        "Hier ist meine Änderung:" + _STUB,
        "Hier ein erster Entwurf. Sag mir, was ich anpassen soll.",
        "Erledigt. Noch etwas?",
    ],
    "fr": [
        "Voici ce que j'ai changé :" + _STUB,
        "Voilà le brouillon. Dis-moi ce qu'il faut ajuster.",
        "C'est fait. Autre chose ?",
    ],
    "es": [
        "Esto es lo que cambié:" + _STUB,
        "Aquí tienes la primera versión. Dime qué ajusto.",
        "Hecho. ¿Algo más?",
    ],
}
