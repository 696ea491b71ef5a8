"""Build the real-vLLM tier's tiny model offline: ``python tiny_model.py OUT_DIR``.

Runs with the vLLM venv's interpreter (it needs torch, transformers and tokenizers,
which the proxy's own venv does not have); nothing is downloaded. The result is a
``Qwen2ForCausalLM`` directory vLLM serves as it would any checkpoint:

* Qwen2-shaped: 2 layers, hidden 128, 2 heads of 64 (head_dim 16 is refused by vLLM's
  CPU attention), 1 KV head, ``max_position_embeddings`` 131072 (``--max-model-len``
  may not exceed it);
* a byte-level BPE tokenizer trained with ``tokenizers`` on the recorded agent requests
  (``tests/data/agent_requests``), so a 80 KB Claude Code body is about 25K tokens;
* a Laguna-shaped chat template (``<system>``, ``<user>``, ``<assistant>``, ``<think>``,
  ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``,
  ``<tool_response>``), so the server runs the Spark recipe's ``poolside_v1`` tool and
  reasoning parsers; ``enable_thinking`` opens a ``<think>`` in the generation prompt.

The weights are not random noise but a bigram model made on purpose, because a purely
random model cannot end a turn: a reply cut by length is ``response.incomplete`` on
Responses, which Codex treats as an error. The transformer layers add nothing (their
output projections are zero), so the next token depends on the current one only:
after ``<assistant>`` or ``<think>`` the end-of-text token is impossible (no empty
turn), after any other token it has a fixed probability (``STOP_P``), and the markup
tokens (``<tool_call>``, ``</think>``, ...) are never produced, so a parser never sees
half a call. The text is garbage; a reply averages ``1/STOP_P`` tokens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENT_REQUESTS = HERE.parent / "data" / "agent_requests"

VOCAB_SIZE = 2048
STOP_P = 0.15  # chance of ending the turn after each generated token
EOS = "<|endoftext|>"
# The generation prompt ends with one of these: the first generated token is never EOS.
OPENERS = ("<assistant>", "<think>")
MARKUP = (
    "<system>", "</system>", "<user>", "</user>", "<assistant>", "</assistant>",
    "<think>", "</think>", "<tools>", "</tools>", "<tool_call>", "</tool_call>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<tool_response>", "</tool_response>",
)  # fmt: skip

CHAT_TEMPLATE = """\
{%- macro text(content) -%}
{%- if content is string -%}{{ content }}{%- elif content -%}
{%- for part in content -%}{{ part.text if part.text is defined else '' }}{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
{%- if tools -%}
<system><tools>{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}</tools></system>
{%- endif -%}
{%- for message in messages -%}
{%- if message.role in ('system', 'developer') -%}
<system>{{ text(message.content) }}</system>
{%- elif message.role == 'user' -%}
<user>{{ text(message.content) }}</user>
{%- elif message.role == 'assistant' -%}
<assistant>
{%- set reasoning = message.reasoning or message.reasoning_content -%}
{%- if reasoning -%}<think>{{ reasoning }}</think>{%- endif -%}
{{ text(message.content) }}
{%- for call in message.tool_calls or [] -%}
{%- set fn = call.function if call.function is defined else call -%}
<tool_call>{{ fn.name }}
{%- if fn.arguments is mapping -%}
{%- for key, value in fn.arguments.items() -%}
<arg_key>{{ key }}</arg_key><arg_value>{{ value if value is string else value | tojson }}</arg_value>
{%- endfor -%}
{%- else -%}<arg_key>arguments</arg_key><arg_value>{{ fn.arguments }}</arg_value>{%- endif -%}
</tool_call>
{%- endfor -%}
</assistant>
{%- elif message.role == 'tool' -%}
<tool_response>{{ text(message.content) }}</tool_response>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<assistant>{%- if enable_thinking is defined and enable_thinking -%}<think>{%- endif -%}
{%- endif -%}
"""


def training_text() -> list[str]:
    """What the tokenizer learns from: the recorded agent requests, as JSON text."""
    lines = ["Write a Python function that reverses a list.", "def reverse(xs): return xs[::-1]"]
    for path in sorted(AGENT_REQUESTS.glob("*.json")):
        body = json.loads(path.read_text())["body"]
        lines.append(json.dumps(body, ensure_ascii=False))
    return lines


def build_tokenizer(out: Path) -> object:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=[EOS, *MARKUP],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(training_text(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=EOS)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return fast


def build_model(out: Path, tokenizer: object) -> None:
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    vocab = tokenizer.get_vocab()  # type: ignore[attr-defined]
    size = max(vocab.values()) + 1
    eos = vocab[EOS]
    config = Qwen2Config(
        vocab_size=size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=131072,
        tie_word_embeddings=False,
        bos_token_id=eos,
        eos_token_id=eos,
        torch_dtype="float32",
    )
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        for layer in model.model.layers:  # the layers add nothing: a bigram model
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embed = torch.randn(size, 128) * 0.05
        embed[:, 0] = 1.0  # a constant direction: the per-token biases below ride on it
        embed[:, 1] = 0.0
        for opener in OPENERS:
            embed[vocab[opener], 1] = 1.0  # "a turn just opened": no EOS next
        model.model.embed_tokens.weight.copy_(embed)
        model.model.norm.weight.fill_(1.0)
        head = torch.randn(size, 128) * 0.1
        head[:, :2] = 0.0
        for token_id in _unprintable(tokenizer):
            head[token_id, 0] = -10.0  # never produced
        head[eos, 1] = -10.0
        head[eos, 0] = _calibrate_eos(embed, head, eos)
        model.lm_head.weight.copy_(head)
    model.save_pretrained(out, safe_serialization=True)
    # max_new_tokens: the default cap for a request that names none (vLLM reads it).
    GenerationConfig(eos_token_id=eos, bos_token_id=eos, max_new_tokens=256).save_pretrained(out)


def _unprintable(tokenizer: object) -> list[int]:
    """Tokens a reply must never hold: the markup (a parser would read half a call) and any
    that is not printable ASCII (a lone byte of a UTF-8 sequence decodes to nothing, which
    would leave a one-token reply empty)."""
    out = []
    for token, token_id in tokenizer.get_vocab().items():  # type: ignore[attr-defined]
        text = tokenizer.convert_tokens_to_string([token])  # type: ignore[attr-defined]
        if token in MARKUP or not (text.isascii() and text.isprintable() and text.strip()):
            out.append(token_id)
    return [i for i in out if i != tokenizer.get_vocab()[EOS]]  # type: ignore[attr-defined]


def _calibrate_eos(embed: object, head: object, eos: int) -> float:
    """The EOS weight that gives an ordinary token a STOP_P chance of ending the turn."""
    import torch

    normed = torch.nn.functional.rms_norm(embed, (128,), eps=1e-6)  # type: ignore[arg-type]
    ordinary = normed[:, 1] < 1.0
    scale = float(normed[ordinary, 0].mean())  # the EOS logit moves by this per unit of weight
    weight = 0.0
    for _ in range(20):
        head[eos, 0] = weight  # type: ignore[index]
        p = float(torch.softmax(normed[ordinary] @ head.T, dim=-1)[:, eos].mean())  # type: ignore[attr-defined]
        weight += (torch.logit(torch.tensor(STOP_P)) - torch.logit(torch.tensor(p))).item() / scale
    return weight


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out)
    build_model(out, tokenizer)
    print(out)


if __name__ == "__main__":
    main()
