"""Small hand-written intent lexicons (English, German, French, Spanish; and, since f12, Chinese,
Japanese, Russian and Brazilian Portuguese).

Why: the training corpus is templated, so a word seen in only one template family would
otherwise carry all its weight there. Counting hits of broad domain lexicons gives the model
features that transfer to phrasings it never saw (leave-one-source-out, real traffic).
The lists are about domains, not about the generator's templates.
"""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


LEXICONS: dict[str, frozenset[str]] = {
    "math": word_set("""integral integrals integrate integration derivative derivatives differentiate limit lim sum series
        converge converges convergence diverge prove proof proofs theorem lemma corollary prime primes divisible
        divisor divisors modulo mod gcd lcm probability probabilities expected expectation variance distribution
        binomial poisson gaussian combinatorics combinatorial permutations permutation combinations choose factorial
        equation equations solve solutions roots polynomial polynomials matrix matrices determinant eigenvalue
        eigenvalues eigenvectors vector vectors inequality irrational rational integer integers complex logarithm
        log ln sqrt sin cos tan exp pi π geometry triangle triangles circle area volume radius angle recurrence
        induction fraction digits dice die coin coins lattice infinity infinite asymptotic minimize maximize minimum
        maximum dx dy ode differential frac calculus algebra arithmetic congruence congruent modular residue
        hypotenuse parabola ellipse tangent chord theorem conjecture diophantine fibonacci factorise factorize
        derive derives derived derivation derivations analytically analytic asymptotics invariant invariants
        amortized amortised closed-form qed counterexample formally
        induktion gegenbeispiel herleiten herleitung leite formal récurrence prouve prouver dérive dériver
        formellement inducción demuéstrame demostración demostrar contraejemplo formalmente
        numerically decimals decimal sigma σ ∫ √ ∑ ≡ ≤ ≥ beweise beweis wahrscheinlichkeit gleichung primzahl
        primzahlen berechne integrals ableitung würfel teilbar démontre démontrer démonstration probabilité
        équation intégrale entier entiers dérivée calcule calcula calcular probabilidad ecuación demuestra
        límite dados integral primo"""),
    "reasoning": word_set("""puzzle puzzles riddle riddles logic logical knights knaves knight knave liar liars lies lying truth
        truthful deduce deduction deductive infer inference premise premises syllogism fallacy flaw argument
        arguments contradiction paradox clue clues constraint constraints tradeoffs tradeoff trade offs
        implications consequences second incentives incentive causal causality cause causes counterfactual
        hypothesis hypotheses steelman crux analyze analyse analysis evaluate weigh rigorous rigorously reasoning
        reason dilemma strategy strategic equilibrium scenario scenarios assumption assumptions risks decision
        recommend recommendation pros cons guards prisoners hats nuanced verdict counterexample counterexamples
        implies follows necessarily sufficient necessary why whether argue argues justify justification
        plausible plausibly judgement judgment critique assess assessment conclude conclusion
        rätsel logik lügt lügen wahrheit begründe
        abwägen vor nachteile folgen énigme logique conséquences raisonne raisonnement menteur acertijo lógica
        razona razonamiento miente consecuencias ventajas desventajas
        causa causas causales explicación explicaciones analiza analizar porqué ursache ursachen warum analysiere
        pourquoi explique hypothèse
        worth decide decision choose prioritise prioritize estimate estimated estimates rough roughly ballpark
        capacity headroom breakeven break-even sensitivity feasible feasibility viable risk threat threats
        attacker adversary mitigate mitigation compliant compliance lawful legal liable liability permissible
        regulation regulatory obligations conflicting contradict contradictory reconcile synthesize synthesise
        diagnose weighing defensible tenable
        empfiehl empfehlung entscheide entscheidung abschätzen schätze risiko bedrohung sollten lohnt
        recommande recommandation décide décision estime estimation risque menace devrions vaut
        recomienda recomendación decide decisión estima estimación riesgo amenaza deberíamos vale
        vertretbar zulässig rechtlich abwägung bewerte einschätzung arbitrage conforme infraction juridique
        conviene cumplimos legalidad"""),
    "writing": word_set("""blog post article essay story stories novel chapter poem poetry verse speech keynote eulogy toast press
        release copy copywriting landing headline tagline slogan newsletter brand voice tone narrative draft
        compose words op ed script campaign marketing manifesto storytelling memoir linkedin tweets catalogue
        catalog description hook engaging inspiring heartfelt protagonist plot characters lyrics song bedtime
        fairy tale feature magazine column editorial persuasive wedding homepage about founder announcement
        announcing long form longform blogartikel artikel geschichte rede schreibe schreib werbetext wörter
        rédige écris communiqué histoire discours article mots récit escribe redacta cuento ensayo artículo
        discurso palabras historia haiku limerick sonnet ode fable anecdote obituary blurb vows lullaby"""),
    "instruction": word_set("""extract reformat classify classification label labels categorize categorise sentiment
        summarize summarise summary tl dr tldr rewrite rephrase shorten translate translation translated grammar
        spelling proofread proofreading typos typo parse normalize normalise lowercase uppercase snake_case paraphrase
        formal informal concise fasse zusammen zusammenfassung übersetze übersetzen übersetzung korrekturlesen
        rechtschreibung korrigiere korrigier zeichensetzung grammatik tippfehler formatiere extrais reformule résume traduis traduire traduction relis relire orthographe
        clasifica convierte resume traduce traducir traducción revisa ortografía extrae etiquetas reescribe
        übersetz lektoriere fehlerfrei relecture coquilles fautes traduce traduzca erratas faltas"""),
    # The shape of an answer (f18): bullets, tables, JSON, a template to fill in. A formatting
    # constraint rides on any ask ("recommend one option, in three bullets"), so these words
    # are counted apart from the instruction verbs: they say how to answer, not what is asked.
    "form": word_set("""json yaml csv bullet bullets bulleted markdown table tables column columns row rows template
        fill numbered checklist format formatted bullet-point sentences sentence paragraph paragraphs schema
        tabelle stichpunkte aufzählung tableau puces colonnes tabla viñetas columnas"""),
    "coding": word_set("""function functions code bug bugs fix error errors exception refactor test tests unit pytest jest compile
        compiler build ci lint linter api endpoint handler class method variable type types typescript python
        javascript golang rust java sql query regex bash shell docker dockerfile kubernetes git commit merge rebase
        branch diff pr repo repository stack trace traceback null none undefined async await thread deadlock memory
        leak segfault panic crash import module package dependency npm pip cargo migration schema index docstring
        docstrings implement implementation debug compile runtime config yaml makefile cli sdk library framework
        def return self const elif fn func struct impl println console var lambda void static boolean nullptr
        fehler funktion klasse fonction corrige corriger código función clase prueba pruebas
        terraform helm ansible pulumi cloudformation manifest manifests kubectl k8s nginx systemd workflow
        pipeline hcl iac deployment ingress k0s cronjob"""),
    "tools": word_set("""weather forecast schedule meeting calendar event book booking reserve reservation flight flights email
        mail slack remind reminder order orders refund tracking price quote stock currency ticket crm contact wetter
        termin erstelle buche sende bestellung réserve envoie rendez commande météo busca pedido reserva envía
        tiempo
        bestätige storniere eintragen buchung zeitfenster confirme annule décale créneau inscris planifie
        confirma cancela cita agenda horario apunta"""),
    # Generic action verbs (f14): a tool request uses them, and so does any ask made inside a
    # coding agent ("check the formula", "look at the design doc and decide", "find the closed
    # form"). Counted apart from the tools lexicon's domain words so that they weigh what they
    # are worth there rather than what they are worth beside "weather" or "refund".
    "toolverb": word_set("""send post message track lookup look search find check status create update pull call fetch
        convert list run grep"""),
    # File-system operations (f15): moving, renaming, listing and deleting files is tool work
    # (or coding) whatever the files are called; "the essay draft" in a file name must not make
    # a file operation read as writing. Words of the action and of the file system, not of a
    # document's subject ("copy" is left out: it is also marketing copy).
    "fileops": word_set("""folder folders directory directories subfolder subfolders subdirectory subdirectories dir
        mkdir rmdir ls cd pwd cp mv rm touch chmod chown navigate rename renamed move moving moved delete
        deleted remove hidden archive backup txt csv docx pdf xlsx md zip unzip tarball disk filename filenames
        ordner verzeichnis datei dateien umbenennen verschiebe kopiere lösche dossier répertoire fichier
        fichiers renomme déplace supprime carpeta directorio archivo archivos renombra mueve elimina borra"""),
}

# Chinese, Japanese, Russian and Brazilian Portuguese (f12), and Korean (f18: Hangul is read as
# character bigrams too). CJK entries are two-character words
# because CJK text is matched by its character bigrams (features.cjk_bigrams); katakana loan
# words appear as a distinctive bigram of theirs (エラ for エラー, テス for テスト). Generic verbs
# ("write": 写/書く/напиши/escreva) are left out: coding asks for writing as often as prose does.
_MORE: dict[str, str] = {
    "math": """유도 도출 гессиан градиент выведите hessiana gradiente côncavo convexo deriva derivar 凸性 凹 梯度
        증명 확률 적분 미분 방정 행렬 극한 소수 기댓 분산 부등
        归纳 反例 推导 帰納 導出 귀납 반례 유도 индукции индукция индукцией докажите контрпример
        выведи вывести формально indução demonstração contraexemplo deduza
        积分 导数 微分 极限 级数 收敛 证明 定理 素数 质数 整除 概率 期望 方差 方程 多项式 矩阵 行列
        向量 不等 对数 几何 面积 体积 半径 递推 归纳 骰子 硬币 组合 排列 求解 整数 積分 極限 証明 確率 期待 面積 体積
        интеграл интеграла производная производную предел ряд докажи доказать доказательство теорема теорему
        простое простых делится вероятность вероятности уравнение уравнения матрица матрицы многочлен
        неравенство площадь вычисли найдите кубика кубики монеты integral derivada limite série prove provar
        demonstre teorema primo primos divisível probabilidade equação equações matriz polinômio desigualdade
        área calcule moeda moedas""",
    "coding": """코드 버그 수정 함수 에러 오류 테스 리팩 컴파 배포 모듈 변수 클래 테라 쿠버 スク 構成 деплой манифест
        代码 报错 错误 异常 调试 重构 测试 单元 编译 接口 变量 类型 模块 依赖 部署 脚本 正则 修复 注释
        仓库 提交 合并 分支 関数 例外 実装 修正 変数 エラ テス バグ デバ код функция функцию функции ошибка ошибку ошибки
        исправь исправить баг тест тесты рефакторинг класс метод переменная компиляция репозиторий коммит
        código função erro erros corrija corrigir teste testes refatore refatorar classe método variável
        compilação repositório""",
    "tools": """취소 확정 변경 잡아 подтверди отмени перенеси запиши слот 确认 取消 安排 改到 確定 キャ 日程 空き
        agende marque remarque confirme cancele horário
        예약 날씨 메일 이메 주문 환불 일정 회의 항공 알림 전송 조회
        天气 预订 预约 订单 退款 邮件 发送 提醒 日历 会议 航班 汇率 天気 予約 注文 返金 送信 会議 為替 погода погоду
        забронируй бронь заказ заказа возврат письмо отправь напомни встречу встреча календарь рейс previsão
        reserve reserva pedido reembolso envie mande lembrete reunião agenda voo cotação""",
    "instruction": """다듬 译成 英訳 和訳 訳し перевести переведите вычитайте пунктуацию грамматику traduz revisar
        번역 요약 추출 분류 교정 맞춤 띄어 校对 校正 纠错 错别 翻成 校閲 誤字 脱字 添削 вычитай вычитать
        опечатки орфографию revise revisão ortografia traduzir
        提取 格式 总结 摘要 翻译 分类 改写 润色 标签 情感 抽出 要約 翻訳 分類 извлеки формат
        формате кратко резюме переведи классифицируй перепиши extraia formato resuma resumo traduza
        classifique reescreva""",
    "fileops": """파일 폴더 디렉 삭제 이동 복사 이름
        文件 目录 文件夹 移动 复制 删除 重命名 ファイ フォル 削除 移動 コピ папка папку папке файл файлы файла
        каталог переименуй перемести удали скопируй pasta arquivo arquivos diretório renomeie mova exclua apague""",
    "reasoning": """타당 적법 위반 어느 причину причина почему законно нарушение 合规 取舍 选型 方案 妥当 選定 方針 比較
        compensa conformidade devemos
        분석 추론 논리 전략 장단 원인 가설 판단 결정 추천 권장 위험 리스 检讨 评估 推荐 建议 风险 决定 选择 判断 評価 推奨 リス 検討
        оцени оценка рекомендуй порекомендуй риск стоит решение avalie recomende recomendação risco vale decisão
        逻辑 推理 谜题 真话 假话 说谎 分析 权衡 利弊 原因 因果 假设 策略 决策 推断 論理 推論 正直 長所 短所 仮説 戦略
        логика загадка головоломка лжец правду рассуждай рассуждение анализ проанализируй плюсы минусы
        причины последствия гипотеза стратегия lógica enigma charada mentiroso verdade raciocine raciocínio
        analise análise prós contras causas consequências hipótese estratégia""",
    "writing": """블로 기사 소설 에세 연설 슬로 광고 홍보 보도 이야
        文章 博客 散文 故事 小说 诗歌 演讲 新闻 文案 品牌 口号 营销 推广 剧本 记事 記事 物語 小説 演説 広告 宣伝 статью
        статья блог пост эссе рассказ историю роман стихотворение речь релиз рекламный бренд слоган artigo
        ensaio conto história romance poema discurso texto marca slogan""",
    "form": """표로 표를 항목 목록 形式 表格 列表 要点 箇条 表形 таблиц таблицу список пункты tabela tópicos""",
}
LEXICONS = {name: words | word_set(_MORE.get(name, "")) for name, words in LEXICONS.items()}
