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
        derive derives derived derivation derivations analytically analytic asymptotics
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
        pourquoi explique hypothèse"""),
    "writing": word_set("""blog post article essay story stories novel chapter poem poetry verse speech keynote eulogy toast press
        release copy copywriting landing headline tagline slogan newsletter brand voice tone narrative draft
        compose words op ed script campaign marketing manifesto storytelling memoir linkedin tweets catalogue
        catalog description hook engaging inspiring heartfelt protagonist plot characters lyrics song bedtime
        fairy tale feature magazine column editorial persuasive wedding homepage about founder announcement
        announcing long form longform blogartikel artikel geschichte rede schreibe schreib werbetext wörter
        rédige écris communiqué histoire discours article mots récit escribe redacta cuento ensayo artículo
        discurso palabras historia haiku limerick sonnet ode fable anecdote obituary blurb vows lullaby"""),
    "instruction": word_set("""extract json yaml csv reformat classify classification label labels categorize categorise sentiment
        summarize summarise summary tl dr tldr bullet bullets rewrite rephrase shorten translate translation grammar
        spelling proofread parse normalize normalise markdown lowercase uppercase snake_case paraphrase bulleted
        formal informal concise fasse zusammen zusammenfassung übersetze
        formatiere extrais reformule résume traduis clasifica convierte resume traduce extrae etiquetas
        reescribe"""),
    "coding": word_set("""function functions code bug bugs fix error errors exception refactor test tests unit pytest jest compile
        compiler build ci lint linter api endpoint handler class method variable type types typescript python
        javascript golang rust java sql query regex bash shell docker dockerfile kubernetes git commit merge rebase
        branch diff pr repo repository stack trace traceback null none undefined async await thread deadlock memory
        leak segfault panic crash import module package dependency npm pip cargo migration schema index docstring
        docstrings implement implementation debug compile runtime config yaml makefile cli sdk library framework
        def return self const elif fn func struct impl println console var lambda void static boolean nullptr
        fehler funktion klasse fonction corrige corriger código función clase prueba pruebas"""),
    "tools": word_set("""weather forecast schedule meeting calendar event book booking reserve reservation flight flights email
        mail slack remind reminder order orders refund tracking price quote stock currency ticket crm contact wetter
        termin erstelle buche sende bestellung réserve envoie rendez commande météo busca pedido reserva envía
        tiempo"""),
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

# Chinese, Japanese, Russian and Brazilian Portuguese (f12). CJK entries are two-character words
# because CJK text is matched by its character bigrams (features.cjk_bigrams); katakana loan
# words appear as a distinctive bigram of theirs (エラ for エラー, テス for テスト). Generic verbs
# ("write": 写/書く/напиши/escreva) are left out: coding asks for writing as often as prose does.
_MORE: dict[str, str] = {
    "math": """积分 导数 微分 极限 级数 收敛 证明 定理 素数 质数 整除 概率 期望 方差 方程 多项式 矩阵 行列
        向量 不等 对数 几何 面积 体积 半径 递推 归纳 骰子 硬币 组合 排列 求解 整数 積分 極限 証明 確率 期待 面積 体積
        интеграл интеграла производная производную предел ряд докажи доказать доказательство теорема теорему
        простое простых делится вероятность вероятности уравнение уравнения матрица матрицы многочлен
        неравенство площадь вычисли найдите кубика кубики монеты integral derivada limite série prove provar
        demonstre teorema primo primos divisível probabilidade equação equações matriz polinômio desigualdade
        área calcule moeda moedas""",
    "coding": """代码 报错 错误 异常 调试 重构 测试 单元 编译 接口 变量 类型 模块 依赖 部署 脚本 正则 修复 注释
        仓库 提交 合并 分支 関数 例外 実装 修正 変数 エラ テス バグ デバ код функция функцию функции ошибка ошибку ошибки
        исправь исправить баг тест тесты рефакторинг класс метод переменная компиляция репозиторий коммит
        código função erro erros corrija corrigir teste testes refatore refatorar classe método variável
        compilação repositório""",
    "tools": """天气 预订 预约 订单 退款 邮件 发送 提醒 日历 会议 航班 汇率 天気 予約 注文 返金 送信 会議 為替 погода погоду
        забронируй бронь заказ заказа возврат письмо отправь напомни встречу встреча календарь рейс previsão
        reserve reserva pedido reembolso envie mande lembrete reunião agenda voo cotação""",
    "instruction": """提取 格式 总结 摘要 翻译 分类 改写 润色 表格 标签 情感 要点 抽出 形式 要約 翻訳 分類 箇条 извлеки формат
        формате кратко резюме переведи классифицируй перепиши таблицу extraia formato resuma resumo traduza
        classifique reescreva tabela""",
    "fileops": """文件 目录 文件夹 移动 复制 删除 重命名 ファイ フォル 削除 移動 コピ папка папку папке файл файлы файла
        каталог переименуй перемести удали скопируй pasta arquivo arquivos diretório renomeie mova exclua apague""",
    "reasoning": """逻辑 推理 谜题 真话 假话 说谎 分析 权衡 利弊 原因 因果 假设 策略 决策 推断 論理 推論 正直 長所 短所 仮説 戦略
        логика загадка головоломка лжец правду рассуждай рассуждение анализ проанализируй плюсы минусы
        причины последствия гипотеза стратегия lógica enigma charada mentiroso verdade raciocine raciocínio
        analise análise prós contras causas consequências hipótese estratégia""",
    "writing": """文章 博客 散文 故事 小说 诗歌 演讲 新闻 文案 品牌 口号 营销 推广 剧本 记事 記事 物語 小説 演説 広告 宣伝 статью
        статья блог пост эссе рассказ историю роман стихотворение речь релиз рекламный бренд слоган artigo
        ensaio conto história romance poema discurso texto marca slogan""",
}
LEXICONS = {name: words | word_set(_MORE.get(name, "")) for name, words in LEXICONS.items()}
