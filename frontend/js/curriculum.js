// The labs /work/shared/CURRICULUM.md plans, by chapter (its "## N." sections, in its order):
// the catalog names those the server does not serve yet as "coming" under their chapter.
// A data list only: the ids are the curriculum's, the short names are ours in en and zh.
export const CURRICULUM = {
  1: [['apple', 'One weight, one apple', '一个权重，一个苹果'], ['linear-regression', 'Linear regression', '线性回归'], ['live-stream', 'Live-stream peak viewers', '直播峰值人数'], ['temperature', 'Tomorrow’s temperature', '明天的气温']],
  2: [['logistic', 'Logistic regression', '逻辑回归'], ['softmax-ce', 'Softmax and cross-entropy', 'Softmax 与交叉熵'], ['svm', 'Support vector machine', '支持向量机']],
  3: [['relu-kink', 'The ReLU kink', 'ReLU 的拐点'], ['activations', 'Activation functions', '激活函数'], ['mlp-playground', 'MLP playground', 'MLP 游乐场'], ['digits', 'Handwritten digits', '手写数字']],
  4: [['depth', 'Depth, init and normalisation', '深度、初始化与归一化'], ['conv', 'Convolution by hand', '手算卷积'], ['cnn', 'A small CNN', '小型 CNN'], ['optimizers', 'Optimizer race', '优化器赛跑'], ['regularization', 'Regularization', '正则化']],
  5: [['rnn', 'Character RNN', '字符 RNN'], ['memory', 'RNN, GRU and LSTM memory', 'RNN、GRU 与 LSTM 的记忆'], ['seq2seq', 'Seq2seq with attention', '带注意力的 seq2seq'], ['embeddings', 'Embeddings', '词嵌入']],
  6: [['tokenizer', 'Tokenizers', '分词器'], ['attention', 'Attention step by step', '一步步看注意力'], ['positional-encoding', 'Positional encoding', '位置编码'], ['gpt', 'A tiny GPT', '迷你 GPT'], ['transformer', 'Encoder-decoder Transformer', '编码器-解码器 Transformer']],
  7: [['kv-cache', 'KV cache size', 'KV 缓存大小'], ['attention-variants', 'MHA, GQA, MQA, CLA, MLA', 'MHA、GQA、MQA、CLA、MLA'], ['positions', 'Positions: RoPE, ALiBi…', '位置：RoPE、ALiBi…'], ['norms', 'Where the norm goes', '归一化放在哪里'], ['ffn-moe', 'FFN and mixture of experts', 'FFN 与混合专家'], ['sparse-attention', 'Sparse attention', '稀疏注意力'], ['linear-attention', 'Linear attention and SSMs', '线性注意力与 SSM']],
  8: [['real-bert', 'A real BERT', '真实的 BERT'], ['real-llm', 'A real small LLM', '真实的小型 LLM']],
};

/** The curriculum's labs of chapter n that `served` (a Set of lab ids) lacks: [{id, en, zh}]. */
export function comingIn(n, served) {
  return (CURRICULUM[n] || []).filter(([id]) => !served.has(id)).map(([id, en, zh]) => ({ id, en, zh }));
}
