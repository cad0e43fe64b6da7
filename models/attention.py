"""Where attention used to live: it is now part of the Transformer family.

Kept so `from models.attention import Attention, KVCache, causal_mask` keeps working; see
`models.transformer.attention` (MHA/GQA/MQA, cross-attention), `models.transformer.mla`
and `models.transformer.cache`.
"""

from models.transformer.attention import Attention, CrossAttention, causal_mask
from models.transformer.cache import KVCache

__all__ = ["Attention", "CrossAttention", "KVCache", "causal_mask"]
