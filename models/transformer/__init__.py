"""One configurable Transformer family: config and facts, presets, the model.

    from models.transformer import TransformerConfig, Transformer, PRESETS, preset

See docs/models.md.
"""

from models.transformer.cache import KVCache
from models.transformer.config import TransformerConfig
from models.transformer.model import Transformer
from models.transformer.presets import PRESETS, preset

__all__ = ["PRESETS", "KVCache", "Transformer", "TransformerConfig", "preset"]
