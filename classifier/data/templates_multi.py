"""Non-English phrasing templates: German, French, Spanish, and (f12) Simplified Chinese, Japanese,
Russian and Brazilian Portuguese. ``MULTI[intent]`` follows the same round-robin ownership by
source as the English templates; ``TEMPLATE_LANG`` names each template's language, so that the
follow-up and the assistant replies of a conversation continue in it."""

from __future__ import annotations

from classifier.data.pools import (
    CITIES,
    COMPANIES,
    FUNCS,
    LANGS,
    PARAGRAPHS,
    PATHS,
    PEOPLE,
    PRODUCTS,
    REVIEWS,
    SENTENCES,
    code_block,
    diff,
    lint_output,
    test_output,
    traceback,
)
from classifier.data.rand import Rand
from classifier.data.templates_en import CODE_STUBS, TYPE_ERRORS, Tpl, _poly

MULTI: dict[str, list[Tpl]] = {
    "coding": [
        lambda r: f"Kannst du diesen Fehler beheben?\n{traceback(r)}",
        lambda r: f"Peux-tu corriger ce bug ? Le test échoue :\n{test_output(r)}",
        lambda r: (
            f"Escribe una función en {r.p(LANGS)} que {r.p(['valide un IBAN', 'elimine duplicados de una lista', 'lea un CSV grande por partes'])}."
        ),
        lambda r: (
            f"Bitte refaktoriere {r.p(FUNCS)} in {r.p(PATHS)}, der Code ist unübersichtlich:\n{code_block(r)}"
        ),
        lambda r: f"Ajoute des tests unitaires pour {r.p(FUNCS)} avec pytest.",
        lambda r: f"¿Por qué falla esto?\n{code_block(r)}\n{traceback(r)}",
    ],
    "tools": [
        lambda r: (f"Wie wird das Wetter morgen in {r.p(CITIES)}?", "weather"),
        lambda r: (
            f"Réserve une table pour {r.n(2, 6)} personnes ce soir à {r.p(['Chez Marcel', 'Le Petit Zinc'])}.",
            "booking",
        ),
        lambda r: (f"Busca el pedido {r.n(10000, 99999)} y dime cuándo llega.", "orders"),
        lambda r: (f"Erstelle einen Termin mit {r.p(PEOPLE)} am Donnerstag um 14 Uhr.", "calendar"),
        lambda r: (f"Envoie un e-mail à {r.p(PEOPLE)} pour dire que le rapport est prêt.", "email"),
        lambda r: (f"Convierte {r.n(10, 900)} euros a dólares.", "fx"),
    ],
    "instruction": [
        lambda r: f"Fasse diesen Text in zwei Sätzen zusammen:\n{r.p(PARAGRAPHS)}",
        lambda r: f"Extrais le nom, l'e-mail et l'entreprise au format JSON :\n{r.p(PARAGRAPHS)}",
        lambda r: (
            f"Clasifica estas reseñas como positiva, negativa o neutra. Solo las etiquetas.\n{r.p(REVIEWS)}\n{r.p(REVIEWS)}"
        ),
        lambda r: (
            f"Übersetze ins Englische: {r.p(['Die Lieferung kommt morgen.', 'Bitte bestätigen Sie den Termin.', 'Wir haben das Problem behoben.'])}"
        ),
        lambda r: f"Reformule cette phrase de façon plus formelle : « {r.p(SENTENCES)} »",
        lambda r: f"Convierte esta lista en una tabla markdown: {', '.join(r.sample(CITIES, 4))}",
    ],
    "math": [
        lambda r: f"Berechne das Integral \\int_0^{{{r.n(1, 4)}}} x^{r.n(2, 5)} \\ln(x)\\,dx exakt.",
        lambda r: f"Démontre que pour tout entier n ≥ 1, {r.p(['n^5 - n est divisible par 5', '2^n > n'])}.",
        lambda r: (
            f"¿Cuál es la probabilidad de obtener exactamente {r.n(2, 5)} seises al lanzar {r.n(6, 12)} dados? Fracción exacta."
        ),
        lambda r: (
            f"Wie viele Möglichkeiten gibt es, {r.n(5, 10)} Bücher auf {r.n(2, 4)} Regale zu verteilen, wenn die Reihenfolge zählt?"
        ),
        lambda r: f"Trouve toutes les solutions entières de x^2 - {r.n(2, 13)}y^2 = 1 avec y < 100.",
        lambda r: f"Calcula el límite cuando x tiende a 0 de (e^{{{r.n(2, 5)}x}} - 1 - {r.n(2, 5)}x) / x^2.",
    ],
    "reasoning": [
        lambda r: (
            "Drei Personen, A, B und C. A sagt: B lügt. B sagt: C lügt. C sagt: A und B lügen beide. Wer sagt die Wahrheit? Begründe jeden Schritt."
        ),
        lambda r: (
            f"Analyse en profondeur les conséquences d'{r.p(['une semaine de quatre jours', 'une taxe carbone aux frontières'])} pour les PME. Pèse les arguments et conclus."
        ),
        lambda r: (
            "Tres cajas mal etiquetadas: manzanas, naranjas y mixta. Puedes sacar una fruta de una caja. ¿Cómo corriges todas las etiquetas? Razona paso a paso."
        ),
        lambda r: (
            f"Wir müssen zwischen {r.p(['Kubernetes', 'einem Monolithen'])} und {r.p(['Serverless', 'Microservices'])} entscheiden. Wäge die Vor- und Nachteile sorgfältig ab und gib eine begründete Empfehlung."
        ),
        lambda r: (
            "Un fermier doit traverser une rivière avec un loup, une chèvre et un chou. Trouve la solution minimale et explique pourquoi elle est optimale."
        ),
        lambda r: (
            f"Nuestro {r.p(['churn', 'tráfico'])} subió un {r.n(10, 40)}% después del cambio de precios. ¿Cuáles son las explicaciones causales posibles y cómo distinguirlas?"
        ),
    ],
    "writing": [
        lambda r: (
            f"Schreibe einen Blogartikel (ca. {r.p(['1000', '1500'])} Wörter) über {r.p(['nachhaltige Verpackung', 'Remote-Arbeit', 'Radfahren in der Stadt'])} für {r.p(COMPANIES)}, im Ton unserer Marke: herzlich und klar."
        ),
        lambda r: (
            f"Rédige un communiqué de presse pour le lancement de {r.p(['notre application de budget', 'notre nouvelle gamme de chaussures'])}, avec une citation du PDG."
        ),
        lambda r: (
            f"Escribe un cuento de unas {r.p(['1200', '2000'])} palabras sobre {r.p(['un faro y su guardián', 'dos panaderos rivales'])}."
        ),
        lambda r: (
            f"Schreib eine Rede für die Hochzeit meiner {r.p(['Schwester', 'besten Freundin'])}, lustig und berührend, etwa 5 Minuten."
        ),
        lambda r: (
            f"Écris un texte de page d'accueil pour {r.p(COMPANIES)}, ton chaleureux et premium, environ 600 mots."
        ),
        lambda r: (
            f"Redacta un ensayo largo sobre {r.p(['la ética de la IA', 'el turismo lento'])} para nuestro blog, con una introducción atractiva."
        ),
    ],
}

# Language of every non-English template (English ones are absent): the terse follow-up and the
# canned assistant replies of a conversation continue in it (see followup_text, assistant_reply).
TEMPLATE_LANG: dict[Tpl, str] = {
    t: ("de", "fr", "es")[i % 3] for ts in MULTI.values() for i, t in enumerate(ts)
}

# ---------------------------------------------------------------------------- more languages
# Simplified Chinese, Japanese, Russian and Brazilian Portuguese, first batch: 3 templates per
# language and intent. _interleave() alternates the languages in a per-intent order, so that under
# the i % len(SOURCES) round-robin every source owns two of these languages per intent in this
# batch (the language order differs between intents) and the other two in the second batch.

ZH_NAMES = ["王磊", "李娜", "张伟", "刘洋", "陈静", "老赵", "小周"]
JA_NAMES = ["田中さん", "佐藤さん", "鈴木部長", "高橋さん", "山本さん", "中村課長"]
ZH_CITIES = ["北京", "上海", "深圳", "杭州", "成都", "广州", "东京", "柏林"]
ZH_PARAGRAPHS = [
    "各位好：上周五董事会批准了成都分公司的预算，共计 380 万元，预计 2027 年第三季度开业，首批招聘 35 人。联系人：王磊（wanglei@kite-analytics.cn，电话 138 1234 5678）。",
    "客户反馈：订单 #88213 的实木书桌延迟发货，已经超过承诺时间 12 天。客户要求全额退款，否则会投诉到平台。客服已经第二次跟进，目前还没有结果。",
    "本周进展：支付服务已经迁移到 Postgres 16，搜索和报表两个服务还连着旧的只读副本，需要在周五（3 月 14 日）前改配置。另外下周二要做一次全链路压测。",
]
JA_PARAGRAPHS = [
    "お疲れ様です。3月3日の取締役会で福岡オフィスの予算（2,400万円）が承認されました。開設は2027年第3四半期、初年度は40名体制の予定です。担当：佐藤 健（k.sato@lumenbank.co.jp／03-1234-5678）",
    "お客様より：注文番号88213の商品が破損した状態で届いたとのことです。交換ではなく返金をご希望です。2月14日にも一度お問い合わせをいただいています。",
    "昨日のリリース後、ログイン画面で500エラーが断続的に発生しています。Safariのみで、全ユーザーの約4%に影響。暫定対応として旧バージョンへ切り戻し済みです。",
]
RU_PARAGRAPHS = [
    "Коллеги, добрый день! 3 марта совет директоров утвердил бюджет казанского офиса — 24 млн ₽. Открытие запланировано на III квартал 2027 года, штат 40 человек. Контакт: Ольга Смирнова, o.smirnova@nimbus.ru, +7 912 345-67-89.",
    "Клиент пишет, что заказ № 88213 пришёл с разбитым экраном, и требует вернуть деньги. Это уже второе обращение, первое было 14 февраля, ответа он так и не получил.",
    "Отток во втором квартале вырос до 4,1 % с 3,2 %, в основном среди годовых тарифов после повышения цен. Тикетов по счетам стало вдвое больше. Маркетинг предлагает скидку за лояльность.",
]
PT_PARAGRAPHS = [
    "Pessoal, a diretoria aprovou ontem o orçamento de R$ 2,4 milhões para o escritório de Curitiba, que abre no 3º trimestre de 2027 com 40 pessoas. Contato: Mariana Costa (mariana.costa@verdeoutdoor.com.br, +55 41 99876-5432).",
    "Oi, comprei a mesa de madeira (pedido 88213) e até agora nada. Já passou 20 dias do prazo e ninguém me responde. Quero o reembolso ou uma previsão real de entrega.",
    "Resumo da semana: a migração para o Postgres 16 terminou, mas os serviços de cobrança e busca ainda apontam para a réplica antiga. Precisamos ajustar até sexta, dia 14.",
]
PT_REVIEWS = [
    "Chegou antes do prazo, adorei!",
    "Produto veio com defeito e ninguém responde.",
    "É ok, nada demais.",
    "Péssimo atendimento, nunca mais compro.",
    "Vale cada centavo",
    "A bateria dura umas 2 horas, decepcionado.",
    "Entrega rápida, mas a embalagem veio amassada.",
]


def _interleave(order: str, **by_lang: list[Tpl]) -> list[Tpl]:
    """Templates of several languages, alternating in ``order`` (e.g. ``"zh ja ru pt"``)."""
    langs = order.split()
    assert sorted(langs) == sorted(by_lang) and len({len(v) for v in by_lang.values()}) == 1
    k = len(by_lang[langs[0]])
    TEMPLATE_LANG.update((t, lang) for lang, ts in by_lang.items() for t in ts)
    return [by_lang[lang][i] for i in range(k) for lang in langs]


MULTI["coding"] += _interleave(
    "zh ja ru pt",
    zh=[
        lambda r: (
            f"{r.p(['帮我看下这个报错：', '这个报错怎么回事？', '线上突然报这个错，帮忙定位一下：'])}\n{traceback(r)}\n{r.p(['只在生产环境出现，本地复现不了', '昨天还好好的，今天发版之后就这样了', ''])}"
        ),
        lambda r: (
            f"给 {r.p(PATHS)} 里的 {r.p(FUNCS)} 补{r.p(['单元测试', '单测'])}，用 {r.p(['pytest', 'jest', 'go test', 'JUnit 5'])}，{r.p(['边界情况都要覆盖，比如空输入和负数', '重点测一下并发调用', '记得覆盖时区相关的情况'])}。"
        ),
        lambda r: (
            f"{code_block(r)}\n\n{r.p(['这段代码太慢了，数据量一大就超时，优化一下', '改成线程安全的', '加上错误处理和日志', '补充类型注解和 docstring', '帮我 review 一下，看看有什么问题'])}"
        ),
    ],
    ja=[
        lambda r: (
            f"{r.p(PATHS)} の `{r.p(FUNCS)}` を{r.p(['非同期に書き換えて', 'リファクタリングしてグローバル変数をなくして', 'dataclass を使う形に直して', 'I/O 部分とパース部分に分割して'])}ください。公開APIは変えないでください。"
        ),
        lambda r: (
            f"テストが落ちます。直してもらえますか？\n{test_output(r)}\n実装は {r.p(PATHS)} にあります。"
        ),
        lambda r: (
            f"{r.p(['正規表現で', 'regexで'])}{r.p(['semver（例: 1.2.3-rc.1）', '日本の郵便番号（123-4567形式）', 'IPv4アドレス（999.1.1.1 は除外）', 'TODO か FIXME で始まる行'])}にマッチさせたいです。{r.p(['', 'Pythonで使います。', 'JSで使う想定です。'])}"
        ),
    ],
    ru=[
        lambda r: (
            f"{r.p(['ruff', 'eslint', 'mypy', 'golangci-lint', 'clippy'])} ругается:\n{lint_output(r)}\n{r.p(['поправь, пожалуйста', 'исправь всё это', 'почини, только без лишних изменений'])}"
        ),
        lambda r: (
            f"Напиши SQL-запрос, который {r.p(['возвращает топ-10 клиентов по выручке за последние 90 дней', 'находит пользователей без единого заказа', 'считает недельные когорты удержания', 'удаляет дубликаты, оставляя самую свежую запись'])}. Таблицы: users(id, email, created_at), orders(id, user_id, total, created_at)."
        ),
        lambda r: (
            f"{r.p(['Почему падает?', 'Что здесь не так?', 'Не понимаю, откуда ошибка'])}\n{code_block(r)}\n{traceback(r)}"
        ),
    ],
    pt=[
        lambda r: (
            f"{r.p(['Escreve', 'Escreva', 'Cria'])} uma função em {r.p(LANGS)} que {r.p(['valide CPF', 'remova duplicados de uma lista de dicts mantendo a ordem', 'faça retry com backoff exponencial', 'leia um CSV grande em partes e calcule a média por coluna', 'formate valores em reais (R$ 1.234,56)'])}{r.p(['.', ', com testes.', ' e tipagem completa.'])}"
        ),
        lambda r: (
            f"{r.p(['Revisa esse diff pra mim.', 'Dá uma olhada nesse diff?', 'Pode revisar esse PR?'])} {r.p(['Tem algo arriscado?', 'Vê se quebra alguma coisa.', 'Algum problema de concorrência?'])}\n\n{diff(r)}"
        ),
        lambda r: (
            f"{r.p(['comando bash pra', 'one-liner em bash para', 'como faço no terminal pra'])} {r.p(['achar todos os arquivos maiores que 100MB', 'matar o processo que está na porta 8080', 'renomear *.jpeg para *.jpg recursivamente', 'contar linhas de código python sem os testes'])}?"
        ),
    ],
)
MULTI["tools"] += _interleave(
    "zh ru ja pt",
    zh=[
        lambda r: (
            f"{r.p(ZH_CITIES)}{r.p(['明天', '这周末', '现在', '周五'])}天气怎么样？{r.p(['要不要带伞？', '', '适合跑步吗？'])}",
            "weather",
        ),
        lambda r: (
            f"给{r.p(ZH_NAMES)}发封邮件，说一下{r.p(['周报已经发出了', '明天的会改到下午三点', '发票已经付款了', '演示很顺利，谢谢'])}",
            "email",
        ),
        lambda r: (
            f"查一下{r.p(['昨天', '上周', '十月份'])}的{r.p(['注册用户数', '付费转化', '退款笔数', '日活'])}，直接查数仓",
            "sql",
        ),
    ],
    ru=[
        lambda r: (
            f"{r.p(['Найди', 'Проверь'])} заказ {r.p(['№', '#', ''])}{r.n(10000, 99999)} и скажи, где он сейчас{r.p(['', ' и когда будет доставлен'])}",
            "orders",
        ),
        lambda r: (
            f"Создай тикет: {r.p(['страница входа отдаёт 500 в Safari', 'кнопка экспорта ничего не делает', 'вебхуки приходят с задержкой 10 минут'])}, приоритет {r.p(['высокий', 'P1', 'низкий'])}",
            "tickets",
        ),
        lambda r: (
            f"Найди авиабилеты из {r.p(['Москвы', 'Казани', 'Петербурга'])} в {r.p(['Стамбул', 'Дубай', 'Ереван', 'Сочи'])} на {r.p(['3 декабря', 'следующую пятницу', '14-е'])}, сначала самые дешёвые",
            "flights",
        ),
    ],
    ja=[
        lambda r: (
            f"{r.p(JA_NAMES)}と{r.p(['来週月曜', '明日', '木曜日'])}の{r.n(9, 17)}時から{r.p(['30分', '1時間'])}、{r.p(['定例', '1on1', '打ち合わせ'])}の予定を入れておいて",
            "calendar",
        ),
        lambda r: (
            f"{r.p(['NVDA', 'トヨタ（7203）', 'ソニー（6758）', 'AAPL'])}の今の株価を教えてください",
            "stocks",
        ),
        lambda r: (
            f"{r.p(['Postgres 16', 'OpenTelemetry', '生成AIの規制'])}に関する{r.p(['今週', '直近1週間', '昨日'])}のニュースを検索して、要点を教えて",
            "search",
        ),
    ],
    pt=[
        lambda r: (
            f"Converte {r.n(20, 5000)} {r.p(['dólares', 'euros', 'libras'])} para reais{r.p(['', ' pela cotação de hoje'])}",
            "fx",
        ),
        lambda r: (
            f"Reserva uma mesa pra {r.n(2, 8)} pessoas no {r.p(['Fogo de Chão', 'Mocotó', 'Coco Bambu', 'japonês da esquina'])} {r.p(['hoje às 20h', 'sábado no almoço', 'sexta às 21h'])}",
            "booking",
        ),
        lambda r: (
            f"Me lembra de {r.p(['pagar o boleto', 'renovar o certificado TLS', 'ligar pro contador', 'mandar a nota fiscal'])} {r.p(['amanhã às 9h', 'às 15h', 'sexta de manhã'])}",
            "reminders",
        ),
    ],
)
MULTI["instruction"] += _interleave(
    "zh ja pt ru",
    zh=[
        lambda r: (
            f"用{r.p(['两句话', '一句话', '三个要点', '50 字以内'])}总结下面这段内容：\n{r.p(ZH_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda r: (
            f"判断下面这条工单属于哪一类：账单、技术、账户、其他。只回答一个词。\n\n{r.p(ZH_PARAGRAPHS)}"
        ),
        lambda r: (
            f"把下面的地址拆成省、市、区、街道、邮编字段，输出 YAML：{r.p(['广东省深圳市南山区科技园南路 88 号，邮编 518057', '浙江省杭州市西湖区文三路 478 号 310013', '四川省成都市武侯区天府大道北段 1700 号 610041'])}"
        ),
    ],
    ja=[
        lambda r: (
            f"以下の文章から{r.p(['氏名、メールアドレス、会社名、電話番号', '日付と金額', '担当者名と連絡先'])}を抽出してJSONで返してください。{r.p(['説明は不要です。', 'JSON以外は出力しないでください。', ''])}\n\n{r.p(JA_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda r: (
            f"次の文を{r.p(['もっと丁寧な', 'ビジネス向けの', '簡潔な'])}表現に書き直してください：「{r.p(['明日の会議、無理になったんで来週でいい？', '資料早く送って', 'その件はこっちでは無理です'])}」"
        ),
        lambda r: (
            f"{r.p(['このメモ', '以下の議事メモ'])}を{r.p(['箇条書き（最大5項目）', 'マークダウンの表（項目／担当／期限）', 'CSV'])}に整形して：\n{r.p(JA_PARAGRAPHS)}"
        ),
    ],
    pt=[
        lambda r: (
            "Classifique cada avaliação como positiva, negativa ou neutra. Responda só com os rótulos, um por linha.\n"
            + "\n".join(f"{i + 1}. {r.p(PT_REVIEWS)}" for i in range(r.n(3, 6)))
        ),
        lambda r: (
            f"Extrai nome, e-mail, empresa e telefone desse texto e devolve só o JSON:\n{r.p(PT_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda r: (
            f"Responde só sim ou não: essa mensagem menciona reembolso?\n{r.p(PT_PARAGRAPHS + PARAGRAPHS)}"
        ),
    ],
    ru=[
        lambda r: (
            f"Переведи на {r.p(['английский', 'немецкий', 'китайский'])}: «{r.p(['Доставка придёт завтра до обеда.', 'Пожалуйста, подтвердите время встречи.', 'Мы уже исправили ошибку, извините за неудобства.'])}»"
        ),
        lambda r: (
            f"Преобразуй в формат ISO 8601, по одной дате в строке: {r.p(['3 марта 2026', '03.04.2026', '12/11/2025'])}, {r.p(['2 февраля 2026 г.', '2026/07/01', '30.11.2025'])}"
        ),
        lambda r: (
            f"Сократи до {r.p(['одного предложения', '280 символов', '20 слов'])}, ничего не добавляй:\n{r.p(RU_PARAGRAPHS)}"
        ),
    ],
)
MULTI["math"] += _interleave(
    "ru pt zh ja",
    ru=[
        lambda r: (
            f"Вычисли точно интеграл \\int_0^{{{r.n(1, 4)}}} x^{{{r.n(2, 6)}}} e^{{-{r.n(2, 3)}x}}\\,dx, с выкладками."
        ),
        lambda r: (
            f"Докажи, что при любом натуральном n {r.p(['n^3 - n делится на 6', '7^n - 1 делится на 6', 'сумма первых n кубов равна (n(n+1)/2)^2', '4^n + 15n - 1 делится на 9'])}."
        ),
        lambda r: (
            f"Найди собственные значения и собственные векторы матрицы [[{r.n(1, 5)}, {r.n(0, 3)}], [{r.n(0, 3)}, {r.n(1, 5)}]] и приведи её к диагональному виду."
        ),
    ],
    pt=[
        lambda r: (
            f"Qual a probabilidade de {r.p(['sair exatamente dois pares numa mão de 5 cartas', 'a soma de três dados dar 10', 'pelo menos duas pessoas entre 30 fazerem aniversário no mesmo dia'])}? Quero a fração exata e depois o decimal."
        ),
        lambda r: (
            f"Quantos divisores positivos tem {r.n(1000, 99999)}? E qual a soma deles? Mostra a fatoração."
        ),
        lambda r: (
            f"Resolve a EDO y'' + {r.n(1, 6)}y' + {r.n(1, 9)}y = {r.p(['e^{-x}', 'sen x', '0', 'x^2'])} com y(0) = 1 e y'(0) = 0."
        ),
    ],
    zh=[
        lambda r: f"求 {r.n(3, 99)}^{r.n(100, 2026)} 的最后{r.p(['两', '三', '四'])}位数字，写出过程。",
        lambda r: (
            f"{r.n(6, 12)} 个人围坐一张圆桌，其中{'和'.join(r.sample(ZH_NAMES, 2))}不能相邻，一共有多少种坐法？"
        ),
        lambda r: f"计算极限 lim_{{x→0}} (sin({r.n(2, 5)}x) - {r.n(2, 5)}x) / x^3，用泰勒展开做。",
    ],
    ja=[
        lambda r: (
            f"次の漸化式の一般項を求めよ：a_n = {r.n(2, 6)}a_{{n-1}} - {r.n(1, 9)}a_{{n-2}}, a_0 = {r.n(0, 3)}, a_1 = {r.n(1, 5)}"
        ),
        lambda r: f"√{r.p(['2', '3', '5', '6'])} が無理数であることを厳密に証明してください。",
        lambda r: (
            f"\\sum_{{k=1}}^{{\\infty}} \\frac{{k^{r.n(1, 3)}}}{{{r.n(2, 5)}^k}} の値を閉じた形で求めてください。途中式もお願いします。"
        ),
    ],
)
MULTI["reasoning"] += _interleave(
    "pt ja zh ru",
    pt=[
        lambda r: (
            f"Estamos decidindo entre {r.p(['Postgres', 'um monólito', 'comprar uma ferramenta pronta'])} e {r.p(['DynamoDB', 'microsserviços', 'desenvolver internamente'])} para {r.p(['uma startup de 6 pessoas', 'um banco regulado', 'o roadmap dos próximos dois anos'])}. Analisa os trade-offs com cuidado e fecha uma recomendação."
        ),
        lambda r: (
            "Três caixas com rótulos maçãs, laranjas e mistas; todos os rótulos estão errados. Você pode tirar uma fruta de uma caixa só. Como corrigir todos os rótulos? Depois generaliza para quatro caixas."
        ),
        lambda r: (
            f"Acha a falha nesse argumento: '{r.p(['Toda vez que rodamos anúncios as vendas sobem, então anúncios causam vendas', 'Ninguém provou que é perigoso, então é seguro', 'A maioria das startups que captam muito dá certo, então captar muito causa sucesso'])}'. Seja preciso sobre qual inferência falha."
        ),
    ],
    ja=[
        lambda r: (
            "騎士は常に本当のことを言い、悪党は常に嘘をつきます。Aは「私たちのうち少なくとも一人は悪党だ」と言い、Bは「騎士はちょうど一人だ」と言いました。それぞれ騎士か悪党か、場合分けして答えてください。"
        ),
        lambda r: (
            f"{r.p(['週休3日制', '本社の地方移転', 'フルリモート勤務の廃止'])}を導入した場合、{r.p(['中小企業', '若手社員の育成', '地域経済'])}にどんな二次的影響が出るか、インセンティブや副作用も含めて深く考察してください。"
        ),
        lambda r: (
            f"タスクAはBより先、Cは{r.p(['月曜', '火曜'])}不可、DとEは同じ日、BはDより後。3日間で各日2枠しかありません。条件を満たすスケジュールを見つけるか、存在しないことを証明してください。"
        ),
    ],
    zh=[
        lambda r: (
            "A 说 B 在说谎，B 说 C 在说谎，C 说 A 和 B 都在说谎。到底谁说的是真话？把每种情况都推一遍。"
        ),
        lambda r: (
            f"我们团队{r.n(4, 8)}个人，要在{r.p(['自研', '上 Kubernetes', '重写成 Rust'])}和{r.p(['买现成的 SaaS', '继续用虚拟机', '维持现有的 Python 代码'])}之间做决定。请仔细权衡利弊、风险和长期成本，最后给出明确建议。"
        ),
        lambda r: (
            "8 支球队单循环比赛，每两队只赛一场，没有平局。有没有可能每支球队的胜场数都等于负场数？不要穷举，讲清楚推理。"
        ),
    ],
    ru=[
        lambda r: (
            f"Наша {r.p(['конверсия', 'недельная аудитория', 'p99-задержка'])} изменилась на {r.n(5, 40)}% через неделю после того, как {r.p(['мы поменяли цены', 'вышел редизайн', 'конкурент запустил аналог'])}. Перечисли конкурирующие причинные объяснения и предложи, как их различить. Рассуждай строго."
        ),
        lambda r: (
            "Три мудреца в колпаках из набора: 3 белых и 2 чёрных. Каждый видит колпаки других, но не свой. Первые двое говорят, что не знают цвет своего колпака. Что может заключить третий и почему?"
        ),
        lambda r: (
            f"Побудь адвокатом дьявола: почему наш план {r.p(['выйти на рынок Казахстана в следующем квартале', 'убрать бесплатный тариф', 'переписать бэкенд на Rust'])} может провалиться? Ранжируй риски по вероятности и ущербу и скажи, что заставило бы тебя передумать."
        ),
    ],
)
MULTI["writing"] += _interleave(
    "ja zh ru pt",
    ja=[
        lambda r: (
            f"{r.p(COMPANIES)}のオウンドメディア向けに、「{r.p(['リモートワークと燃え尽き', '小さなチームが速く出荷できる理由', '持続可能なパッケージ', '睡眠と生産性'])}」をテーマにしたブログ記事を{r.p(['3000', '4000', '5000'])}字程度で書いてください。トーンは{r.p(['親しみやすく、専門用語は少なめ', '落ち着いた上質な感じ', 'テンポよく、少し遊び心のある感じ'])}で。"
        ),
        lambda r: (
            f"{r.p(['妹', '親友', '上司', '同期'])}の{r.p(['結婚式', '送別会', '退職祝い'])}で話すスピーチ原稿を書いてください。{r.p(['5分くらい', '3分程度'])}で、笑いあり涙ありの感じでお願いします。"
        ),
        lambda r: (
            f"{r.p(['キャンプ場', '海辺の町', '東京の下町'])}を舞台にした短編小説を{r.p(['8000', '10000'])}字くらいで書いてください。主人公は{r.p(['定年を迎えた郵便局員', '中学生の女の子', '売れない漫画家'])}で、最後に少し希望が残る結末に。"
        ),
    ],
    zh=[
        lambda r: (
            f"帮我写一篇新品发布新闻稿：{r.p(COMPANIES)}{r.p(['推出太阳能电动自行车', '发布新一代智能温控器', '上线零手续费储蓄账户'])}。要有 CEO 引语和公司简介段落，{r.p(['正式一点', '适合直接发给媒体'])}。"
        ),
        lambda r: (
            f"给我们的{r.p(['智能记账 App', '植物蛋白棒', '儿童编程平板', '降噪耳机'])}写一版落地页文案：主标题、副标题、三个卖点模块、用户评价和行动号召。品牌调性：{r.p(['温暖、真诚、接地气', '高级、克制、有质感', '年轻、俏皮、短句多'])}。"
        ),
        lambda r: (
            f"写一篇关于{r.p(['城市骑行的未来', '慢旅行', '远程办公倦怠', 'AI 招聘的伦理'])}的长文，{r.p(['3000', '5000'])} 字左右，开头要抓人，可以加入个人经历。"
        ),
    ],
    ru=[
        lambda r: (
            f"Напиши рассказ примерно на {r.p(['10 000', '15 000'])} знаков о {r.p(['смотрителе маяка, который получает письма из будущего', 'двух соперничающих пекарях из Казани', 'последнем дне в летнем лагере'])}. {r.p(['Атмосферно, без хэппи-энда.', 'Тёплый, немного грустный.', ''])}"
        ),
        lambda r: (
            f"Подготовь пресс-релиз о запуске {r.p(['нового приложения для личного бюджета', 'линейки беговых кроссовок 2027 года', 'умного термостата'])} компании {r.p(COMPANIES)}: цитата генерального директора, ключевые факты, блок «О компании»."
        ),
        lambda r: (
            f"Напиши лонгрид для корпоративного блога {r.p(COMPANIES)} на тему «{r.p(['Почему маленькие команды релизят быстрее', 'Финансовая грамотность для зумеров', 'Устойчивая упаковка'])}», около {r.p(['8000', '12 000'])} знаков, живым языком, с примерами."
        ),
    ],
    pt=[
        lambda r: (
            f"Escreve um post de blog de umas {r.p(['1200', '1500', '2000'])} palavras sobre {r.p(['educação financeira para a geração Z', 'burnout no trabalho remoto', 'embalagens sustentáveis', 'mobilidade urbana de bicicleta'])} para a {r.p(COMPANIES)}. Tom de voz: {r.p(['leve, bem-humorado e direto', 'confiante sem ser vendedor', 'acolhedor e sem jargão'])}."
        ),
        lambda r: (
            f"Preciso de um discurso de {r.p(['formatura', 'abertura da convenção anual de clientes', 'lançamento do produto'])} de uns {r.p(['10', '15'])} minutos, inspirador mas sem ser brega."
        ),
        lambda r: (
            f"Escreve a newsletter mensal para os clientes da {r.p(COMPANIES)} sobre {r.p(['as novidades do produto', 'nosso relatório de sustentabilidade', 'o horário de fim de ano e um recado do fundador'])}. Texto longo, no nosso tom: {r.p(['caloroso e próximo', 'divertido e direto'])}."
        ),
    ],
)

# ---------------------------------------------------------------------------- second batch
# 3 more templates per language and intent, of other kinds than the first batch (writing: posts,
# letters, product copy, toasts; reasoning: post-mortems, "why" analyses, decisions, puzzles;
# instruction: translations, fixed-label classification, extraction, strict reformatting). Each
# intent uses the partner order of its first batch ("a b c d" -> "b a d c"): a language that got
# the even sources there gets the odd ones here, so every source owns exactly one template per
# language and intent.

RU_NAMES = ["Ольга", "Дмитрий", "Сергей", "Аня", "Игорь", "Марина", "Павел"]


def _zh_seating(r: Rand) -> str:
    a, b, c, d, e, f = r.sample(ZH_NAMES, 6)
    return (
        f"年会排座位，一张圆桌坐 6 个人：{a}、{b}、{c}、{d}、{e}、{f}。要求：{a}和{b}不能挨着坐；{c}必须坐在{d}正对面；"
        f"{e}要坐在{a}的左手边；{f}不想挨着{c}。有没有满足所有条件的坐法？有的话给出一种并写清推理过程，没有的话证明为什么不行。"
    )


def _zh_founder_letter(r: Rand) -> str:
    topic, notes = r.p(
        [
            (
                "会员价格要上调",
                [
                    "服务器和人力成本这两年涨了不少，云费用一年涨了 40%",
                    "老用户保留原价到年底",
                    "涨价后要做的三件事：离线模式、多端同步、客服 2 小时内响应",
                    "真诚道歉，也真诚感谢",
                ],
            ),
            (
                "公司成立五周年",
                [
                    "五年前三个人在出租屋里写下第一行代码",
                    "现在有 120 万用户，最难的时候账上只剩两个月工资",
                    "感谢最早一批用户提的建议，很多功能是他们提出来的",
                    "下一个五年想做的事",
                ],
            ),
            (
                "我们决定停掉免费版",
                [
                    "免费版用户占 80%，但我们已经养不起了",
                    "6 月 30 日之后免费版变成只读，数据不会删",
                    "老用户首年五折",
                    "我们知道这会让一些人失望",
                ],
            ),
        ]
    )
    bullets = "\n".join(f"- {x}" for x in notes)
    return (
        f"以创始人的口吻给用户写一封信，说明{topic}。要点如下，请写成一封真诚、有温度的长信（1500 字左右），"
        f"{r.p(['不要写成冷冰冰的公告', '别有公关腔', '语气像跟老朋友说话'])}：\n{bullets}"
    )


def _zh_product_copy(r: Rand) -> str:
    product, point = r.p(
        [
            ("这款保温杯", "设计感和 12 小时保温"),
            ("我们新出的降噪耳机", "降噪效果和续航"),
            ("这款儿童编程平板", "安全、护眼和好上手"),
            ("一款植物蛋白棒", "口感和低糖"),
        ]
    )
    return (
        f"给{product}写一段电商详情页文案，突出{point}，"
        f"{r.p(['风格参考小红书种草笔记', '走高级简约路线', '接地气一点，别太官方'])}，500 字左右。"
    )


def _ja_eulogy(r: Rand) -> str:
    who, memory = r.p(
        [
            ("30年お世話になった会社の先輩", "釣りが好きで、いつも新人の面倒を見てくれる人でした。"),
            ("大学時代の恩師", "厳しい方でしたが、卒業後もずっと気にかけてくださいました。"),
            ("祖父", "戦後、小さな町工場を一代で築いた人です。"),
        ]
    )
    return (
        f"{who}の告別式で読む弔辞を書いてください。{memory}"
        "3〜4分程度で、しめっぽくなりすぎないようにお願いします。"
    )


def _ja_ranking(r: Rand) -> str:
    return (
        f"A、B、C、D、Eの5人が{r.p(['社内マラソン大会', '営業成績のランキング', '徒競走'])}で順位を競いました。"
        "A「私はBより上だった」B「私は1位ではない」C「私はDのすぐ後だった」D「Eは最下位だった」E「Aは3位だった」。"
        "このうち1人だけが嘘をついています。順位は一通りに決まりますか？どう絞り込んだか、場合分けして説明してください。"
    )


def _ru_rota(r: Rand) -> str:
    a, b, c, d, e = r.sample(RU_NAMES, 5)
    extra = r.p(["", f"; {c} просит вторник", f"; {e} не может в пятницу"])
    return (
        f"Составь график дежурств на неделю (пн–пт), по одному человеку в день: {a}, {b}, {c}, {d}, {e}. "
        f"Условия: {a} не может в понедельник и в среду; {b} и {c} не должны дежурить в соседние дни; "
        f"{d} дежурит позже, чем {e}; в пятницу дежурит {a} или {b}{extra}. "
        "Найди расписание или докажи, что его нет. Рассуждай по шагам."
    )


def _ru_toast(r: Rand) -> str:
    occasion, detail = r.p(
        [
            (
                "юбилей отца, ему 60",
                "Всю жизнь проработал инженером на заводе, обожает рыбалку и свою старую «Ниву».",
            ),
            (
                "свадьбу лучшего друга",
                "Познакомились на первом курсе, вместе ходили в походы по Карелии и чуть не утонули на байдарке.",
            ),
            (
                "проводы коллеги на пенсию",
                "Она 25 лет вела у нас бухгалтерию и всех подкармливала пирожками.",
            ),
        ]
    )
    return (
        f"Помоги с тостом на {occasion}. {detail} Хочется тепло и с юмором, минуты на две, "
        f"без банальностей{r.p(['', ' и без стихов', ', чтобы в конце все подняли бокалы'])}."
    )


def _ru_case_study(r: Rand) -> str:
    before, done, after = r.p(
        [
            (
                "отчёты собирали вручную, 3 дня в месяц",
                "интеграция с 1С и CRM за 6 недель",
                "отчёт за 15 минут, ошибок в счетах на 70 % меньше",
            ),
            (
                "заявки терялись в почте, ответ клиенту — 2 дня",
                "единое окно обращений и чат-бот в Telegram",
                "ответ за 20 минут, NPS вырос с 31 до 58",
            ),
            (
                "склад считали в Excel, пересорт каждую неделю",
                "ТСД и учёт по штрихкодам за 2 месяца",
                "инвентаризация за день вместо недели, пересорт почти исчез",
            ),
        ]
    )
    return (
        f"Нужен кейс для сайта: как {r.p(COMPANIES)} внедрила наш продукт. Исходные данные:\n"
        f"— было: {before}\n— сделали: {done}\n— стало: {after}\n"
        f"— цитата клиента: «{r.p(['Не верили, что так бывает', 'Жалеем только, что не сделали этого раньше', 'Команда наконец занимается делом, а не таблицами'])}»\n"
        "Структура: задача, решение, результат. Объём 4–5 тысяч знаков, живым языком, без канцелярита."
    )


def _pt_toast(r: Rand) -> str:
    occasion, detail = r.p(
        [
            (
                "pro aniversário de 60 anos da minha mãe",
                "Ela foi professora a vida toda, criou três filhos praticamente sozinha e ama samba.",
            ),
            (
                "pro casamento do meu irmão",
                "A gente dividiu quarto até os 18 e ele sempre foi o certinho da família.",
            ),
            (
                "pra despedida do nosso chefe que vai se aposentar",
                "Ele tá há 30 anos na empresa e conhece todo mundo pelo nome, até o pessoal da portaria.",
            ),
        ]
    )
    return (
        f"Escreve um brinde {occasion}. {detail} Uns 2 minutos de fala, engraçado no começo "
        f"e que emocione no final{r.p(['', ', sem clichê', '. Nada muito formal'])}."
    )


PT_NOTES = [
    "- fui desligado semana passada no layoff\n- 4 anos lá, montei o time de dados do zero\n- aprendi muito, sem mágoa nenhuma\n- procurando vaga de head de dados ou staff, remoto",
    "- nosso app passou de 1 milhão de usuários\n- começamos em 3 pessoas numa sala emprestada em Recife\n- agradecer clientes e o time\n- estamos contratando devs backend",
    "- voltei hoje da licença-paternidade\n- foram 5 meses fora\n- a empresa apoiou de verdade\n- acho que mais homens deviam tirar licença longa",
]
PT_MINUTES = [
    "Ata – planejamento Q3\n- Presentes: Bruna (produto), Rafael (dev), Thiago (vendas)\n- Projetor não funcionou, 20 min perdidos\n- Decidido: lançar o app novo em setembro\n- Rafael contra, acha o prazo apertado\n- Thiago prometeu 50 clientes piloto\n- Café acabou às 10h",
    "Ata – retrospectiva da Black Friday\n- Site caiu 2x (21h e 23h40)\n- Time de infra virou a noite, pizza às 3h\n- Vendas 18% acima da meta mesmo assim\n- Ação: teste de carga em outubro, não em novembro\n- Fernanda ganhou o apelido de 'a salvadora do checkout'",
]


def _pt_bullets(r: Rand) -> str:
    return (
        f"Reescreve isso em 3 bullet points, curtos e diretos, sem introdução{r.p(['', ' nem conclusão'])}:\n"
        f"{r.p(PT_PARAGRAPHS)}"
    )


MULTI["coding"] += _interleave(
    "ja zh pt ru",
    ja=[
        lambda r: (
            f"型チェッカーに怒られてます：\n`{r.p(TYPE_ERRORS)}`\nファイルは {r.p(PATHS)} です。"
            f"{r.p(['# type: ignore で黙らせるんじゃなくて、', 'cast で逃げずに、', ''])}ちゃんとした直し方を教えてください。"
        ),
        lambda r: (
            f"{r.p(['前任者が書いたコードで、誰も読めなくて困ってます。', 'レビューで指摘されたんですが、正直何をしてるのかよく分かってません…', ''])}"
            f"このコードが何をしているか1行ずつ説明して、そのあともっとシンプルに書き直してもらえますか？\n{code_block(r)}"
        ),
        lambda r: (
            f"{r.p(['orders', 'users', 'invoices'])} テーブルに NOT NULL の `{r.p(['tenant_id', 'currency', 'region'])}` カラムを追加する"
            f"マイグレーションを書いてください。本番は{r.p(['約8000万行', '数千万行', '3億行近く'])}あるので、長時間ロックしない方法で。"
            f"{r.p(['Alembic', 'Rails の migration', 'Flyway', 'Prisma'])}を使っています。"
        ),
    ],
    zh=[
        lambda r: (
            f"{r.p(['帮忙写个', '给我写一个', '需要一个'])} {r.p(['Dockerfile', 'GitHub Actions workflow', 'docker-compose.yml', 'GitLab CI 配置'])}，"
            f"项目是{r.p(['FastAPI + uvicorn', 'Go 写的后端服务', 'Next.js 前端', 'Spring Boot 应用'])}，要求："
            f"{'；'.join(r.sample(['多阶段构建', '依赖要缓存', '用非 root 用户跑', '加健康检查', '镜像尽量小', '推到阿里云镜像仓库'], 3))}。"
            f"{r.p(['', '直接给文件内容就行，不用解释', '顺便说下每一步为啥这么写'])}"
        ),
        lambda r: (
            f"git 问题：{r.p(['不小心把 .env 提交了而且已经 push 到远程了，怎么从历史里彻底删掉？', '怎么把最近三个 commit 合成一个再推上去？', 'rebase 到一半冲突一大堆，怎么放弃回到 rebase 之前的状态', '线上有个 bug 不知道是哪次提交引入的，git bisect 具体怎么用？', '两个分支改了同一个文件，cherry-pick 老是冲突，有没有更好的办法'])}"
        ),
        lambda r: (
            f"{r.p(['/api/orders', '/users/:id', '/v1/invoices'])} 这个接口要加{r.p(['游标分页', '限流（每个用户每分钟 60 次）', '软删除', '审计日志', 'CSV 导出'])}，"
            f"我们用的是 {r.p(['FastAPI', 'Gin', 'Spring Boot', 'Express', 'Django'])}。现在的代码：\n{code_block(r)}\n"
            f"{r.p(['改完把对应的测试也补上', '返回格式不要动，前端在用', '尽量少改动'])}"
        ),
    ],
    pt=[
        lambda r: (
            f"{r.p(['termina essa função pra mim', 'completa o código abaixo', 'implementa o resto, por favor'])}"
            f"{r.p(['', ' com testes', ', sem lib externa'])}:\n{r.p(CODE_STUBS)}"
        ),
        lambda r: (
            f"nosso {r.p(['worker da fila', 'serviço de pagamentos', 'cache em memória'])} "
            f"{r.p(['ta vazando memoria', 'trava de vez em quando, acho que é deadlock', 'as vezes retorna dado velho'])} "
            f"em produção e ninguem descobre o porque. segue o codigo:\n{code_block(r)}\nonde ta o problema?"
        ),
        lambda r: (
            f"Tô tomando `{r.p(['ModuleNotFoundError: No module named yaml', 'ECONNREFUSED 127.0.0.1:5432', 'permission denied (publickey)', 'CORS policy: No Access-Control-Allow-Origin header'])}` "
            f"quando {r.p(['subo o app no docker', 'faço deploy em staging', 'rodo os testes no CI', 'inicio o servidor de dev'])}. "
            f"{r.p(['Localmente funciona normal.', 'Já reiniciei o container e nada.', 'Começou depois que atualizei as dependências.'])} Alguma ideia?"
        ),
    ],
    ru=[
        lambda r: (
            f"Перепиши на {r.p(LANGS)}, поведение должно остаться тем же"
            f"{r.p(['', ', и добавь обработку ошибок', ', без сторонних библиотек'])}:\n{code_block(r)}"
        ),
        lambda r: (
            f"Нужен {r.p(['Kubernetes Deployment и Service', 'Helm-чарт', 'docker-compose.yml', 'манифест для ArgoCD'])} "
            f"для {r.p(['сервиса на Go', 'FastAPI-приложения', 'воркера очереди на Python', 'фронта на Next.js'])}: "
            f"{', '.join(r.sample(['2 реплики', 'readiness и liveness пробы', 'лимит памяти 512Mi', 'секреты из Vault', 'HPA по CPU', 'запуск не от root'], 3))}."
            f"{r.p([' Без объяснений, только YAML.', ' Коротко поясни ключевые места.', ''])}"
        ),
        lambda r: (
            f"в чем разница между {r.p(['asyncio.gather и TaskGroup', 'useMemo и useCallback', 'Mutex и RWMutex', 'Arc<Mutex<T>> и RefCell', 'LEFT JOIN и подзапросом с EXISTS'])} "
            f"и что лучше взять вот здесь?\n{code_block(r)}"
        ),
    ],
)
MULTI["tools"] += _interleave(
    "ru zh pt ja",
    ru=[
        lambda r: (
            f"Какая погода {r.p(['в Казани', 'в Москве', 'в Новосибирске', 'в Сочи'])} {r.p(['на выходных', 'завтра', 'в пятницу'])}? "
            f"{r.p(['Зонт брать?', '', 'Хотим на дачу поехать'])}",
            "weather",
        ),
        lambda r: (
            f"Найди в CRM контакт {r.p(['o.smirnova@nimbus.ru', 'i.petrov@lumenbank.ru', 'anna.k@kite.io'])} и поменяй телефон "
            f"на +7 9{r.n(10, 99)} {r.n(100, 999)}-{r.n(10, 99)}-{r.n(10, 99)}",
            "crm",
        ),
        lambda r: (
            f"{r.p(['Прогони тесты в песочнице', 'Запусти тесты', 'Посмотри, что лежит в src/, прогони линтер'])} и покажи, что упало",
            "fs",
        ),
    ],
    zh=[
        lambda r: (
            f"在 #{r.p(['deploys', 'oncall', 'general', '研发群'])} 频道里发个消息，说{r.p(['发布已经完成了', '今天的站会改到 10:30', '故障已经恢复', '今晚 10 点停机维护'])}",
            "slack",
        ),
        lambda r: (
            f"看看 {r.p(['acme/web', 'kite/etl', '我们的 monorepo'])} 现在有哪些打开的 PR，哪些在等我 review",
            "github",
        ),
        lambda r: (
            f"帮我查{r.p(['下周五', '12 月 3 号', '明天一早'])}从{r.p(['上海', '北京', '杭州'])}飞{r.p(['深圳', '成都', '东京'])}的机票，"
            f"{r.p(['按价格从低到高排', '只要直飞的', '最好是上午的航班'])}",
            "flights",
        ),
    ],
    pt=[
        lambda r: (
            f"Manda um e-mail {r.p(['pro Rafael', 'pra Bruna', 'pro João do financeiro', 'pra equipe de vendas'])} avisando que "
            f"{r.p(['o relatório tá pronto', 'vou me atrasar amanhã', 'a nota fiscal já foi paga', 'a reunião mudou pras 15h'])}",
            "email",
        ),
        lambda r: (
            f"Puxa do data warehouse {r.p(['a receita de ontem por estado', 'quantos cadastros tivemos semana passada', 'o número de reembolsos em outubro', 'os usuários ativos por dia nos últimos 7 dias'])}",
            "sql",
        ),
        lambda r: (
            f"O que eu tenho na agenda {r.p(['amanhã', 'na quinta', 'semana que vem'])}? "
            f"{r.p(['Se tiver horário livre à tarde, marca 1h com a Bruna', '', 'Preciso encaixar uma call de 30 min'])}",
            "calendar",
        ),
    ],
    ja=[
        lambda r: (
            f"注文番号{r.n(10000, 99999)}、{r.p(['商品が破損して届いたとのことなので', 'お客様都合のキャンセルなので', '二重決済になっているので'])}返金処理をお願いします",
            "orders",
        ),
        lambda r: (
            f"{r.p(['ステージング', 'status.acme.io', 'api.kiteanalytics.com', '社内Wiki'])}落ちてない？{r.p(['ちょっと確認して', '応答あるか見てみて', ''])}",
            "http",
        ),
        lambda r: (
            f"{r.p(['明日の朝9時', '今日の15時', '金曜の夕方'])}に「{r.p(['請求書を送る', 'TLS証明書を更新する', '田中さんに電話', '経費精算を出す'])}」ってリマインドして",
            "reminders",
        ),
    ],
)
MULTI["instruction"] += _interleave(
    "ja zh ru pt",
    ja=[
        lambda r: (
            "以下の問い合わせを「請求」「技術」「アカウント」「その他」のどれかに分類してください。出力は「番号: ラベル」の形式のみで。\n"
            + "\n".join(
                f"{i + 1}. {t}"
                for i, t in enumerate(
                    r.sample(
                        [
                            "先月分の請求書が二重に届いています",
                            "ログインしようとすると500エラーになります",
                            "パスワードを忘れてしまいました",
                            "登録メールアドレスを変更したいです",
                            "APIのレスポンスがたまにすごく遅いです",
                            "御社の住所を教えてください",
                            "カードの有効期限が切れたので更新したい",
                            "CSVエクスポートで文字化けします",
                        ],
                        r.n(3, 5),
                    )
                )
            )
        ),
        lambda r: (
            "アプリのUI文言を英語に翻訳してください。キーはそのまま、値だけ訳してJSONで返してください。\n{\n"
            + ",\n".join(
                f'  "{k}": "{v}"'
                for k, v in r.sample(
                    [
                        ("login.title", "ログイン"),
                        ("login.forgot", "パスワードをお忘れですか？"),
                        ("cart.empty", "カートに商品がありません"),
                        ("checkout.pay", "お支払いに進む"),
                        ("profile.saved", "変更を保存しました"),
                        ("error.network", "通信エラーが発生しました。時間をおいて再度お試しください"),
                    ],
                    r.n(3, 5),
                )
            )
            + "\n}"
        ),
        lambda r: (
            "次の寸法をセンチメートルに換算して、「品名: 幅×奥行×高さ cm」（小数点以下1桁）の形式で1行ずつ出してください。説明は不要です。\n"
            + "\n".join(
                f"{t}: {r.n(20, 70)} x {r.n(10, 40)} x {r.n(10, 50)} inch"
                for t in r.sample(["デスク", "本棚", "モニター台", "ソファ", "キャビネット"], r.n(2, 4))
            )
        ),
    ],
    zh=[
        lambda r: (
            f"翻译成{r.p(['英文', '日文', '地道的英文'])}，只要译文，不要解释："
            f"{r.p(['货已经发出，预计周四送达。', '麻烦确认一下会议时间，谢谢。', '问题已经修复，给您带来的不便深表歉意。', '本周五下午系统维护，期间无法登录。'])}"
        ),
        lambda r: (
            f"帮我改一下错别字和病句，{r.p(['意思和语气都别动', '只改错的地方，别润色'])}，只输出改好的文本：\n"
            + r.p(
                [
                    "各位同事：因为服务器迁移，周五晚上系统会暂停使用，请大家提前做好准备，在此期间如有紧急问题在联系值班同事，谢谢大家的的配合。",
                    "经过这次项目，让我们团队学到了很多，尤其是在沟通方面，以后我们会再接再励，争取做的更好。",
                    "您好，您反应的问题我们已经收到，技术同事正在抓紧处理，预计明天给您答复，请您耐心等侍。",
                ]
            )
        ),
        lambda r: (
            "把下面的日期统一成 YYYY-MM-DD，金额统一成保留两位小数的人民币格式（例：¥1,234.00），一行一条，格式：日期 | 金额。不要任何解释。\n"
            + "\n".join(
                r.sample(
                    [
                        "2026年3月5日 付款 1200 元",
                        "2026年4月1日退款八百块",
                        "26/07/01 收到 3.5 万",
                        "2025.11.30 报销 ¥86.5",
                        "上周五（2026/2/13）支付 2,400",
                        "2025年12月9号 押金 5k",
                    ],
                    r.n(3, 5),
                )
            )
        ),
    ],
    ru=[
        lambda r: (
            "Вытащи из текста реквизиты и верни JSON с полями inn, kpp, company, amount, date. Ничего, кроме JSON.\n\n"
            + r.p(
                [
                    "Счёт № 417 от 12.03.2026. Поставщик: ООО «Северный ветер», ИНН 7701234567, КПП 770101001. Итого к оплате: 184 500,00 руб., в т. ч. НДС 20 %.",
                    "Добрый день! Направляем счёт за хостинг за февраль: ООО «Облако Плюс», ИНН 5402123456, КПП 540201001, сумма 36 000 ₽, оплатить до 5 марта 2026 г.",
                    "АО «ТехноСнаб», ИНН 6658012345 / КПП 665801001. Акт сверки на 31.12.2025, задолженность в вашу пользу 1 250 000 руб.",
                ]
            )
        ),
        lambda r: (
            f"Исправь только орфографию и пунктуацию, {r.p(['стиль не трогай', 'ничего не переписывай'])}:\n"
            + r.p(
                [
                    "Добрый день Коллеги! Напоминаю что в пятницу в 15:00 состоится встреча по итогам квартала, прошу всех подготовить отчеты и прислать их мне до четверга заранее спасибо.",
                    "В связи с переездом офиса, доступ к серверной будет ограничен с 10 по 12 марта. Просьба, все вопросы решать через дежурного администратора.",
                    "Мы провели анализ и выяснили что причиной сбоя стала ошибка в конфигураций балансировщика, которая была исправленна в течении часа.",
                ]
            )
        ),
        lambda r: (
            "Разметь обращения из чата поддержки одной меткой из списка: ОПЛАТА, ДОСТАВКА, ВОЗВРАТ, ДРУГОЕ. Формат: номер — метка, без комментариев.\n"
            + "\n".join(
                f"{i + 1}) {t}"
                for i, t in enumerate(
                    r.sample(
                        [
                            "не проходит оплата картой мир",
                            "где мой заказ?? уже неделю жду",
                            "хочу вернуть кроссовки, не подошёл размер",
                            "списали деньги дважды",
                            "курьер не позвонил и уехал",
                            "у вас есть самовывоз в Казани?",
                            "пришёл не тот цвет, как оформить возврат",
                        ],
                        r.n(3, 6),
                    )
                )
            )
        ),
    ],
    pt=[
        lambda r: (
            "Transforma essas mensagens em CSV com as colunas nome;produto;quantidade;cidade. Só o CSV, sem comentário.\n"
            + "\n".join(
                r.sample(
                    [
                        "[09:14] Juliana: oi! quero 3 potes do mel de laranjeira, entrega em Campinas",
                        "[09:20] Marcos (Niterói): 2 cafés especiais 250g pfv",
                        "[10:02] Dona Célia: me separa 1 queijo canastra, sou de BH",
                        "[10:45] Pedro - Santos: 6 garrafas de cachaça envelhecida",
                        "[11:30] Ana Paula: 4 granolas sem açúcar, Curitiba",
                    ],
                    r.n(3, 5),
                )
            )
        ),
        _pt_bullets,
        lambda r: (
            f"Traduz pro {r.p(['inglês', 'espanhol'])}, só a tradução: "
            f'"{r.p(["O pedido já foi enviado e chega na quinta.", "Consegue confirmar o horário da reunião?", "Corrigimos o problema, desculpa pelo transtorno.", "Segue em anexo a nota fiscal referente a março."])}"'
        ),
    ],
)
MULTI["math"] += _interleave(
    "pt ru ja zh",
    pt=[
        lambda r: f"Calcula o limite quando x → 0 de (1 - cos({r.n(2, 5)}x)) / x^2 sem usar L'Hôpital.",
        lambda r: (
            f"Um empréstimo de R$ {r.n(10, 200)}.000 a {r.p(['1,2', '1,5', '2,1', '0,9'])}% ao mês, em {r.p(['12', '24', '36', '48'])} "
            "parcelas fixas (tabela Price). Qual o valor da parcela e quanto pago de juros no total? Mostra a fórmula."
        ),
        lambda r: (
            f"Quantos números de {r.n(5, 8)} dígitos têm soma dos dígitos igual a {r.n(15, 30)}? "
            "Resolve com funções geradoras ou inclusão-exclusão."
        ),
    ],
    ru=[
        lambda r: (
            f"Найди все натуральные решения уравнения {r.n(2, 9)}x + {r.n(10, 40)}y = {r.n(50, 400)}. Объясни, как получил."
        ),
        lambda r: (
            f"В мешке {r.n(3, 9)} красных и {r.n(3, 9)} синих шаров. Тянем без возвращения, пока не появятся оба цвета. "
            "Найди математическое ожидание числа вытянутых шаров."
        ),
        lambda r: (
            f"Найди площадь фигуры, ограниченной кривой r = {r.n(2, 4)} + {r.n(1, 2)}cos θ. Распиши интеграл."
        ),
    ],
    ja=[
        lambda r: (
            f"サイコロを{r.n(4, 10)}回振ったとき、{r.p(['6の目がちょうど2回出る', '出た目の和が偶数になる', '同じ目が一度も続けて出ない', '1の目が少なくとも1回出る'])}"
            "確率を既約分数で求めてください。"
        ),
        lambda r: (
            (
                lambda m: (
                    f"(0,0) から ({m},{m}) まで右か上に1マスずつ進む経路のうち、直線 y = x より上に出ないものは何通りですか。"
                )
            )(r.n(4, 9))
            + "一般の n についても式を示してください。"
        ),
        lambda r: (
            f"ABテストの結果です。A: {r.n(1000, 3000)}人中{r.n(50, 120)}人がCV、B: {r.n(1000, 3000)}人中{r.n(60, 150)}人がCV。"
            "母比率の差の検定で p 値を計算して、有意水準5%で有意かどうか判定してください。"
        ),
    ],
    zh=[
        lambda r: (
            f"已知函数 f(x) = {_poly(r)}，求 f(x) 在区间 [{r.n(-3, 0)}, {r.n(1, 4)}] 上的最小值，要有完整过程。"
        ),
        lambda r: (
            f"X ~ Poisson({r.n(2, 9)})，Y ~ Poisson({r.n(2, 9)})，两者独立，求 P(X = Y)，保留 6 位小数。"
        ),
        lambda r: (
            f"曲线 y = x^{r.n(2, 4)}（0 ≤ x ≤ {r.n(1, 4)}）绕 x 轴旋转一周，求旋转体的体积，结果用 π 表示。"
        ),
    ],
)
MULTI["reasoning"] += _interleave(
    "ja pt ru zh",
    ja=[
        lambda r: (
            f"転職先で迷っています。A社：年収{r.p(['750万', '820万'])}、フルリモート、創業3年のスタートアップ、ストックオプションあり。"
            f"B社：年収{r.p(['680万', '700万'])}、週3出社、大手SIer、残業少なめ、育休の実績あり。"
            f"{r.p(['来年子どもが生まれる予定です。', '30代前半、独身です。', '今は地方に住んでいます。'])}"
            "メリット・デメリットを整理したうえで、どちらにすべきか結論まで出してください。"
        ),
        lambda r: (
            f"なぜ{r.p(['日本のSaaSではPLG（プロダクト主導の成長）がうまくいきにくいと言われるのか', '社内でDXプロジェクトが何度立ち上がっても定着しないのか', '大企業ほど新規事業が育ちにくいのか'])}、"
            "構造的な要因を掘り下げて分析してください。表面的な理由ではなく、インセンティブや組織の仕組みまで踏み込んでほしいです。"
        ),
        _ja_ranking,
    ],
    pt=[
        lambda r: (
            "Quatro colegas — Ana, Bruno, Carla e Diego — pediram cada um uma bebida diferente (café, chá, suco e água) e "
            "sentaram nos lugares 1 a 4 de um balcão. Quem pediu café sentou ao lado da Ana. O Bruno não toma nada com cafeína. "
            "A Carla sentou numa ponta e não pediu água. O Diego está no lugar 2. A Ana não gosta de chá. Quem pediu suco está logo à direita de quem pediu chá. "
            "Dá pra descobrir quem pediu o quê e onde cada um sentou? Mostra o raciocínio."
        ),
        lambda r: (
            f"Por que nosso app tem {r.p(['muito download e pouca retenção', 'muito cadastro e pouca conversão pro plano pago'])}? "
            f"Números: {r.n(40, 90)} mil downloads no mês, {r.n(20, 45)}% abrem no dia 1, {r.n(3, 12)}% no dia 30. "
            f"O onboarding tem {r.n(5, 9)} telas e pede cartão logo no início. Quero uma análise de causa de verdade, "
            "com hipóteses priorizadas e como testar cada uma, não uma lista genérica de dicas."
        ),
        lambda r: (
            f"Recebi duas propostas: CLT de R$ {r.n(9, 16)} mil com VR, plano de saúde e PLR, ou PJ de R$ {r.n(15, 24)} mil sem benefício nenhum. "
            "Analisa os prós e contras (férias, 13º, FGTS, estabilidade, impostos, aposentadoria) e fecha uma recomendação "
            f"clara pro meu caso: {r.p(['tenho filho pequeno', 'sou solteiro e quero juntar dinheiro', 'pretendo sair do país em 2 anos'])}."
        ),
    ],
    ru=[
        _ru_rota,
        lambda r: (
            f"Почему после перехода на микросервисы релизы стали медленнее, а не быстрее? Было: монолит, релиз раз в неделю. "
            f"Стало: {r.n(9, 20)} сервисов, общий стейджинг, релиз раз в две-три недели, на интеграции постоянно что-то ломается. "
            "Разбери причины по уровням (техника, процессы, оргструктура) и скажи, что из этого первопричина, а что следствие."
        ),
        lambda r: (
            f"Разбор полётов. Запустили {r.p(['подписку для малого бизнеса', 'мобильное приложение для клиентов', 'новый тариф «Про»'])}, "
            f"результат — {r.n(15, 45)}% от плана. Что было:\n— исследование провели на 8 знакомых\n"
            "— цену поставили ниже конкурентов, «чтобы зайти»\n— маркетинг стартовал за неделю до релиза\n"
            "— поддержка узнала о запуске из соцсетей\n"
            "Найди корневые причины, отдели их от симптомов и скажи, какое решение было ключевой ошибкой."
        ),
    ],
    zh=[
        lambda r: (
            "帮我做一下这次故障的根因分析，别只罗列现象，要分清直接原因、根本原因和促成因素，最后说清楚哪个决策点最关键：\n"
            + r.p(
                [
                    "14:02 运营发起大促推送，流量 3 分钟内涨到平时的 8 倍\n14:05 Redis 大量 key 同时过期（上周把 TTL 统一改成了 1 小时）\n"
                    "14:06 数据库连接池打满，下单接口超时\n14:09 自动扩容触发，但新实例要拉 2GB 镜像，10 分钟后才就绪\n14:20 值班同学手动限流，14:35 恢复",
                    "周一：供应商提醒芯片交付可能延迟两周\n周二：采购没有同步给产品，只在周报里提了一句\n"
                    "周四：市场部按原计划官宣发售日期\n下周三：确认延迟，预售订单没法按时发货，客诉激增",
                ]
            )
        ),
        _zh_seating,
        lambda r: (
            f"老板在周会上说：“{r.p(['竞品都上了 AI 功能，我们不上就会被淘汰，所以下季度所有人先停下手头的事做 AI', '去年加大投放之后营收涨了 30%，说明投放就是增长的关键，今年预算再翻一倍', '用户调研里 80% 的人说想要深色模式，所以深色模式是下个版本最重要的功能'])}”。"
            "这个论证有哪些逻辑漏洞？隐含了哪些假设？请逐条分析，最后给出你的判断。"
        ),
    ],
)
MULTI["writing"] += _interleave(
    "zh ja pt ru",
    zh=[
        lambda r: (
            f"帮我们公众号写一篇推文。\n主题：{r.p(['年轻人为什么开始存钱了', '小团队怎么做出好产品', '城市骑行的十年变化', '一个程序员的慢旅行'])}\n"
            f"目标读者：{r.p(['25-35 岁的一线城市白领', '刚毕业的大学生', '中小企业老板'])}\n"
            f"语气：{r.p(['真诚、有点幽默，别说教', '温暖克制，像朋友聊天', '干货多，但不枯燥'])}\n"
            f"篇幅：{r.p(['2000', '3000'])} 字左右\n结构：开头用一个真实场景切入，中间三段展开，结尾引导关注和留言。标题给 3 个备选。"
        ),
        _zh_product_copy,
        _zh_founder_letter,
    ],
    ja=[
        lambda r: (
            f"ECサイト用の商品説明文を書いてください。商品：{r.p(['国産ヒノキのまな板', '折りたたみ式の電動自転車', '在宅ワーク用の昇降デスク', 'オーガニックコットンのベビー服'])}。"
            f"ターゲットは{r.p(['30〜40代の共働き世帯', '初めて一人暮らしをする大学生', '品質にこだわるシニア層'])}。"
            "400〜600字で、使う場面が目に浮かぶように。"
        ),
        lambda r: (
            f"{r.p(COMPANIES)}のブランドマニフェストを書いてください。{r.p(['「速さより、確かさを。」', '「毎日を、少しだけ軽く。」', '「つくる人の味方でいる。」'])}"
            "という一文を軸に、私たちが何を大切にし、何をしないのかを宣言する文章にしてください。社内外に向けたもので、800字くらい。"
        ),
        _ja_eulogy,
    ],
    pt=[
        lambda r: (
            "Escreve um post pro LinkedIn a partir dessas anotações. Quero algo autêntico, em primeira pessoa, "
            f"sem tom de coach, com um gancho forte na primeira linha:\n{r.p(PT_NOTES)}"
        ),
        lambda r: (
            "Transforma essa ata numa crônica curta e bem-humorada pra newsletter interna, tipo uma historinha com personagens, "
            f"sem inventar fatos:\n{r.p(PT_MINUTES)}"
        ),
        _pt_toast,
    ],
    ru=[
        lambda r: (
            f"Напиши пост для нашего Telegram-канала: {r.p(['запустили тёмную тему и офлайн-режим', 'мы переезжаем в новый офис в Казани', 'подводим итоги года — 200 тысяч пользователей'])}. "
            f"Живо, эмодзи в меру, 1000–1500 знаков, в конце призыв {r.p(['оставить фидбек в комментариях', 'поделиться с друзьями', 'прийти на нашу встречу'])}."
        ),
        _ru_case_study,
        _ru_toast,
    ],
)

# ---------------------------------------------------------------------------- Korean (f13)
# 6 per intent, one per source (appended after the 30 of the other languages, so template
# i % len(SOURCES) ownership is unchanged). Written for the generator, apart from the sealed set.
KO_NAMES = ["김민준", "이서연", "박지훈", "최유진", "정하늘", "윤서준"]
KO: dict[str, list[Tpl]] = {
    "coding": [
        lambda r: f"이 코드에서 에러가 나요. 원인 좀 찾아 주세요.\n{code_block(r)}\n{traceback(r)}",
        lambda r: (
            f"{r.p(PATHS)}에 있는 `{r.p(FUNCS)}` 함수에 단위 테스트를 {r.p(['pytest', 'jest', 'go test'])}로 작성해 주세요. 빈 입력도 꼭 확인해 주세요."
        ),
        lambda r: (
            f"{r.p(LANGS)}로 {r.p(['CSV 파일을 한 줄씩 읽어서 열별 평균을 내는', 'IBAN을 검증하는', '지수 백오프로 재시도하는'])} 함수 하나 만들어 줘."
        ),
        lambda r: (
            f"{code_block(r)}\n\n{r.p(['이거 너무 느린데 최적화해 줘', '스레드 안전하게 바꿔 줘', '에러 처리랑 로그 추가해 줘'])}"
        ),
        lambda r: f"{r.p(['ruff', 'eslint', 'mypy'])}가 이렇게 경고해요:\n{lint_output(r)}\n다 고쳐 주세요.",
        lambda r: (
            f"{r.p(['Dockerfile', 'GitHub Actions 워크플로', 'docker-compose.yml'])}을 {r.p(['FastAPI 앱', 'Go 서비스', 'Next.js 프론트엔드'])}용으로 작성해 주세요. 멀티 스테이지 빌드로요."
        ),
    ],
    "tools": [
        lambda r: (
            f"{r.p(['서울', '부산', '제주'])} {r.p(['내일', '이번 주말', '지금'])} 날씨 알려 줘",
            "weather",
        ),
        lambda r: (
            f"{r.p(KO_NAMES)} 님께 {r.p(['보고서가 준비됐다고', '회의가 3시로 바뀌었다고', '송금이 완료됐다고'])} 메일 보내 줘",
            "email",
        ),
        lambda r: (f"주문 {r.n(10000, 99999)}번 지금 어디쯤 왔는지 조회해 주세요", "orders"),
        lambda r: (
            f"다음 주 {r.p(['화요일', '목요일'])} {r.n(9, 17)}시에 {r.p(KO_NAMES)} 님이랑 30분 미팅 잡아 줘",
            "calendar",
        ),
        lambda r: (
            f"#{r.p(['배포', '공지', '운영'])} 채널에 '{r.p(['배포 끝났습니다', '장애 복구됐습니다', '스탠드업 10시 30분으로 변경'])}'라고 올려 줘",
            "slack",
        ),
        lambda r: (f"{r.n(20, 5000)}달러를 원화로 환전하면 얼마야?", "fx"),
    ],
    "instruction": [
        lambda r: (
            f"다음 글을 {r.p(['두 문장으로', '세 줄로', '한 줄로'])} 요약해 주세요.\n\n{r.p(PARAGRAPHS)}"
        ),
        lambda r: (
            "다음 문의를 결제, 기술, 계정, 기타 중 하나로 분류해 주세요. 라벨만요.\n1. 카드가 두 번 결제됐어요\n2. 로그인하면 500 에러가 나요\n3. 이메일 주소를 바꾸고 싶어요"
        ),
        lambda r: (
            f"이 문장을 영어로 번역해 주세요: {r.p(['주문하신 상품이 오늘 출고되었습니다.', '회의 시간을 다시 확인 부탁드립니다.', '불편을 드려 죄송합니다.'])}"
        ),
        lambda r: f"아래 텍스트에서 이름, 이메일, 회사를 JSON으로 뽑아 주세요.\n\n{r.p(PARAGRAPHS)}",
        lambda r: (
            f"이 메시지를 좀 더 {r.p(['공손하게', '간결하게', '격식 있게'])} 바꿔 주세요: '{r.p(['자료 빨리 주세요', '그건 안 된다고 했잖아요', '내일 회의 못 가요'])}'"
        ),
        lambda r: (
            "다음 날짜들을 YYYY-MM-DD 형식으로 바꿔 주세요. 한 줄에 하나씩: 3월 5일 2026년, 2025.11.30, 26/07/01"
        ),
    ],
    "math": [
        lambda r: (
            f"모든 자연수 n에 대해 {r.p(['n^3 - n이 6의 배수', '7^n - 1이 6의 배수', '1 + 3 + ... + (2n-1) = n^2'])}임을 증명해 주세요."
        ),
        lambda r: f"주사위 {r.n(3, 6)}개를 던졌을 때 합이 {r.n(8, 15)}이 될 확률을 구해 주세요. 풀이도요.",
        lambda r: f"∫_0^{r.n(1, 4)} x^{r.n(2, 5)} e^(-x) dx 를 정확히 계산해 주세요.",
        lambda r: f"{r.n(1000, 99999)}의 양의 약수는 몇 개이고, 그 합은 얼마인가요?",
        lambda r: (
            f"행렬 [[{r.n(1, 5)}, {r.n(0, 3)}], [{r.n(0, 3)}, {r.n(1, 5)}]]의 고유값과 고유벡터를 구하고 대각화해 주세요."
        ),
        lambda r: (
            f"점화식 a_n = {r.n(2, 6)}a_(n-1) - {r.n(1, 9)}a_(n-2), a_0 = 1, a_1 = {r.n(1, 5)}의 일반항을 구해 주세요."
        ),
    ],
    "reasoning": [
        lambda r: (
            "기사는 항상 진실을, 악당은 항상 거짓을 말합니다. A는 '우리 중 적어도 한 명은 악당이다'라고 했고 B는 '기사는 정확히 한 명이다'라고 했습니다. 각각 누구인지 경우를 나눠 추론해 주세요."
        ),
        lambda r: (
            f"{r.p(['주 4일제', '전면 재택근무', '성과급 폐지'])}를 도입하면 {r.p(['스타트업', '중소기업', '신입 사원'])}에게 어떤 2차 효과가 있을지 깊이 분석해 주세요."
        ),
        lambda r: (
            f"{r.p(['모놀리스', '자체 구축'])}와 {r.p(['마이크로서비스', 'SaaS 구매'])} 중 5명 팀에 맞는 걸 장단점 따져서 결론 내 주세요."
        ),
        lambda r: (
            "'광고를 할 때마다 매출이 오르니 광고가 매출의 원인이다'라는 주장의 논리적 허점을 찾아 주세요."
        ),
        lambda r: (
            f"지난주 전환율이 {r.n(5, 40)}% 떨어졌는데 같은 주에 가격도 바꾸고 앱도 업데이트했어요. 가능한 원인들을 나열하고 어떻게 구별할지 설계해 주세요."
        ),
        lambda r: (
            "세 상자에 사과, 오렌지, 혼합이라는 라벨이 붙어 있는데 모두 틀렸습니다. 과일 하나만 꺼내서 라벨을 바로잡는 방법을 단계별로 설명해 주세요."
        ),
    ],
    "writing": [
        lambda r: (
            f"{r.p(COMPANIES)} 블로그에 올릴 '{r.p(['번아웃 없이 일하는 법', '작은 팀이 빨리 출시하는 이유', '지속 가능한 포장'])}' 글을 {r.p(['2000', '3000'])}자 정도로 써 주세요. 따뜻한 톤으로요."
        ),
        lambda r: (
            f"{r.p(['언니', '친구', '팀장님'])} {r.p(['결혼식', '송별회', '환갑 잔치'])}에서 할 축사를 써 주세요. 3분 정도, 웃기다가 뭉클하게요."
        ),
        lambda r: f"{r.p(PRODUCTS)} 출시 보도자료를 써 주세요. CEO 인용문과 회사 소개 문단 포함해서요.",
        lambda r: (
            f"{r.p(['바닷가 마을', '비 오는 서울', '오래된 서점'])}을 배경으로 한 단편 소설을 써 주세요. 마지막에 희망이 남게요."
        ),
        lambda r: (
            f"우리 브랜드 랜딩 페이지 문구를 써 주세요: 헤드라인, 서브헤드, 기능 소개 세 블록, 고객 후기, CTA. 톤은 {r.p(['친근하고 담백하게', '고급스럽고 절제된 느낌으로'])}."
        ),
        lambda r: "이번 달 고객 뉴스레터를 써 주세요. 새 기능 소개와 창업자의 짧은 편지가 들어가게요.",
    ],
}
for _intent, _templates in KO.items():
    MULTI[_intent] += _templates
    TEMPLATE_LANG.update((t, "ko") for t in _templates)
