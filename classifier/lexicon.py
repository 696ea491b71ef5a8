"""Small hand-written intent lexicons (English, German, French, Spanish).

Why: the training corpus is templated, so a word seen in only one template family would
otherwise carry all its weight there. Counting hits of broad domain lexicons gives the model
features that transfer to phrasings it never saw (leave-one-source-out, real traffic).
The lists are about domains, not about the generator's templates.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


LEXICONS: dict[str, frozenset[str]] = {
    "math": _words("""integral integrals integrate integration derivative derivatives differentiate limit lim sum series
        converge converges convergence diverge prove proof proofs theorem lemma corollary prime primes divisible
        divisor divisors modulo mod gcd lcm probability probabilities expected expectation variance distribution
        binomial poisson gaussian combinatorics combinatorial permutations permutation combinations choose factorial
        equation equations solve solutions roots polynomial polynomials matrix matrices determinant eigenvalue
        eigenvalues eigenvectors vector vectors inequality irrational rational integer integers complex logarithm
        log ln sqrt sin cos tan exp pi π geometry triangle triangles circle area volume radius angle recurrence
        induction fraction digits dice die coin coins lattice infinity infinite asymptotic minimize maximize minimum
        maximum dx dy ode differential frac calculus algebra arithmetic congruence congruent modular residue
        hypotenuse parabola ellipse tangent chord theorem conjecture diophantine fibonacci factorise factorize
        numerically decimals decimal sigma σ ∫ √ ∑ ≡ ≤ ≥ beweise beweis wahrscheinlichkeit gleichung primzahl
        primzahlen berechne integrals ableitung würfel teilbar démontre démontrer démonstration probabilité
        équation intégrale entier entiers dérivée calcule calcula calcular probabilidad ecuación demuestra
        límite dados integral primo"""),
    "reasoning": _words("""puzzle puzzles riddle riddles logic logical knights knaves knight knave liar liars lies lying truth
        truthful deduce deduction deductive infer inference premise premises syllogism fallacy flaw argument
        arguments contradiction paradox clue clues constraint constraints tradeoffs tradeoff trade offs
        implications consequences second incentives incentive causal causality cause causes counterfactual
        hypothesis hypotheses steelman crux analyze analyse analysis evaluate weigh rigorous rigorously reasoning
        reason dilemma strategy strategic equilibrium scenario scenarios assumption assumptions risks decision
        recommend recommendation pros cons guards prisoners hats nuanced verdict counterexample counterexamples
        implies follows necessarily sufficient necessary why whether rätsel logik lügt lügen wahrheit begründe
        abwägen vor nachteile folgen énigme logique conséquences raisonne raisonnement menteur acertijo lógica
        razona razonamiento miente consecuencias ventajas desventajas
        causa causas causales explicación explicaciones analiza analizar porqué ursache ursachen warum analysiere
        pourquoi explique hypothèse"""),
    "writing": _words("""blog post article essay story stories novel chapter poem poetry verse speech keynote eulogy toast press
        release copy copywriting landing headline tagline slogan newsletter brand voice tone narrative draft
        compose words op ed script campaign marketing manifesto storytelling memoir linkedin tweets catalogue
        catalog description hook engaging inspiring heartfelt protagonist plot characters lyrics song bedtime
        fairy tale feature magazine column editorial persuasive wedding homepage about founder announcement
        announcing long form longform blogartikel artikel geschichte rede schreibe schreib werbetext wörter
        rédige écris communiqué histoire discours article mots récit escribe redacta cuento ensayo artículo
        discurso palabras historia"""),
    "instruction": _words("""extract json yaml csv reformat classify classification label labels categorize categorise sentiment
        summarize summarise summary tl dr tldr bullet bullets rewrite rephrase shorten translate translation grammar
        spelling proofread parse normalize normalise markdown lowercase uppercase snake_case paraphrase bulleted
        formal informal concise fasse zusammen zusammenfassung übersetze
        formatiere extrais reformule résume traduis clasifica convierte resume traduce extrae etiquetas
        reescribe"""),
    "coding": _words("""function functions code bug bugs fix error errors exception refactor test tests unit pytest jest compile
        compiler build ci lint linter api endpoint handler class method variable type types typescript python
        javascript golang rust java sql query regex bash shell docker dockerfile kubernetes git commit merge rebase
        branch diff pr repo repository stack trace traceback null none undefined async await thread deadlock memory
        leak segfault panic crash import module package dependency npm pip cargo migration schema index docstring
        docstrings implement implementation debug compile runtime config yaml makefile cli sdk library framework
        def return self const elif fn func struct impl println console var lambda void static boolean nullptr
        fehler funktion klasse fonction corrige corriger código función clase prueba pruebas"""),
    "tools": _words("""weather forecast schedule meeting calendar event book booking reserve reservation flight flights email
        mail send post message slack remind reminder order orders refund track tracking lookup look search find check
        status price quote stock convert currency ticket create update crm contact pull call fetch wetter termin
        erstelle buche sende bestellung réserve envoie rendez commande météo busca pedido reserva envía tiempo"""),
}
