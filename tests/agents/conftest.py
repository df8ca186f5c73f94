"""Fixtures for backend tests: isolated cache and keys, small frames, a tiny local VLM, a run helper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "VLLM_API_KEY")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real keys, base URLs or user price table leak in; the default cache lives in tmp_path."""
    for name in (*KEY_VARS, "OPENAI_BASE_URL", "VLLM_BASE_URL", "KINEGRAPH_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KINEGRAPH_CACHE", str(tmp_path / "default-cache.sqlite"))


@pytest.fixture
def frames() -> np.ndarray:
    """Three distinct RGB uint8 frames (3, 48, 64, 3)."""
    rng = np.random.default_rng(7)
    return rng.integers(0, 256, size=(3, 48, 64, 3), dtype=np.uint8)


@pytest.fixture(scope="session")
def tiny_vlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised LLaVA (CLIP vision tower + 1-layer Llama) with a character-level tokenizer
    and a chat template, saved like a real checkpoint. Built from configs; nothing is downloaded."""
    torch = pytest.importorskip("torch", reason="the local provider's extra: pip install 'kinegraph[local]'")
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    special = ["<pad>", "<s>", "</s>", "<unk>", "<image>"]
    chars = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;?!'\"-_()[]/\n")
    vocab = {token: i for i, token in enumerate(special + chars)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    core.decoder = decoders.Fuse()
    core.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    template = (
        "{% for m in messages %}{{ m['role'] }}: {% for c in m['content'] %}"
        "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=template,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )
    text = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=vocab["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-llava")
    LlavaForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path
