"""One configurable Transformer family: config and facts, presets, the model.

from models.transformer import TransformerConfig, Transformer, PRESETS, preset
"""

from models.transformer.config import TransformerConfig
from models.transformer.presets import PRESETS, preset

__all__ = ["PRESETS", "TransformerConfig", "preset"]
